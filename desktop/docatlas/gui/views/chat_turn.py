"""One question and its answer in the chat: streamed Markdown, notes, references, copy."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QColor, QGuiApplication, QTextCharFormat, QTextDocument
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QTextEdit, QVBoxLayout, QWidget

from docatlas.core.retrieval.references import unsupported_sentences
from docatlas.gui.conversations import Turn
from docatlas.gui.formatting import button_text, page_text, plain_tip
from docatlas.gui.theme import error_style
from docatlas.gui.views.markdown_view import SafeMarkdownView

RENDER_MS = 60  # while streaming, re-render the Markdown at most this often
SHOWN_REFERENCES = 10
QUOTE_CHARS = 60  # of a reference's quote on its button (the viewer shows it whole)
UNSUPPORTED = QColor(230, 120, 40)
_MARKDOWN_LINK = re.compile(r"\[([^\[\]]*)\]\([^()]*\)")


def plain_sentence(text: str) -> str:
    """An error sentence shown as plain text: the Markdown code marks of a command go ("`ollama pull x`"
    reads as “ollama pull x”)."""
    return re.sub(r"`([^`]*)`", "“\\1”", text).replace("`", "")


def reference_text(ref: dict) -> str:
    """"[C1] alpha, p. 2 (chunk 3)" and the quoted sentence below it, for a reference button."""
    label = f"[{ref.get('label')}] " if ref.get("label") else ""
    where = page_text(ref.get("page"), ref.get("page_end"))
    title = ref.get("title") or ref.get("document") or "document"
    index = ref.get("chunk_index")
    chunk = f" (chunk {index + 1})" if isinstance(index, int) else ""
    by = f" — {ref['byline']}" if ref.get("byline") else ""  # author or sender, and a date
    quote = " ".join(str(ref.get("quote") or "").split())
    if len(quote) > QUOTE_CHARS:
        quote = quote[:QUOTE_CHARS].rsplit(" ", 1)[0] + "\u2026"
    shown = f"\n    \u201c{quote}\u201d" if quote else ""
    return f"{label}{title}{', ' + where if where else ''}{chunk}{by}{shown}"


class TurnWidget(QFrame):
    """A turn of the conversation; the answer may still be streaming in."""

    reference_clicked = Signal(dict)
    link_requested = Signal(QUrl)
    retry_requested = Signal()

    def __init__(self, turn: Turn, parent: QWidget | None = None):
        super().__init__(parent)
        self.turn = turn
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.question_label = QLabel(turn.question, wordWrap=True)
        self.question_label.setTextFormat(Qt.TextFormat.PlainText)
        self.question_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.question_label.font()
        font.setBold(True)
        self.question_label.setFont(font)
        self.answer_view = SafeMarkdownView()
        self.answer_view.link_requested.connect(self.link_requested)
        self.note_label = QLabel(wordWrap=True)
        self.note_label.setTextFormat(Qt.TextFormat.PlainText)
        self.note_label.setEnabled(False)
        self.references_box = QWidget()
        self.references_layout = QVBoxLayout(self.references_box)
        self.references_layout.setContentsMargins(0, 0, 0, 0)
        self.references_layout.setSpacing(0)
        self.copy_button = QPushButton("Copy Answer", clicked=self.copy_answer)
        self.copy_button.setFlat(True)
        self.retry_button = QPushButton("Retry", clicked=lambda: self.retry_requested.emit())
        self.retry_button.setToolTip("Ask this question again")
        self.retry_button.hide()
        footer = QHBoxLayout()
        footer.addWidget(self.note_label, 1)
        footer.addWidget(self.retry_button, 0, Qt.AlignmentFlag.AlignTop)
        footer.addWidget(self.copy_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.addWidget(self.question_label)
        layout.addWidget(self.answer_view)
        layout.addWidget(self.references_box)
        layout.addLayout(footer)
        self._render_timer = QTimer(self, singleShot=True, interval=RENDER_MS, timeout=self._render)
        self._streamed = ""
        self.show_turn()

    # -- streaming ---------------------------------------------------------------------
    def start(self) -> None:
        """The question was sent; the answer is on its way."""
        self._streamed = ""
        self.note_label.setText("Looking through your documents…")
        self.copy_button.setEnabled(False)

    def reading(self, message: str) -> None:
        """The question is reading passages first: how much of its budget is spent."""
        if not self._streamed:
            self.note_label.setText(message)

    def append(self, piece: str) -> None:
        """A piece of the streamed answer arrived."""
        if not self._streamed:
            self.note_label.setText("Answering…")
        self._streamed += piece
        if not self._render_timer.isActive():
            self._render_timer.start()

    @property
    def streamed_text(self) -> str:
        """The answer as streamed so far."""
        return self._streamed

    def _render(self) -> None:
        self.answer_view.show_markdown(self._streamed)
        self.answer_view.show()

    def offer_retry(self) -> None:
        """The question failed: show Retry."""
        self.retry_button.show()

    # -- finished ----------------------------------------------------------------------
    def show_turn(self) -> None:
        """Show the turn as stored: answer, references, notes."""
        self._render_timer.stop()
        self.answer_view.show_markdown(self.turn.answer or self._streamed)
        self.answer_view.setVisible(bool(self.turn.answer or self._streamed))
        self._show_references(self.turn.references)
        marked = self._mark_unsupported(self.turn.answer if self.turn.references else "")
        notes = []
        if self.turn.mode:
            notes.append(f"Mode: {self.turn.mode}")
        notes += self.turn.warnings
        if self.turn.stopped:
            notes.append("Stopped before the answer was complete.")
        if self.turn.error:
            notes.append(plain_sentence(self.turn.error))
        if marked:
            notes.append(f"{marked} sentence{'s cite' if marked != 1 else ' cites'} no source (underlined)")
        self.note_label.setText(" · ".join(notes))
        self.note_label.setEnabled(not self.turn.error)
        self.note_label.setStyleSheet(error_style() if self.turn.error else "")
        self.copy_button.setEnabled(bool(self.turn.answer or self._streamed))

    def _mark_unsupported(self, answer: str) -> int:
        """Underline the answer's sentences that cite nothing; how many were found."""
        selections = []
        document = self.answer_view.document()
        for sentence in unsupported_sentences(answer):
            plain = _MARKDOWN_LINK.sub(r"\1", sentence).replace("**", "").replace("`", "")
            shown = " ".join(plain.split())
            cursor = document.find(shown, 0, QTextDocument.FindFlag.FindCaseSensitively)
            if cursor.isNull():
                continue
            selection = QTextEdit.ExtraSelection()
            selection.cursor = cursor
            fmt = QTextCharFormat()
            fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
            fmt.setUnderlineColor(UNSUPPORTED)
            fmt.setToolTip("No citation backs this sentence: check it against your documents.")
            selection.format = fmt
            selections.append(selection)
        self.answer_view.setExtraSelections(selections)
        return len(selections)

    @property
    def unsupported_marks(self) -> list[str]:
        """The answer text underlined as citing no source."""
        return [s.cursor.selectedText() for s in self.answer_view.extraSelections()]

    def _show_references(self, references: list[dict]) -> None:
        while self.references_layout.count():
            item = self.references_layout.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.references_box.setVisible(bool(references))
        if not references:
            return
        title = QLabel("References")
        title.setEnabled(False)
        self.references_layout.addWidget(title)
        for ref in references[:SHOWN_REFERENCES]:
            button = QPushButton(button_text(reference_text(ref)))
            button.setFlat(True)
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.setStyleSheet("text-align: left; padding: 2px 4px; color: palette(link);"
                                 + (" font-weight: bold;" if ref.get("cited") else ""))
            cited = "The answer cites this passage." if ref.get("cited") else "Part of the answer's context."
            button.setToolTip(plain_tip(f"{ref.get('document')}\n{cited} Click to open it."))
            button.clicked.connect(lambda _=False, r=ref: self.reference_clicked.emit(r))
            self.references_layout.addWidget(button)

    @property
    def reference_buttons(self) -> list[QPushButton]:
        """The buttons that open the references."""
        items = (self.references_layout.itemAt(i).widget() for i in range(self.references_layout.count()))
        return [w for w in items if isinstance(w, QPushButton)]

    def copy_answer(self) -> None:
        """Put the answer (Markdown) on the clipboard."""
        QGuiApplication.clipboard().setText(self.turn.answer or self._streamed)
