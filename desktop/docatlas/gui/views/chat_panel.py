"""The chat: ask a question in a mode, watch the answer stream in, open its references.

Conversations are kept per workspace (see `conversations.py`); the model sees the earlier
turns of the current conversation. Links in answers do nothing until clicked, and then
open only after the person confirms. Beside the mode, "Read first" lets a question spend model
calls reading the passages it needs that the model has not read yet (`core.jobs.budgeted`: off,
10, 50 or 200 calls); while it reads, a line above the question box says how much is spent and
Stop Reading has the answer made from what was read so far. Every answer says what it rests on.
"""

from __future__ import annotations

import logging
import threading

from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from docatlas.core.base.errors import ModelNotFound, OllamaUnreachable
from docatlas.core.base.progress import Progress
from docatlas.core.retrieval.answer import Answer
from docatlas.core.storage.communities import has_reports
from docatlas.core.storage.read_models import Passage, passage
from docatlas.gui.conversations import Turn, slim_reference
from docatlas.gui.dialogs.interaction import Interaction
from docatlas.gui.jobs import ask_job
from docatlas.gui.tasks import BackgroundTask, TaskFailure, TaskRunner
from docatlas.gui.views.chat_models import ChatModelBox
from docatlas.gui.views.chat_turn import TurnWidget, plain_sentence
from docatlas.gui.views.passage_viewer import PassageViewer
from docatlas.gui.workspace import READ_PASSAGE, READ_REPORTS, Workspace

log = logging.getLogger("docatlas.gui.chat")

CHAT_MODES = ("mix", "hybrid", "local", "global", "naive")
COMMUNITY = "community"  # offered once community reports exist
MODE_HELP = {
    "mix": "mix: the graph and similar passages together (recommended)",
    "hybrid": "hybrid: entities and relations around the question, from the graph",
    "local": "local: the entities named in the question and their neighbours",
    "global": "global: relations and themes across all the documents",
    "naive": "naive: similar passages only, no graph",
    COMMUNITY: "community: the topic reports written for groups of related entities (broad questions)",
}
BUDGETS = (0, 10, 50, 200)  # model calls a question may spend reading first (0: off)
BUDGET_HELP = ("Model calls this question may spend first reading the passages it needs that the model has "
               "not read yet; what it reads joins the graph (or, during a run, waits in the cache for it).")
EMPTY_WORKSPACE = "Add documents first: this workspace has none yet (Add Files… on the Documents tab, or drop them)."
WEB_SCHEMES = ("http", "https", "mailto")
EMPTY_HINT = ("Ask a question about the documents in this workspace. Answers come from your documents only "
              "and list their references; click one to read the passage it came from.")


