"""The Documents table is a model over a paged query: on 5,000 documents it reads a page, reads
more as the person scrolls, and sorts (a header click) and filters (the box) across every page."""

from __future__ import annotations

from docatlas.core.storage.database import Store
from docatlas.gui.models.documents_model import NAME, PAGE
from fixtures.big_workspace import fill_workspace
from gui_helpers import wait_read
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

DOCUMENTS = 5000


def names(window) -> list[str]:
    """The Name column as the table shows it, top to bottom."""
    model = window.documents_panel.table.model()
    return [model.index(r, NAME).data() for r in range(model.rowCount())]


def click_header(qtbot, window, column: int) -> None:
    """Click a column's header, as a person sorts the table."""
    header = window.documents_panel.table.horizontalHeader()
    x = header.sectionViewportPosition(column) + header.sectionSize(column) // 2
    QTest.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))
    wait_read(qtbot, window)


def test_the_table_reads_pages_as_it_is_scrolled(qtbot, make_window, workspace_dir):
    with Store(workspace_dir / "docatlas.sqlite") as store:
        fill_workspace(store, DOCUMENTS, per_document=1)
    window = make_window()
    window.resize(1280, 720)
    window.show()
    wait_read(qtbot, window)
    panel = window.documents_panel
    assert len(names(window)) == PAGE < DOCUMENTS  # a page, not the workspace
    assert panel.model.total == DOCUMENTS and window.workspace.counts.documents == DOCUMENTS

    bar = panel.table.verticalScrollBar()
    for _ in range(2):
        shown = len(names(window))
        bar.setValue(bar.maximum())  # the person drags the scroll bar to the bottom
        qtbot.waitUntil(lambda shown=shown: len(names(window)) > shown, timeout=10_000)
        wait_read(qtbot, window)
    shown = names(window)
    assert len(shown) == 3 * PAGE < DOCUMENTS
    assert shown == [f"doc-{n:05d}.txt" for n in range(1, 3 * PAGE + 1)]  # pages joined, no gap, no repeat


def test_a_header_click_sorts_across_pages_and_the_filter_box_searches_them_all(qtbot, make_window,
                                                                                 workspace_dir):
    with Store(workspace_dir / "docatlas.sqlite") as store:
        fill_workspace(store, DOCUMENTS, per_document=1)
    window = make_window()
    window.resize(1280, 720)
    window.show()
    wait_read(qtbot, window)
    panel = window.documents_panel
    header = panel.table.horizontalHeader()

    click_header(qtbot, window, NAME)
    if header.sortIndicatorOrder() == Qt.SortOrder.AscendingOrder:
        click_header(qtbot, window, NAME)
    assert header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
    assert names(window)[:3] == ["doc-05000.txt", "doc-04999.txt", "doc-04998.txt"]  # not in the first page read
    assert len(names(window)) == PAGE

    panel.table.selectRow(1)
    assert panel.selected_ids() == [4999]
    click_header(qtbot, window, NAME)  # ascending again: the selected document is no longer among the rows read
    assert names(window)[:2] == ["doc-00001.txt", "doc-00002.txt"] and panel.selected_ids() == []

    QTest.keyClicks(panel.search_box, "DOC-0432")
    qtbot.waitUntil(lambda: len(names(window)) == 10, timeout=10_000)
    wait_read(qtbot, window)
    assert names(window) == [f"doc-{n:05d}.txt" for n in range(4320, 4330)]
    assert not panel.empty_hint.isVisible()
    panel.search_box.clear()
    qtbot.waitUntil(lambda: len(names(window)) == PAGE, timeout=10_000)
