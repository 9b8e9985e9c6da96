"""Render DocAtlas's icon files from its two SVGs with Qt's QSvgRenderer.

    QT_QPA_PLATFORM=offscreen python packaging/icons/make_icons.py

Writes into resources/icons/ (the repository's top level): docatlas-<N>.png for every size in SIZES
(16-32 px from docatlas-small.svg, a simpler drawing that stays legible; larger ones from
docatlas.svg), docatlas.ico (Windows: 16-256 px, PNG entries) and docatlas.icns (macOS:
16-1024 px, PNG entries). The results are committed; run this again after changing an SVG.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ICONS = Path(__file__).resolve().parents[2] / "resources" / "icons"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
SMALL_UP_TO = 32
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# ICNS element types holding PNG data, by pixel size (the @2x types reuse a larger rendering).
ICNS_TYPES = (("icp4", 16), ("icp5", 32), ("icp6", 64), ("ic07", 128), ("ic08", 256), ("ic09", 512),
              ("ic10", 1024), ("ic11", 32), ("ic12", 64), ("ic13", 256), ("ic14", 512))


def render(size: int) -> bytes:
    """PNG bytes of the icon at `size` x `size` pixels."""
    source = ICONS / ("docatlas-small.svg" if size <= SMALL_UP_TO else "docatlas.svg")
    renderer = QSvgRenderer(str(source))
    if not renderer.isValid():
        raise SystemExit(f"{source} is not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.convertToFormat(QImage.Format.Format_ARGB32).save(buffer, "PNG")
    buffer.close()
    return bytes(data.data())


def ico(pngs: dict[int, bytes]) -> bytes:
    """A Windows .ico holding PNG images (read by Windows Vista and later)."""
    header = struct.pack("<HHH", 0, 1, len(pngs))
    offset = len(header) + 16 * len(pngs)
    entries, blobs = b"", b""
    for size, png in sorted(pngs.items()):
        dim = 0 if size >= 256 else size  # 0 means 256
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(png), offset)
        blobs += png
        offset += len(png)
    return header + entries + blobs


def icns(pngs: dict[int, bytes]) -> bytes:
    """A macOS .icns holding PNG images."""
    body = b"".join(kind.encode("ascii") + struct.pack(">I", 8 + len(pngs[size])) + pngs[size]
                    for kind, size in ICNS_TYPES)
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main() -> int:
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    pngs = {size: render(size) for size in sorted({*SIZES, *ICO_SIZES, *(s for _, s in ICNS_TYPES)})}
    for size in SIZES:
        (ICONS / f"docatlas-{size}.png").write_bytes(pngs[size])
    (ICONS / "docatlas.ico").write_bytes(ico({s: pngs[s] for s in ICO_SIZES}))
    (ICONS / "docatlas.icns").write_bytes(icns(pngs))
    print(f"wrote {len(SIZES)} PNGs, docatlas.ico and docatlas.icns into {ICONS}")
    del app
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):  # say what it does; write nothing
        print(__doc__.strip())
        sys.exit(0)
    sys.exit(main())
