"""The source passage of a reference: the document's text around it, the cited sentence
highlighted, the names it is about marked in another colour and stepped through."""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPushButton,
    QTextBrowser,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from docatlas.core.base.mentions import mention_spans
from docatlas.core.storage.read_models import Passage
from docatlas.gui.dialogs.interaction import Interaction
from docatlas.gui.formatting import page_text
from docatlas.gui.views.markdown_view import InertDocument

HIGHLIGHT = QColor(255, 236, 140)
HIGHLIGHT_TEXT = QColor(20, 20, 20)
MENTION = QColor(190, 222, 255)


def utf16(text: str, index: int) -> int:
    """A Python string index as the position Qt counts (UTF-16 code units)."""
    return len(text[:index].encode("utf-16-le")) // 2


class PassageViewer(QDialog):
    """A window showing where an answer came from, inside the app."""

    def __init__(self, interaction: Interaction, parent: QWidget | None = None):
        super().__init__(parent)
        self.interaction = interaction
        self.setWindowTitle("Source Passage")
        self.resize(720, 560)
        self.passage: Passage | None = None
        self.page: int | None = None
        self.mentions: list[tuple[int, int]] = []  # Qt positions in the shown text
        self.highlight: tuple[int, int] | None = None
        self.title_label = QLabel(wordWrap=True)
        self.title_label.setTextFormat(Qt.TextFormat.PlainText)
        self.where_label = QLabel(wordWrap=True)
        self.where_label.setTextFormat(Qt.TextFormat.PlainText)
        self.where_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text_view = QTextBrowser()
        self.text_view.setDocument(InertDocument(self.text_view))
        self.text_view.setOpenLinks(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.previous_button = QPushButton("Previous Mention", clicked=lambda: self.step_mention(-1))
        self.next_button = QPushButton("Next Mention", clicked=lambda: self.step_mention(1))
        self.open_button = QPushButton("Open Document")
        self.open_button.setToolTip("Open the original file with its usual application")
        for button in (self.previous_button, self.next_button, self.open_button):
            buttons.addButton(button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.close)
        self.open_button.clicked.connect(self.open_document)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title_label)
        layout.addWidget(self.where_label)
        layout.addWidget(self.text_view, 1)
        layout.addWidget(buttons)

    def show_passage(self, passage: Passage | None, reference: dict) -> None:
        """Show `passage` (None: its document is no longer in the workspace)."""
        self.passage = passage
        font = self.title_label.font()
        font.setBold(True)
        self.title_label.setFont(font)
        self.text_view.document().clear()
        self.text_view.setExtraSelections([])
        self.mentions, self.highlight = [], None
        if passage is None:
            self.title_label.setText(str(reference.get("title") or reference.get("document") or "Passage"))
            self.where_label.setText("This passage is no longer in the workspace: its document was removed "
                                     "or changed since the answer was given. Ask again for fresh references.")
            for button in (self.open_button, self.previous_button, self.next_button):
                button.setEnabled(False)
            return
        self.title_label.setText(passage.title)
        target = next(c for c in passage.chunks if c["id"] == passage.chunk_id)
        text, first = passage.stitched()
        span = self._span(reference, target, text, first)
        self.page = (reference.get("page") or target["page_start"]) if reference.get("quote") else target["page_start"]
        where = page_text(self.page, self.page if reference.get("quote") else target["page_end"])
        what = "the cited sentence highlighted" if reference.get("quote") else "the passage highlighted"
        self.where_label.setText(f"{passage.path}\nChunk {target['idx'] + 1} of {passage.total_chunks}"
                                 + (f", {where}" if where else "") + f" ({what})")
        self._show_open_button(Path(passage.path))
        self.text_view.setPlainText(text)
        self.highlight = (utf16(text, span[0]), utf16(text, span[1]))
        names = [n for n in reference.get("names") or () if isinstance(n, str)]
        self.mentions = [(utf16(text, s), utf16(text, e)) for s, e in mention_spans(text, names)]
        self.previous_button.setEnabled(bool(self.mentions))
        self.next_button.setEnabled(bool(self.mentions))
        self._paint()
        self._scroll_to(self.highlight[0])

    @staticmethod
    def _span(reference: dict, target: dict, text: str, first: int) -> tuple[int, int]:
        """Where the highlight goes in the shown text: the quoted sentence, else the chunk."""
        start, end = reference.get("start"), reference.get("end")
        if first >= 0 and isinstance(start, int) and isinstance(end, int) and first <= start <= end:
            return start - first, min(end - first, len(text))
        quote = reference.get("quote")
        if isinstance(quote, str) and quote.split() and first >= 0:  # a quote without its span (the graph's)
            pattern = r"\s+".join(re.escape(word) for word in quote.split())  # its spaces were normalised
            found = re.compile(pattern).search(text, max(target["char_start"] - first, 0))
            if found:
                return found.start(), found.end()
        if first >= 0:
            return target["char_start"] - first, target["char_end"] - first
        offset = text.find(target["text"])
        return max(offset, 0), max(offset, 0) + len(target["text"])

    def _paint(self) -> None:
        selections = []
        for (start, end), colour in [*((m, MENTION) for m in self.mentions),
                                     *([(self.highlight, HIGHLIGHT)] if self.highlight else [])]:
            selection = QTextEdit.ExtraSelection()
            selection.cursor = QTextCursor(self.text_view.document())
            selection.cursor.setPosition(start)
            selection.cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            fmt = QTextCharFormat()
            fmt.setBackground(colour)
            fmt.setForeground(HIGHLIGHT_TEXT)
            selection.format = fmt
            selections.append(selection)
        self.text_view.setExtraSelections(selections)

    def _scroll_to(self, position: int) -> None:
        cursor = QTextCursor(self.text_view.document())
        cursor.setPosition(position)
        self.text_view.setTextCursor(cursor)
        self.text_view.ensureCursorVisible()

    def highlighted_text(self) -> str:
        """The text shown with the highlight (the cited sentence)."""
        for selection in self.text_view.extraSelections():
            if selection.format.background().color() == HIGHLIGHT:
                return selection.cursor.selectedText().replace("\u2029", "\n")
        return ""

    def step_mention(self, step: int) -> None:
        """Select the next (1) or previous (-1) mention after or before the text cursor."""
        if not self.mentions:
            return
        here = self.text_view.textCursor().selectionStart() if step < 0 else self.text_view.textCursor().position()
        if step > 0:
            found = next((m for m in self.mentions if m[0] >= here), self.mentions[0])
        else:
            found = next((m for m in reversed(self.mentions) if m[0] < here), self.mentions[-1])
        cursor = QTextCursor(self.text_view.document())
        cursor.setPosition(found[0])
        cursor.setPosition(found[1], QTextCursor.MoveMode.KeepAnchor)
        self.text_view.setTextCursor(cursor)
        self.text_view.ensureCursorVisible()

    def _show_open_button(self, path: Path) -> None:
        at_page = path.suffix.lower() == ".pdf" and isinstance(self.page, int)
        self.open_button.setText(f"Open at Page {self.page}" if at_page else "Open Document")
        self.open_button.setToolTip("Open the original file with its usual application"
                                    + (f"; a viewer that follows #page links opens page {self.page}"
                                       if at_page else ""))
        self.open_button.setEnabled(path.exists())

    def open_document(self) -> None:
        """Open the original file with the system's application (at the page, for a PDF); say why when it cannot."""
        if self.passage is None:
            return
        path = Path(self.passage.path)
        if not path.is_file():
            self.where_label.setText(f"{path} is no longer there; it was moved or deleted.")
            return
        url = QUrl.fromLocalFile(str(path))
        if self.open_button.text().startswith("Open at Page"):
            url.setFragment(f"page={self.page}")
        if not self.interaction.open_url(url):
            self.where_label.setText(f"No application on this computer opens {path.name}; it is at {path}.")
