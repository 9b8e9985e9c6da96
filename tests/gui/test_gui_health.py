"""Extraction health in the window: the Documents tab's health mark, and the review list of
ungrounded records (Documents > Review Ungrounded Records…) whose Add to Graph button keeps one."""

from __future__ import annotations

from core.helpers import DOCUMENTS
from docatlas.core.storage.database import Store
from docatlas.gui.models.documents_model import ENTITIES, HEALTH_MARK, NAME
from docatlas.gui.views.ungrounded import UngroundedReview
from fixtures.scripted_model import invented_responder
from gui_helpers import wait_idle, wait_read
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtTest import QTest


def menu_action(window, menu_title: str, text: str):
    menu = next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == menu_title)
    return next(a for a in menu.actions() if a.text().replace("&", "") == text)


def shown_text(tooltip: str) -> str:
    """What a person reads in a tooltip (tooltips are escaped rich text)."""
    document = QTextDocument()
    document.setHtml(tooltip)
    return document.toPlainText()


def cell(model, row: int, column: int, role=Qt.ItemDataRole.DisplayRole):
    return model.index(row, column).data(role)


def test_documents_whose_chunks_gave_nothing_carry_a_mark_with_the_reason(qtbot, make_window, corpus, server):
    server.responder = lambda request: "Sorry, there are no entities in this text."
    window = make_window()
    window.documents_panel.add_paths([corpus])
    wait_idle(qtbot, window)
    wait_read(qtbot, window)
    model = window.documents_panel.model
    qtbot.waitUntil(lambda: model.rowCount() == len(DOCUMENTS)
                    and all(HEALTH_MARK in cell(model, r, ENTITIES) for r in range(model.rowCount())), timeout=15000)
    for row in range(model.rowCount()):
        assert cell(model, row, ENTITIES) == f"0 {HEALTH_MARK}"
        tip = shown_text(cell(model, row, ENTITIES, Qt.ItemDataRole.ToolTipRole))
        assert tip.startswith("1 of 1 chunks gave no entity found in the text") and "typing profile" in tip


def test_a_healthy_document_has_no_mark(qtbot, make_window, corpus):
    window = make_window()
    window.documents_panel.add_paths([corpus / "alpha.txt"])
    wait_idle(qtbot, window)
    wait_read(qtbot, window)
    model = window.documents_panel.model
    qtbot.waitUntil(lambda: model.rowCount() == 1 and cell(model, 0, ENTITIES) not in (None, "0"), timeout=15000)
    assert HEALTH_MARK not in cell(model, 0, ENTITIES)
    assert cell(model, 0, ENTITIES, Qt.ItemDataRole.ToolTipRole) is None


def test_the_review_list_shows_held_back_records_and_add_to_graph_keeps_one(qtbot, make_window, corpus, server):
    server.responder = invented_responder("Felix Mexopolar")
    window = make_window()
    window.documents_panel.add_paths([corpus / "alpha.txt"])
    wait_idle(qtbot, window)
    menu_action(window, "Documents", "Review Ungrounded Records…").trigger()
    review = window.findChild(UngroundedReview)
    assert review is not None and review.isVisible()
    qtbot.waitUntil(lambda: review.table.rowCount() == 2, timeout=15000)
    assert "2 records name things their text does not contain" in review.summary.text()
    shown = {review.table.item(r, 0).text(): review.table.item(r, 1).text() for r in range(2)}
    assert shown["Felix Mexopolar (person)"] == "not in the text"
    assert review.table.item(0, 2).text() == "alpha.txt"
    assert not review.accept_button.isEnabled()  # nothing selected yet

    row = next(r for r in range(2) if review.table.item(r, 0).text() == "Felix Mexopolar (person)")
    rect = review.table.visualItemRect(review.table.item(row, 0))
    QTest.mouseClick(review.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert review.accept_button.isEnabled()
    QTest.mouseClick(review.accept_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: review.table.rowCount() == 1, timeout=15000)
    assert review.table.item(0, 0).text().startswith("Felix Mexopolar →")
    assert "1 records name things" in review.summary.text()
    with Store(window.workspace.db_path) as store:
        assert store.query("SELECT name FROM entities WHERE key = 'felix mexopolar'") == [
            {"name": "Felix Mexopolar"}]
    assert cell(window.documents_panel.model, 0, NAME) == "alpha.txt"


def test_a_run_that_mostly_gave_nothing_says_so_when_it_ends(qtbot, make_window, corpus, server):
    server.responder = lambda request: "Sorry, there are no entities in this text."
    window = make_window()
    window.documents_panel.add_paths([corpus])
    wait_idle(qtbot, window)
    notice = window.documents_panel.notice.text()
    assert notice.startswith("Done: 3 documents, 3 chunks extracted.")
    assert "3 of 3 chunks gave no entity: the model may be too small or the profile unsuited" in notice
