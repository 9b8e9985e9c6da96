"""Small helpers shared by the GUI tests."""

from __future__ import annotations

from docatlas.gui.main_window import MainWindow


def wait_idle(qtbot, window: MainWindow, timeout: int = 20_000) -> None:
    """Wait until no ingestion (or deletion) is running and the table shows the store."""
    qtbot.waitUntil(lambda: not window.ingestion.busy, timeout=timeout)
    window.documents_panel.refresh()
    wait_read(qtbot, window, timeout)


def wait_read(qtbot, window: MainWindow, timeout: int = 20_000) -> None:
    """Wait until the documents panel's background read has landed."""
    qtbot.waitUntil(lambda: not window.documents_panel.reading, timeout=timeout)


def statuses(window: MainWindow) -> dict[str, str]:
    """File name -> Status column text."""
    from docatlas.gui.models.documents_model import NAME, STATUS

    model = window.documents_panel.model
    return {model.index(r, NAME).data(): model.index(r, STATUS).data() for r in range(model.rowCount())}
