"""The source passage of a reference: the chunk, highlighted, between its neighbours."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QBrush, QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from docatlas.core.storage.read_models import Passage
from docatlas.gui.dialogs.interaction import Interaction
from docatlas.gui.formatting import page_text
from docatlas.gui.views.markdown_view import InertDocument

HIGHLIGHT = QColor(255, 236, 140)
HIGHLIGHT_TEXT = QColor(20, 20, 20)


class PassageViewer(QDialog):
    """A window showing where an answer came from, inside the app."""

    def __init__(self, interaction: Interaction, parent: QWidget | None = None):
        super().__init__(parent)
        self.interaction = interaction
        self.setWindowTitle("Source Passage")
        self.resize(720, 560)
        self.passage: Passage | None = None
        self.title_label = QLabel(wordWrap=True)
        self.title_label.setTextFormat(Qt.TextFormat.PlainText)
        self.where_label = QLabel(wordWrap=True)
        self.where_label.setTextFormat(Qt.TextFormat.PlainText)
        self.where_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text_view = QTextBrowser()
        self.text_view.setDocument(InertDocument(self.text_view))
        self.text_view.setOpenLinks(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.open_button = QPushButton("Open Document")
        self.open_button.setToolTip("Open the original file with its usual application")
        buttons.addButton(self.open_button, QDialogButtonBox.ButtonRole.ActionRole)
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
        document = self.text_view.document()
        document.clear()
        if passage is None:
            self.title_label.setText(str(reference.get("title") or reference.get("document") or "Passage"))
            self.where_label.setText("This passage is no longer in the workspace: its document was removed "
                                     "or changed since the answer was given. Ask again for fresh references.")
            self.open_button.setEnabled(False)
            return
        self.title_label.setText(passage.title)
        target = next(c for c in passage.chunks if c["id"] == passage.chunk_id)
        where = page_text(target["page_start"], target["page_end"])
        self.where_label.setText(f"{passage.path}\nChunk {target['idx'] + 1} of {passage.total_chunks}"
                                 + (f", {where}" if where else "") + " (highlighted)")
        self.open_button.setEnabled(Path(passage.path).exists())
        self._write_chunks(passage)

    def _write_chunks(self, passage: Passage) -> None:
        cursor = QTextCursor(self.text_view.document())
        heading = QTextCharFormat()
        heading.setFontWeight(600)
        heading.setForeground(QBrush(self.palette().placeholderText()))
        plain = QTextCharFormat()
        marked = QTextCharFormat()
        marked.setBackground(HIGHLIGHT)
        marked.setForeground(HIGHLIGHT_TEXT)
        target_position = 0
        for number, chunk in enumerate(passage.chunks):
            if number:
                cursor.insertBlock()
                cursor.insertBlock()
            where = page_text(chunk["page_start"], chunk["page_end"])
            cursor.insertText(f"Chunk {chunk['idx'] + 1}" + (f" · {where}" if where else ""), heading)
            cursor.insertBlock()
            if chunk["id"] == passage.chunk_id:
                target_position = cursor.position()
            cursor.insertText(chunk["text"].strip(), marked if chunk["id"] == passage.chunk_id else plain)
        scroll = QTextCursor(self.text_view.document())
        scroll.setPosition(target_position)
        self.text_view.setTextCursor(scroll)
        self.text_view.ensureCursorVisible()

    def highlighted_text(self) -> str:
        """The text shown with the highlight (the referenced chunk)."""
        block = self.text_view.document().begin()
        parts = []
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                fragment = it.fragment()
                if fragment.charFormat().background().color() == HIGHLIGHT:
                    parts.append(fragment.text())
                it += 1
            block = block.next()
        return "\n".join(parts)

    def open_document(self) -> None:
        """Open the original file with the system's application."""
        if self.passage is None:
            return
        path = Path(self.passage.path)
        if not path.is_file():
            self.where_label.setText(f"{path} is no longer there; it was moved or deleted.")
        elif not self.interaction.open_url(QUrl.fromLocalFile(str(path))):
            self.where_label.setText(f"No application on this computer opens {path.name}; it is at {path}.")
