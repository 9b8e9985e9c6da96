"""Email, decks and workbooks added from the window: the person clicks Add Files…, sees the
message and its attachment as rows with who sent them and when, filters by an author's name,
and reads the headers in the preview; the layout holds at 1366x768 and 1280x720."""

from __future__ import annotations

from pathlib import Path

import pytest
from docatlas.gui.models.documents_model import AUTHOR, DATE, NAME
from fixtures.make_formats import make_eml, make_pptx, make_xlsx
from gui_helpers import statuses, wait_idle, wait_read
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest


def shown_rows(panel) -> dict[str, tuple[str, str]]:
    """What the table shows after the filter: name -> (author / from, date)."""
    proxy = panel.model
    return {proxy.index(r, NAME).data(): (proxy.index(r, AUTHOR).data(), proxy.index(r, DATE).data())
            for r in range(proxy.rowCount())}


@pytest.mark.parametrize("size", [(1366, 768), (1280, 720)])
def test_mail_and_office_files_from_add_files(qtbot, make_window, tmp_path: Path, size) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    files = [make_eml(docs / "figures.eml", tmp_path),
             make_pptx(docs / "fleet.pptx", ["Grace Hopper presented the Aurora Survey."]),
             make_xlsx(docs / "staff.xlsx", [["Name", "Employer"], ["Ada Lovelace", "Harbor Analytics"]])]
    window = make_window()
    window.resize(*size)
    panel = window.documents_panel
    window.interaction.choose_files = lambda: files
    qtbot.mouseClick(panel.add_files_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)

    assert statuses(window) == {name: "done" for name in (
        "figures.eml", "figures.eml#attachment-1-report.docx", "fleet.pptx", "staff.xlsx")}
    rows = shown_rows(panel)
    assert rows["figures.eml"] == ("Ada Lovelace <ada@analytical.example>", "2026-03-02 10:15:00")
    assert rows["fleet.pptx"][0] == "Grace Hopper" and rows["staff.xlsx"][0] == "Ada Lovelace"

    panel.search_box.setFocus()
    QTest.keyClicks(panel.search_box, "grace")  # an author's name, not a file name
    wait_read(qtbot, window)  # the filter runs in SQL, off the GUI thread
    assert set(shown_rows(panel)) == {"fleet.pptx"}
    panel.search_box.clear()
    QTest.keyClicks(panel.search_box, "charles@engines")  # the message's To, and its attachment's link
    wait_read(qtbot, window)
    assert set(shown_rows(panel)) == {"figures.eml"}
    panel.search_box.clear()
    wait_read(qtbot, window)

    row = next(r for r in range(panel.model.rowCount()) if panel.model.index(r, NAME).data() == "figures.eml")
    panel.table.scrollTo(panel.model.index(row, NAME))
    cell = panel.table.visualRect(panel.model.index(row, NAME)).center()
    QTest.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=cell)
    qtbot.waitUntil(lambda: "subject: Quarterly figures" in panel.preview.toPlainText(), timeout=10_000)
    preview = panel.preview.toPlainText()
    assert "from: Ada Lovelace <ada@analytical.example>" in preview
    assert "Ada met Charles at the Harbor Analytics office in Lisbon." in preview

    for widget in (panel.search_box, panel.add_files_button, panel.table):
        top_left = widget.mapTo(window, widget.rect().topLeft())
        assert widget.isVisible() and top_left.x() >= 0 and top_left.y() >= 0
        assert top_left.x() + widget.width() <= window.width() and top_left.y() + widget.height() <= window.height()
