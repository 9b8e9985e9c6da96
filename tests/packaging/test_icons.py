"""The app icon: an SVG, PNGs at every size (what the .deb, the window and the About dialog use),
the Windows .ico and the macOS .icns; all rendered from the SVGs by packaging/icons/make_icons.py."""

from __future__ import annotations

import fnmatch
import struct
import tomllib

import pytest
from packaging_helpers import ICONS, PACKAGING, REPO, RESOURCES, load, png_header
from PySide6.QtCore import QSize
from PySide6.QtGui import QImage
from PySide6.QtSvg import QSvgRenderer

SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


@pytest.mark.parametrize("size", SIZES)
def test_png_at_every_size(size):
    width, height, colour_type = png_header(ICONS / f"docatlas-{size}.png")
    assert (width, height) == (size, size)
    assert colour_type == 6, "RGBA: the rounded corners are transparent"


@pytest.mark.parametrize("name", ["docatlas.svg", "docatlas-small.svg"])
def test_svgs_are_valid_and_square(name):
    renderer = QSvgRenderer(str(ICONS / name))
    assert renderer.isValid()
    box = renderer.viewBoxF()
    assert box.width() == box.height() > 0


def test_pngs_are_rendered_from_the_current_svgs(qapp):
    """Run packaging/icons/make_icons.py after changing an SVG; this says when it was forgotten."""
    make_icons = load(PACKAGING / "icons" / "make_icons.py", "docatlas_make_icons")
    for size in (16, 48, 256):
        fresh = QImage.fromData(make_icons.render(size)).convertToFormat(QImage.Format.Format_ARGB32)
        stored = QImage(str(ICONS / f"docatlas-{size}.png")).convertToFormat(QImage.Format.Format_ARGB32)
        assert fresh.size() == stored.size() == QSize(size, size)
        a, b = fresh.constBits().tobytes(), stored.constBits().tobytes()
        mean_difference = sum(abs(x - y) for x, y in zip(a, b)) / len(a)
        assert mean_difference < 3, f"docatlas-{size}.png differs from its SVG; run packaging/icons/make_icons.py"


def test_windows_ico_holds_16_to_256():
    data = (ICONS / "docatlas.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    assert (reserved, kind) == (0, 1)
    sizes = set()
    for index in range(count):
        width, _, _, _, _, _, length, offset = struct.unpack("<BBBBHHII", data[6 + 16 * index:22 + 16 * index])
        assert data[offset:offset + 8] == b"\x89PNG\r\n\x1a\n" and offset + length <= len(data)
        sizes.add(width or 256)
    assert sizes == {16, 24, 32, 48, 64, 128, 256}


def test_macos_icns_holds_16_to_1024():
    data = (ICONS / "docatlas.icns").read_bytes()
    assert data[:4] == b"icns" and struct.unpack(">I", data[4:8])[0] == len(data)
    kinds, position = set(), 8
    while position < len(data):
        kind = data[position:position + 4].decode("ascii")
        (length,) = struct.unpack(">I", data[position + 4:position + 8])
        assert data[position + 8:position + 16] == b"\x89PNG\r\n\x1a\n"
        kinds.add(kind)
        position += length
    assert position == len(data)
    assert {"icp4", "icp5", "icp6", "ic07", "ic08", "ic09", "ic10"} <= kinds


def test_icons_ship_in_the_wheel():
    """pyproject's package-data takes every icon file (pip installs get the window icon too)."""
    globs = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"]["docatlas.resources"]
    for path in ICONS.iterdir():
        relative = str(path.relative_to(RESOURCES)).replace("\\", "/")
        assert any(fnmatch.fnmatch(relative, glob) for glob in globs), f"{relative} is not in package-data"


def test_window_icon_has_every_size(qapp):
    from docatlas.gui.app import ICON_SIZES, app_icon

    assert ICON_SIZES == SIZES
    icon = app_icon()
    assert not icon.isNull()
    assert {s.width() for s in icon.availableSizes()} == set(SIZES)
