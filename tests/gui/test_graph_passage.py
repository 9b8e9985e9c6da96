"""A passage opened from the graph's details panel highlights the sentence quoted there and
marks the entity's mentions, like a chat reference (not the whole chunk)."""

from __future__ import annotations

from docatlas.gui.views.passage_viewer import MENTION
from gui_helpers import wait_idle
from PySide6.QtCore import Qt


def test_a_source_clicked_in_the_graph_opens_at_its_quoted_sentence(qtbot, make_window, corpus):
    window = make_window()
    window.documents_panel.add_paths([corpus])
    wait_idle(qtbot, window)
    window.actions_by_name["tab_graph"].trigger()
    explorer = window.graph_tab
    qtbot.waitUntil(lambda: explorer.model is not None and explorer.model.size > 0, timeout=20_000)
    with qtbot.waitSignal(explorer.selectionChanged, timeout=20_000):
        explorer.select_keys(["jonas weber"])
    passages = explorer.panel.passages
    qtbot.waitUntil(lambda: passages.count() > 0, timeout=20_000)
    quote = passages.item(0).text().splitlines()[1].strip()[1:-1]
    assert "Jonas Weber" in quote
    rect = passages.visualItemRect(passages.item(0))
    qtbot.mouseClick(passages.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    chat = window.chat_panel
    qtbot.waitUntil(lambda: chat.viewer is not None and chat.viewer.isVisible(), timeout=20_000)
    viewer = chat.viewer
    assert " ".join(viewer.highlighted_text().split()) == quote  # the sentence, not the whole chunk
    marked = [s.cursor.selectedText() for s in viewer.text_view.extraSelections()
              if s.format.background().color() == MENTION]
    assert marked and all(m == "Jonas Weber" for m in marked)
    assert "the cited sentence highlighted" in viewer.where_label.text()
    viewer.close()
