"""What every screenshot script needs: wait for the window, let it settle, save a grab here."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QWidget

HERE = Path(__file__).resolve().parent


def wait_until(condition, timeout_s: float = 60.0) -> None:
    """Run the event loop until `condition()` holds."""
    loop = QEventLoop()
    waited = 0
    while not condition():
        QTimer.singleShot(20, loop.quit)
        loop.exec()
        waited += 20
        if waited > timeout_s * 1000:
            raise TimeoutError("the window did not get there in time")


def settle(ms: int = 300) -> None:
    """Let layouts and repaints happen."""
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def save(widget: QWidget, name: str) -> None:
    """Grab a widget into docs/screenshots/<name>.png."""
    settle()
    widget.grab().save(str(HERE / f"{name}.png"))
    print(HERE / f"{name}.png")
