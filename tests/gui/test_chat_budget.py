"""The chat's reading budget, during a run: the question shows its calls being spent, can stop reading,
answers, and says what it rests on; the run then asks the model nothing the question already asked.

Real window at 1366x768, real SQLite, real HTTP to FakeOllama. The run (one call at a time) is held
on aaa.txt's chunk, so it is surely going on (and holds the workspace) when the question is asked, and
every other extraction call the server sees from then on is the question's: the first of them is
held too, until the test has seen the progress line. The run may take its files in either order (it
may have read alpha.txt before aaa.txt), so nothing here depends on which chunk the question reads.
"""

from __future__ import annotations

import threading
from collections import Counter

from docatlas.core.jobs.budgeted import RUN_HOLDS
from docatlas.core.storage.database import Store
from fixtures.scripted_model import passage_of
from gui_helpers import wait_idle
from PySide6.QtCore import Qt
from test_gui_during_run import WAIT_MS, HeldResponder

RUN_HELD = "Zara Quill"  # aaa.txt's chunk starts so


class QuestionHeld(HeldResponder):
    """The run is held on aaa.txt; once `hold_question` is set, the first extraction call of another
    chunk (the question's: the run has its one slot on aaa.txt) is held until `question_release`."""

    def __init__(self) -> None:
        super().__init__(RUN_HELD)
        self.hold_question = threading.Event()
        self.question_holding = threading.Event()
        self.question_release = threading.Event()
        self.first_passes: Counter[str] = Counter()  # a chunk's opening -> first-pass calls for it
        self.counting = threading.Lock()

    def __call__(self, request: dict) -> str:
        messages = request.get("messages") or []
        first = str(messages[0].get("content") or "") if messages else ""
        if not isinstance(request.get("format"), dict) and "Passage:\n" in first:
            opening = passage_of(first)[:30]
            with self.counting:
                if len(messages) == 1:
                    self.first_passes[opening] += 1
                hold = (self.hold_question.is_set() and not opening.startswith(RUN_HELD)
                        and not self.question_holding.is_set())
                if hold:
                    self.question_holding.set()
            if hold:
                self.question_release.wait(WAIT_MS / 1000)
        return super().__call__(request)


def choose_budget(qtbot, chat, text: str) -> None:
    """Pick a budget as a person does: focus the box, step with the arrow keys."""
    box = chat.budget_box
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton)
    qtbot.keyClick(box.view(), Qt.Key.Key_Escape)  # close the popup the click opened
    for _ in range(box.count()):
        if box.currentText() == text:
            return
        qtbot.keyClick(box, Qt.Key.Key_Down)
    assert box.currentText() == text


def running_window(qtbot, make_window, corpus, held: QuestionHeld):
    """A window whose run holds its first file while the other files wait, stored but unread."""
    # first in document order, and the most names the graph lacks (a run's order may take either)
    (corpus / "aaa.txt").write_text("Zara Quill met Otto Brand, Lena Park, Ravi Shah, Ines Moreau, Kai Lund and "
                                    "Mira Holt in Kyoto near Osaka Bay.", encoding="utf-8")
    window = make_window(parallel=1)
    window.resize(1366, 768)
    # aaa.txt named first, so it is stored first and the run's first call is its chunk (a folder's walk
    # order is the file system's), then the folder (aaa.txt in it is the same file: not added twice)
    window.documents_panel.add_paths([corpus / "aaa.txt", corpus])
    qtbot.waitUntil(held.holding.is_set, timeout=WAIT_MS)
    with Store(window.workspace.db_path) as store:
        qtbot.waitUntil(lambda: store.counts()["chunks"] == 4, timeout=WAIT_MS)
    assert window.ingestion.busy
    return window


def test_a_question_during_a_run_spends_its_budget_answers_and_says_what_it_rests_on(qtbot, make_window, corpus,
                                                                                    server):
    held = server.responder = QuestionHeld()
    try:
        window = running_window(qtbot, make_window, corpus, held)
        held.hold_question.set()  # only now: the run's calls before aaa.txt's are not the question's
        chat = window.chat_panel
        choose_budget(qtbot, chat, "50 calls")
        chat.question_edit.setPlainText("Who founded Harbor Analytics?")
        qtbot.mouseClick(chat.ask_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(held.question_holding.is_set, timeout=WAIT_MS)
        qtbot.waitUntil(lambda: chat.reading_label.isVisible(), timeout=WAIT_MS)
        spent = chat.reading_label.text()
        assert spent.startswith("Reading for this question: ") and "of 50 model calls spent" in spent, spent
        assert chat.stop_reading_button.isVisible() and chat.stop_reading_button.isEnabled()
        held.question_release.set()
        qtbot.waitUntil(lambda: chat.task is None, timeout=WAIT_MS)
        turn = chat.turns[-1]
        assert window.ingestion.busy  # answered while the run went on
        assert turn.turn.answer and not turn.turn.error and not chat.reading_label.isVisible()
        note = turn.note_label.text()
        assert "Rests on: " in note and "what the model read for this question" in note, note
        assert RUN_HOLDS in note and "for this question" in note
    finally:
        held.question_release.set()
        held.release.set()
    wait_idle(qtbot, window)
    assert held.first_passes and set(held.first_passes.values()) == {1}  # no chunk asked twice, whoever asked first
    with Store(window.workspace.db_path) as store:
        assert store.counts()["chunks_done"] == 4


def test_stop_reading_answers_from_what_was_read_so_far(qtbot, make_window, corpus, server):
    held = server.responder = QuestionHeld()
    try:
        window = running_window(qtbot, make_window, corpus, held)
        held.hold_question.set()  # only now: the run's calls before aaa.txt's are not the question's
        chat = window.chat_panel
        choose_budget(qtbot, chat, "10 calls")
        chat.question_edit.setPlainText("Who founded Harbor Analytics?")
        qtbot.mouseClick(chat.ask_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(held.question_holding.is_set, timeout=WAIT_MS)
        qtbot.waitUntil(lambda: chat.stop_reading_button.isVisible(), timeout=WAIT_MS)
        assert "of 10 model calls spent" in chat.reading_label.text()
        qtbot.mouseClick(chat.stop_reading_button, Qt.MouseButton.LeftButton)
        assert "answering from what was read" in chat.reading_label.text()
        qtbot.waitUntil(lambda: chat.task is None, timeout=WAIT_MS)
        turn = chat.turns[-1]
        assert turn.turn.answer and not turn.turn.error and not turn.turn.stopped
        note = turn.note_label.text()
        assert "stopped" in note and "Rests on: " in note, note
    finally:
        held.question_release.set()
        held.release.set()
    wait_idle(qtbot, window)
