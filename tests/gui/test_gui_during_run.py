"""During a run: a question asked in the chat answers at once and says what it rests on (the graph
of the documents the model has read so far, the text of all of them); the Graph tab shows the
names found in the text of the documents not read yet apart, as rings with dashed links.

Real window, real SQLite, real HTTP to FakeOllama; the extraction of one file is held until the
test lets it go, so the run is surely still going on when the question is asked and answered.
"""

from __future__ import annotations

import threading

from chat_script import GuiResponder
from docatlas.core.storage.database import Store
from docatlas.core.storage.document_list import reading_progress
from fixtures.scripted_model import passage_of
from gui_helpers import wait_idle
from PySide6.QtCore import QPointF, Qt
from test_gui_hidden_tabs import click_tab

HELD = "Tomas Berg"  # a name only gamma.txt's chunk has at its start
WAIT_MS = 60_000


class HeldResponder(GuiResponder):
    """The GUI's scripted model; the extraction calls of one file wait until `release` is set."""

    def __init__(self, marker: str = "Jonas Weber and Tomas") -> None:
        super().__init__()
        self.marker = marker  # the start of the held chunk
        self.release = threading.Event()
        self.holding = threading.Event()

    def __call__(self, request: dict) -> str:
        messages = request.get("messages") or []
        first = str(messages[0].get("content") or "") if messages else ""
        if not isinstance(request.get("format"), dict) and "Passage:\n" in first \
                and passage_of(first).startswith(self.marker):
            self.holding.set()
            self.release.wait(WAIT_MS / 1000)
        return super().__call__(request)


def test_a_question_during_a_run_answers_and_says_how_much_the_model_has_read(qtbot, make_window, corpus,
                                                                             server):
    held = server.responder = HeldResponder()
    try:
        window = make_window(parallel=2)  # the other files go on beside the held one
        window.documents_panel.add_paths([corpus])
        qtbot.waitUntil(held.holding.is_set, timeout=WAIT_MS)
        with Store(window.workspace.db_path) as store:
            qtbot.waitUntil(lambda: reading_progress(store) == (2, 3), timeout=WAIT_MS)
        assert window.ingestion.busy
        chat = window.chat_panel
        chat.question_edit.setPlainText("Who founded Harbor Analytics?")
        qtbot.mouseClick(chat.ask_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: chat.task is None, timeout=WAIT_MS)
        turn = chat.turns[-1]
        assert window.ingestion.busy  # answered while the run went on
        assert turn.turn.answer and not turn.turn.error
        note = turn.note_label.text()
        assert "The model has read 2 of 3 documents so far" in note, note
    finally:
        held.release.set()
    wait_idle(qtbot, window)
    chat.question_edit.setPlainText("Who founded Harbor Analytics?")
    qtbot.mouseClick(chat.ask_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: chat.task is None, timeout=WAIT_MS)
    assert "The model has read" not in chat.turns[-1].note_label.text()  # the graph covers every document now


def test_the_graph_tab_shows_the_names_the_model_has_not_read_apart(qtbot, make_window, corpus, server):
    (corpus / "zeta.txt").write_text("Zara Quill met Otto Brand in Kyoto. Otto Brand admired the Kyoto Garden Tower.",
                                     encoding="utf-8")
    held = server.responder = HeldResponder("Zara Quill")
    try:
        window = make_window(parallel=1)
        window.documents_panel.add_paths([corpus])
        qtbot.waitUntil(held.holding.is_set, timeout=WAIT_MS)
        with Store(window.workspace.db_path) as store:  # the batch merge has put the first files' records in
            qtbot.waitUntil(lambda: store.query("SELECT COUNT(*) AS n FROM entities WHERE layer = 'model'")[0]["n"]
                            > 0 and store.query("SELECT COUNT(*) AS n FROM entities WHERE key = 'zara quill'")[0]["n"],
                            timeout=WAIT_MS)
        explorer = window.graph_tab
        with qtbot.waitSignal(explorer.loaded, timeout=WAIT_MS):
            click_tab(qtbot, window, "Graph")
        model = explorer.model
        assert window.ingestion.busy
        assert model.concept_nodes[model.index["zara quill"]] and not model.concept_nodes[model.index["maria lopez"]]
        assert "not read yet (rings)" in explorer.status.text()
        qtbot.waitUntil(lambda: explorer.canvas.active_scene is not None, timeout=WAIT_MS)
        edges = [b for b in explorer.canvas.active_scene.batches if b.is_edge]
        assert any(b.dashed for b in edges) and any(not b.dashed for b in edges)  # the two layers drawn apart
    finally:
        held.release.set()
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: not explorer.model.concept_nodes.any() and "otto brand" in explorer.model.index,
                    timeout=WAIT_MS)  # the model has read the last file: the graph reloads without rings


def test_a_graph_that_grows_stays_fitted_while_the_person_has_not_moved_the_view(qtbot, make_window, corpus,
                                                                                server):
    held = server.responder = HeldResponder("Maria Lopez founded")
    try:
        window = make_window(parallel=1)
        window.documents_panel.add_paths([corpus / "alpha.txt"])
        qtbot.waitUntil(held.holding.is_set, timeout=WAIT_MS)
        explorer = window.graph_tab
        with Store(window.workspace.db_path) as store:  # the first file's names, found in its text
            qtbot.waitUntil(lambda: store.query("SELECT COUNT(*) AS n FROM entities")[0]["n"] >= 3, timeout=WAIT_MS)
        with qtbot.waitSignal(explorer.loaded, timeout=WAIT_MS):
            click_tab(qtbot, window, "Graph")
        first = explorer.model.size
    finally:
        held.release.set()
    wait_idle(qtbot, window)
    (corpus / "zeta.txt").write_text("Zara Quill met Otto Brand in Kyoto. Lena Park and Ravi Shah founded Blue Fern "
                                     "Studio in Oslo. Ines Moreau audits Blue Fern Studio.", encoding="utf-8")
    window.documents_panel.add_paths([corpus])  # the rest: the graph grows while the tab is shown
    qtbot.waitUntil(lambda: window.ingestion.busy, timeout=WAIT_MS)
    wait_idle(qtbot, window)
    with Store(window.workspace.db_path) as store:
        entities = store.counts()["entities"]
    qtbot.waitUntil(lambda: explorer.model.size == entities > first + 3, timeout=WAIT_MS)  # reloaded as it grew
    view = explorer.canvas.visible_rect()
    assert all(view.contains(QPointF(x, y)) for x, y in explorer.model.xy.tolist())  # every node in sight
