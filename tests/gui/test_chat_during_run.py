"""A question asked in the chat while a run is still reading answers at once, and says what it
rests on: the graph of the documents the model has read so far, the text of all of them.

Real window, real SQLite, real HTTP to FakeOllama; the extraction of one file is held until the
test lets it go, so the run is surely still going on when the question is asked and answered.
"""

from __future__ import annotations

import threading

from chat_script import GuiResponder
from fixtures.scripted_model import passage_of
from gui_helpers import wait_idle
from PySide6.QtCore import Qt

HELD = "Tomas Berg"  # a name only gamma.txt's chunk has at its start
WAIT_MS = 60_000


class HeldResponder(GuiResponder):
    """The GUI's scripted model; the extraction calls of one file wait until `release` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.holding = threading.Event()

    def __call__(self, request: dict) -> str:
        messages = request.get("messages") or []
        first = str(messages[0].get("content") or "") if messages else ""
        if not isinstance(request.get("format"), dict) and passage_of(first).startswith("Jonas Weber and Tomas"):
            self.holding.set()
            self.release.wait(WAIT_MS / 1000)
        return super().__call__(request)


def test_a_question_during_a_run_answers_and_says_how_much_the_model_has_read(qtbot, make_window, corpus,
                                                                             server):
    held = server.responder = HeldResponder()
    try:
        window = make_window(parallel=1)
        window.documents_panel.add_paths([corpus])
        qtbot.waitUntil(held.holding.is_set, timeout=WAIT_MS)
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