class ChatPanel(QWidget):
    """Question box, mode, streamed answers with references, history, new chat, stop."""

    message = Signal(str)  # a sentence for the status bar
    ollama_needed = Signal(str)  # Ollama unreachable or a model missing

    def __init__(self, tasks: TaskRunner, workspace: Workspace, settings, interaction: Interaction,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.tasks = tasks
        self.workspace = workspace
        self.settings = settings  # callable returning the current Settings
        self.interaction = interaction
        self.task: BackgroundTask | None = None
        self.current_turn: TurnWidget | None = None
        self.viewer: PassageViewer | None = None
        self._build()
        self.show_conversation()

    # -- layout ------------------------------------------------------------------------
    def _build(self) -> None:
        self.history_box = QComboBox()
        self.history_box.setToolTip("Earlier conversations in this workspace")
        self.history_box.activated.connect(self._switch_conversation)
        self.new_chat_button = QPushButton("New Chat", clicked=self.new_chat)
        self.model_box = ChatModelBox(self.settings)
        self.model_box.message.connect(self.message)
        top = QHBoxLayout()
        top.addWidget(QLabel("Conversation:"))
        top.addWidget(self.history_box, 1)
        top.addWidget(self.new_chat_button)
        self.evaluate_button = QPushButton("Evaluate…", clicked=self.open_evaluation)
        self.evaluate_button.setToolTip("Run a saved question set in every mode and compare the answers")
        top.addWidget(self.evaluate_button)
        model_row = QHBoxLayout()
        model_row.addWidget(QLabel("Model:"))
        model_row.addWidget(self.model_box, 1)

        self.transcript = QWidget()
        self.transcript_layout = QVBoxLayout(self.transcript)
        self.empty_hint = QLabel(EMPTY_HINT, wordWrap=True, alignment=Qt.AlignmentFlag.AlignCenter)
        self.empty_hint.setEnabled(False)
        self.transcript_layout.addWidget(self.empty_hint)
        self.transcript_layout.addStretch(1)
        self.scroll = QScrollArea(widgetResizable=True)
        self.scroll.setWidget(self.transcript)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll.verticalScrollBar().rangeChanged.connect(self._follow)

        self.question_edit = QPlainTextEdit()
        self.question_edit.setPlaceholderText("Ask about your documents… (Ctrl+Enter to send)")
        self.question_edit.setFixedHeight(72)
        self.mode_box = QComboBox()
        for mode in CHAT_MODES:
            self.mode_box.addItem(mode, mode)
            self.mode_box.setItemData(self.mode_box.count() - 1, MODE_HELP[mode], Qt.ItemDataRole.ToolTipRole)
        self.mode_box.currentIndexChanged.connect(self._mode_tip)
        self.set_mode(self.settings().query.mode)
        self._mode_tip()
        self.budget_box = QComboBox()
        self.budget_box.setToolTip(BUDGET_HELP)
        self._fill_budgets(max(0, self.settings().query.read_budget))
        self.ask_button = QPushButton("Ask", clicked=self.ask)
        self.ask_button.setDefault(True)
        self.stop_button = QPushButton("Stop", clicked=self.stop)
        self.reading_label = QLabel(wordWrap=True)
        self.reading_label.setTextFormat(Qt.TextFormat.PlainText)
        self.stop_reading_button = QPushButton("Stop Reading", clicked=self.stop_reading)
        self.stop_reading_button.setToolTip("Stop reading and answer from what was read so far")
        self._stop_reading: threading.Event | None = None
        reading_row = QHBoxLayout()
        reading_row.addWidget(self.reading_label, 1)
        reading_row.addWidget(self.stop_reading_button)
        self.reading_row = QWidget()
        self.reading_row.setLayout(reading_row)
        reading_row.setContentsMargins(0, 0, 0, 0)
        self.reading_row.hide()
        bottom = QHBoxLayout()
        bottom.addWidget(QLabel("Mode:"))
        bottom.addWidget(self.mode_box)
        bottom.addWidget(QLabel("Read first:"))
        bottom.addWidget(self.budget_box)
        bottom.addStretch(1)
        bottom.addWidget(self.stop_button)
        bottom.addWidget(self.ask_button)

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(model_row)
        layout.addWidget(self.scroll, 1)
        layout.addWidget(self.reading_row)
        layout.addWidget(self.question_edit)
        layout.addLayout(bottom)
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            QShortcut(QKeySequence(keys), self.question_edit, activated=self.ask)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, activated=self.stop)
        self._update_buttons()

    def open_evaluation(self) -> None:
        """Show the evaluation dialog (one per panel)."""
        from docatlas.gui.views.evaluation import EvaluationDialog

        if getattr(self, "evaluation", None) is None:
            self.evaluation = EvaluationDialog(self.tasks, self.workspace.db_path, self.settings, self)
        self.evaluation.show()
        self.evaluation.raise_()

    # -- conversations -----------------------------------------------------------------
    @property
    def turns(self) -> list[TurnWidget]:
        """The turn widgets shown, oldest first."""
        items = (self.transcript_layout.itemAt(i).widget() for i in range(self.transcript_layout.count()))
        return [w for w in items if isinstance(w, TurnWidget)]

    def show_conversation(self) -> None:
        """Show the workspace's current conversation and the list of earlier ones."""
        for widget in self.turns:
            widget.setParent(None)
            widget.deleteLater()
        for turn in self.workspace.conversations.current.turns:
            self._add_turn_widget(turn)
        self.empty_hint.setVisible(not self.workspace.conversations.current.turns)
        self._fill_history_box()

    def _fill_history_box(self) -> None:
        book = self.workspace.conversations
        self.history_box.clear()
        for conversation in reversed(book.conversations):
            if conversation.turns or conversation.id == book.current_id:
                self.history_box.addItem(conversation.title, conversation.id)
        self.history_box.setCurrentIndex(max(0, self.history_box.findData(book.current_id)))

    def _switch_conversation(self, position: int) -> None:
        if self.task is not None:
            self._fill_history_box()
            self.message.emit("Stop the answer in progress before switching conversations.")
            return
        self.workspace.conversations.switch_to(self.history_box.itemData(position))
        self.show_conversation()

    def new_chat(self) -> None:
        """Start a new conversation (the earlier one stays in the list)."""
        if self.task is not None:
            self.stop()
        self.workspace.conversations.new_conversation()
        self.workspace.conversations.save()
        self.show_conversation()
        self.question_edit.setFocus()

    def set_mode(self, mode: str) -> None:
        """Choose the query mode shown in the selector."""
        position = self.mode_box.findData(mode)
        self.mode_box.setCurrentIndex(position if position >= 0 else 0)

    @property
    def mode(self) -> str:
        """The selected query mode."""
        return str(self.mode_box.currentData())

    def _mode_tip(self, *_: object) -> None:
        self.mode_box.setToolTip("How the answer finds its context. " + MODE_HELP.get(self.mode, ""))

    def _fill_budgets(self, default: int) -> None:
        """Off and the usual budgets, plus the setting's own number when it is another."""
        for calls in sorted({*BUDGETS, default}):
            self.budget_box.addItem("Off" if calls == 0 else f"{calls} calls", calls)
        self.budget_box.setCurrentIndex(self.budget_box.findData(default))

    @property
    def budget(self) -> int:
        """The model calls the next question may spend reading first (0: off)."""
        return int(self.budget_box.currentData() or 0)

    def offer_community(self, has_reports: bool) -> None:
        """Offer the community mode once the workspace has community reports (and not before)."""
        position = self.mode_box.findData(COMMUNITY)
        if has_reports and position < 0:
            self.mode_box.addItem(COMMUNITY, COMMUNITY)
            self.mode_box.setItemData(self.mode_box.count() - 1, MODE_HELP[COMMUNITY], Qt.ItemDataRole.ToolTipRole)
        elif not has_reports and position >= 0:
            if self.mode == COMMUNITY:
                self.set_mode(CHAT_MODES[0])
            self.mode_box.removeItem(position)

    def check_reports(self) -> None:
        """Read (on the runner) whether community reports exist, and offer the mode if so."""
        if self.workspace.is_open:
            self.tasks.run(READ_REPORTS, self.workspace.read_job(has_reports), key=(READ_REPORTS, id(self)),
                           on_success=lambda found: self.offer_community(bool(found)))

    # -- asking ------------------------------------------------------------------------
    def ask(self) -> None:
        """Send the question in the box (in an empty workspace: say to add documents first)."""
        question = self.question_edit.toPlainText().strip()
        if not question or self.task is not None:
            return
        if self.workspace.known_empty:
            self.empty_hint.setText(EMPTY_WORKSPACE)
            self.empty_hint.show()
            self.message.emit(EMPTY_WORKSPACE)
            return
        conversation = self.workspace.conversations.current
        history = conversation.history()
        turn = Turn(question=question, mode=self.mode)
        conversation.turns.append(turn)
        self._fill_history_box()
        self.question_edit.clear()
        self.current_turn = self._add_turn_widget(turn)
        self.current_turn.start()
        settings = self.settings()
        if self.model_box.chosen:
            settings = settings.with_overrides(ollama__model=self.model_box.chosen)
        self._stop_reading = threading.Event()
        job = ask_job(self.workspace.db_path, settings, question, self.mode, history, self.budget,
                      self._stop_reading)
        self.task = self.tasks.run("Answering", job, on_progress=self._on_token, on_success=self._on_answer,
                                   on_failure=self._on_failure, on_finished=self._on_finished)
        self._update_buttons()

    def stop(self) -> None:
        """Stop the answer in progress (and its reading)."""
        if self.task is not None:
            if self._stop_reading is not None:
                self._stop_reading.set()
            self.task.cancel()
            self.message.emit("Stopping the answer…")

    def stop_reading(self) -> None:
        """Stop reading for the question: the answer is made from what was read so far."""
        if self.task is not None and self._stop_reading is not None and not self._stop_reading.is_set():
            self._stop_reading.set()
            self.stop_reading_button.setEnabled(False)
            self.reading_label.setText(self.reading_label.text() + " — stopping; answering from what was read")

    def _on_token(self, piece: object) -> None:
        if isinstance(piece, Progress):  # the reading for the question: calls spent of the budget
            if not self._stop_reading or not self._stop_reading.is_set():
                self.reading_label.setText(piece.message)
            self.reading_row.show()
            if self.current_turn is not None:
                self.current_turn.reading(piece.message)
            return
        self.reading_row.hide()
        if self.current_turn is not None:
            self.current_turn.append(str(piece))

    def _on_answer(self, answer: Answer) -> None:
        if self.current_turn is None:
            return
        turn = self.current_turn.turn
        turn.answer = answer.answer
        turn.mode = answer.mode
        turn.warnings = [answer.rests_on, *answer.warnings] + (["From the answer cache."] if answer.cached else [])
        names = list(answer.keywords.low_level) if answer.keywords else []
        refs = [{**r.to_json(), "names": names} for r in answer.references]
        turn.references = [slim_reference(r) for r in refs]
        self.current_turn.show_turn()

    def _on_failure(self, failure: TaskFailure) -> None:
        if self.current_turn is None:
            return
        turn = self.current_turn.turn
        turn.answer = self.current_turn.streamed_text
        if failure.cancelled:
            turn.stopped = True
            self.message.emit("The answer was stopped.")
        else:
            message = plain_sentence(failure.message)
            if self.workspace.known_empty:
                message = EMPTY_WORKSPACE
            turn.error = message
            self.message.emit(message)
            # a failed question is not kept: its text goes back in the box and the turn offers Retry
            conversation = self.workspace.conversations.current
            if turn in conversation.turns:
                conversation.turns.remove(turn)
            if not self.question_edit.toPlainText().strip():
                self.question_edit.setPlainText(turn.question)
            self.current_turn.offer_retry()
            if isinstance(failure.error, OllamaUnreachable | ModelNotFound):
                self.ollama_needed.emit(message)
        self.current_turn.show_turn()

    def _on_finished(self) -> None:
        self.task = None
        self.current_turn = None
        self._stop_reading = None
        self.reading_row.hide()
        self.stop_reading_button.setEnabled(True)
        self.workspace.conversations.save()
        self._update_buttons()

    def _update_buttons(self) -> None:
        busy = self.task is not None
        self.ask_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)

    # -- turns -------------------------------------------------------------------------
    def _add_turn_widget(self, turn: Turn) -> TurnWidget:
        widget = TurnWidget(turn)
        widget.reference_clicked.connect(self.open_reference)
        widget.link_requested.connect(self.open_link)
        widget.retry_requested.connect(lambda w=widget: self._retry(w))
        self.transcript_layout.insertWidget(self.transcript_layout.count() - 1, widget)
        self.empty_hint.hide()
        return widget

    def _retry(self, widget: TurnWidget) -> None:
        """Ask a failed question again: its failed turn goes, the question is sent anew."""
        if self.task is not None:
            return
        self.question_edit.setPlainText(widget.turn.question)
        widget.setParent(None)
        widget.deleteLater()
        self.ask()

    def _follow(self, _minimum: int, maximum: int) -> None:
        QTimer.singleShot(0, lambda: self.scroll.verticalScrollBar().setValue(maximum))

    def open_reference(self, reference: dict) -> None:
        """Show the passage a reference points at, highlighted, in the passage viewer."""
        chunk = reference.get("chunk")
        if not isinstance(chunk, int):
            self._show_passage(None, reference)
            return
        self.tasks.run(READ_PASSAGE, self.workspace.read_job(lambda store: passage(store, int(chunk))),
                       on_success=lambda found: self._show_passage(found, reference),
                       on_failure=lambda failure: self.message.emit(failure.message))

    def _show_passage(self, found: Passage | None, reference: dict) -> None:
        if not self.workspace.is_open:
            return
        if self.viewer is None:
            self.viewer = PassageViewer(self.interaction, self.window())
        self.viewer.show_passage(found, reference)
        self.viewer.show()
        self.viewer.raise_()

    def open_link(self, url: QUrl) -> None:
        """A link in an answer was clicked: open web links only, and only after asking."""
        if url.scheme().lower() not in WEB_SCHEMES:
            self.message.emit("DocAtlas opens only web links from answers; this one was ignored.")
            return
        text = url.toDisplayString()
        if self.interaction.confirm("Open Link", f"Open this link in your browser?\n\n{text}", "Open Link",
                                    "The link comes from the model's answer; open it only if you trust it."):
            self.interaction.open_url(url)

    def shutdown(self) -> None:
        """Stop the answer in progress (and its reading) and save the conversations."""
        if self.task is not None:
            if self._stop_reading is not None:
                self._stop_reading.set()
            self.task.cancel()
        self.workspace.conversations.save()

