"""What a person reaches for on a document row: the context menu, double-click, the preview,
and the filter box over the table.

Right-click a row: Open File, Show Passages, Preview, Retry, Delete. Double-click shows its
passages. The preview below the table shows the start of the selected document's text (read
on the runner, as plain text). Opening a file that is gone, or with no application to open
it, says why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QPoint, QUrl
from PySide6.QtWidgets import QMenu, QPlainTextEdit, QWidget

from docatlas.core.storage.read_models import document_preview
from docatlas.gui.dialogs.interaction import Interaction
from docatlas.gui.ingestion import IngestionController
from docatlas.gui.models.documents_model import metadata_lines
from docatlas.gui.workspace import READ_PREVIEW


class DocumentsView(Protocol):
    """What the actions need of the documents panel."""

    controller: IngestionController
    interaction: Interaction
    preview: QPlainTextEdit

    def selected_ids(self) -> list[int]:
        """Ids of the selected documents."""

    def delete_selected(self) -> None:
        """Delete the selected documents, after asking."""

    def say(self, text: str) -> None:
        """A sentence for the status bar."""

    def show_passage(self, chunk_id: int) -> None:
        """Open the passage viewer on a chunk."""


class DocumentActions:
    """The row actions of the documents table."""

    def __init__(self, view: DocumentsView):
        self.view = view
        self.menu: QMenu | None = None  # the last context menu (tests trigger its actions)
        self.preview_of: int | None = None
        self.first_chunk: dict[int, int] = {}

    def _row(self, document_id: int):
        return self.view.controller.reader.rows.get(document_id)

    def context_menu(self, table: QWidget, at: QPoint, popup: bool = True) -> QMenu:
        """The menu for the rows under the pointer (selected first when the click was outside them)."""
        index = table.indexAt(at)
        if index.isValid() and index.row() not in {i.row() for i in table.selectionModel().selectedRows()}:
            table.selectRow(index.row())
        ids = self.view.selected_ids()
        menu = QMenu(table)
        one = len(ids) == 1
        busy = self.view.controller.busy
        menu.addAction("Open File", lambda: self.open_file(ids[0])).setEnabled(one)
        menu.addAction("Show Passages", lambda: self.show_passages(ids[0])).setEnabled(one)
        menu.addAction("Preview Text", lambda: self.show_preview(ids[0])).setEnabled(one)
        menu.addSeparator()
        failed = [i for i in ids if (r := self._row(i)) is not None and (r.status == "failed" or r.chunks_failed)]
        menu.addAction("Retry", lambda: self.retry(failed)).setEnabled(bool(failed))
        menu.addAction("Delete…", self.view.delete_selected).setEnabled(bool(ids) and not busy)
        self.menu = menu
        if popup:
            menu.popup(table.viewport().mapToGlobal(at))
        return menu

    def open_file(self, document_id: int) -> None:
        """Open the original file with its usual application; say why when that cannot be done."""
        row = self._row(document_id)
        if row is None:
            return
        path = Path(row.path)
        if not path.is_file():
            self.view.say(f"{row.name} is no longer at {row.path}; it was moved or deleted.")
            return
        if not self.view.interaction.open_url(QUrl.fromLocalFile(str(path))):
            self.view.say(f"No application on this computer opens {row.name}; it is at {row.path}.")

    def show_passages(self, document_id: int) -> None:
        """Open the passage viewer on the document's first passage."""
        chunk = self.first_chunk.get(document_id)
        if chunk is not None:
            self.view.show_passage(chunk)
            return
        self._read(document_id, then_open=True)

    def show_preview(self, document_id: int) -> None:
        """Show the start of the document's text below the table."""
        self._read(document_id, then_open=False)

    def retry(self, document_ids: list[int]) -> None:
        """Run again over these failed documents."""
        paths = [_file_of(r.path) for r in (self._row(i) for i in document_ids) if r is not None]
        if paths:
            self.view.controller.add(paths)

    def _read(self, document_id: int, then_open: bool) -> None:
        workspace = self.view.controller.workspace
        if not workspace.is_open:
            return
        self.preview_of = document_id
        self.view.controller.tasks.run(
            READ_PREVIEW, workspace.read_job(lambda store: document_preview(store, document_id)),
            key=(READ_PREVIEW, id(self)),
            on_success=lambda found: self._landed(document_id, found, then_open),
            on_failure=lambda failure: self.view.say(failure.message))

    def _landed(self, document_id: int, found: tuple[int | None, str], then_open: bool) -> None:
        chunk, text = found
        if chunk is not None:
            self.first_chunk[document_id] = chunk
        if document_id == self.preview_of:
            row = self._row(document_id)
            name = row.name if row is not None else "This document"
            about = "\n".join(metadata_lines(row)) + "\n\n" if row is not None and row.metadata else ""
            self.view.preview.setPlainText(about + (text or f"{name} has no text yet (it was not read, or it failed)."))
            self.view.preview.show()
        if then_open:
            if chunk is None:
                self.view.say("This document has no passages yet.")
            else:
                self.view.show_passage(chunk)


def _file_of(path: str) -> Path:
    """The file a document is read from: an attachment or a mailbox's message (`file#part`) is
    read again through the file it came in."""
    while "#" in path and not Path(path).exists():
        path = path.rsplit("#", 1)[0]
    return Path(path)
