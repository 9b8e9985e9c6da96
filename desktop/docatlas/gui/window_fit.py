"""Keep the window on the screen it opens on: sized to the available area, never larger.

A laptop at 1366x768 (or 1280x720) must see every control: the window opens at its preferred
size or the screen's available size, whichever is smaller, and a remembered geometry from a
bigger monitor is shrunk and moved back inside.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

PREFERRED = QSize(1280, 800)


def available_area(window: QWidget) -> QRect:
    """The part of the window's screen not taken by panels and docks of the desktop."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry()


def fit_to_screen(window: QWidget, preferred: QSize = PREFERRED) -> None:
    """Size `window` to `preferred`, or to its screen's available area when that is smaller."""
    area = available_area(window)
    window.resize(min(preferred.width(), area.width()), min(preferred.height(), area.height()))


def keep_on_screen(window: QWidget) -> None:
    """Shrink and move `window` (e.g. after restoreGeometry) so that it lies within the available area."""
    area = available_area(window)
    frame = window.frameGeometry()
    extra_w, extra_h = frame.width() - window.width(), frame.height() - window.height()
    width = min(window.width(), area.width() - extra_w)
    height = min(window.height(), area.height() - extra_h)
    if (width, height) != (window.width(), window.height()):
        window.resize(width, height)
    frame = window.frameGeometry()
    x = min(max(frame.x(), area.x()), area.right() - frame.width() + 1)
    y = min(max(frame.y(), area.y()), area.bottom() - frame.height() + 1)
    if (x, y) != (frame.x(), frame.y()):
        window.move(x, y)
