"""DocAtlas's own icon, for the application and the About dialog (no other GUI import here)."""

from __future__ import annotations

from PySide6.QtGui import QIcon

from docatlas.core.base.resources import resource_dir

ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def app_icon() -> QIcon:
    """DocAtlas's icon at every size it ships (resources/icons/docatlas-<N>.png)."""
    icon = QIcon()
    folder = resource_dir("icons")
    for size in ICON_SIZES:
        icon.addFile(str(folder / f"docatlas-{size}.png"))
    return icon
