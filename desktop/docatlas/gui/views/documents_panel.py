"""The documents panel: add (buttons or drag and drop), the table, progress, run controls.

The table is a model over a paged query, filled by the controller's `WorkspaceReader` off
the GUI thread: its first rows when the workspace opens, after a run and when the sort or the
filter changes (both run in SQL), the next page when the table is scrolled to its end, and
the documents a progress tick names while a run goes on.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from docatlas.core.base.progress import Progress
from docatlas.core.storage.read_models import entities_only_in
from docatlas.gui.dialogs.interaction import Interaction
from docatlas.gui.formatting import duration, plain_tip
from docatlas.gui.ingestion import IngestionController
from docatlas.gui.models.documents_model import ID_ROLE, STATUS, DocumentTableModel, RunView
from docatlas.gui.models.workspace_reader import DocumentsRead
from docatlas.gui.tasks import BackgroundTask, TaskFailure
from docatlas.gui.theme import error_style, restyle
from docatlas.gui.views.document_actions import DocumentActions
from docatlas.gui.views.progress_delegate import ProgressDelegate
from docatlas.gui.workspace import READ_DELETION

LISTED_ENTITIES = 12


class DocumentsPanel(QWidget):
    """Documents of the workspace and the ingestion run in progress."""

    message = Signal(str)  # a sentence for the status bar
    passage_requested = Signal(int)  # a chunk id to open in the passage viewer

    def __init__(self, controller: IngestionController, interaction: Interaction, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.interaction = interaction
        self.setAcceptDrops(True)
        self.model = DocumentTableModel(self.run_view, self)
        self.actions = DocumentActions(self)
        self.reader = controller.reader
        self.reader.view = lambda: (self.model.query, self.model.rows_to_read())
        self.reader.shown = self.model.shown_ids
        self.model.fetch_wanted.connect(self.reader.read_more)
        self.reader.failed.connect(lambda _failure: self.model.page_failed())
        self.model.query_changed.connect(self.refresh)
        self.deletion_read: BackgroundTask | None = None  # reading what a deletion would take with it
        self._build()
        self.reader.rows_read.connect(self._on_rows_read)
        self.reader.counts_read.connect(lambda _counts: self._show_run())
        controller.progressed.connect(self._on_progress)
        controller.redraw_due.connect(self._show_run)
        controller.state_changed.connect(self._on_state_changed)
        controller.documents_changed.connect(self.refresh)
        controller.finished.connect(self._on_finished)
        controller.failed.connect(lambda _failure: self._show_run())
        self.refresh()
        self._on_state_changed()

    # -- layout ------------------------------------------------------------------------
    def _build(self) -> None:
        self.add_files_button = QPushButton("Add Files…", clicked=self.add_files)
        self.add_folder_button = QPushButton("Add Folder…", clicked=self.add_folder)
        self.pause_button = QPushButton("Pause", clicked=self.controller.pause)
        self.resume_button = QPushButton("Resume", clicked=self.controller.resume)
        self.cancel_button = QPushButton("Cancel", clicked=self.controller.cancel)
        self.retry_button = QPushButton("Retry Failed", clicked=self.controller.retry_failed)
        self.delete_button = QPushButton("Delete…", clicked=self.delete_selected)
        self.add_files_button.setToolTip("Add documents (txt, md, html, pdf, docx, email, slides, sheets, "
                                         "epub, odt, rtf); you can also drop them here")
        self.add_folder_button.setToolTip("Add a folder; it stays linked where it is and the graph follows it")
        self.pause_button.setToolTip("Stop starting new model calls; Resume continues where it stopped")
        self.cancel_button.setToolTip("Stop the run; finished chunks are kept and the rest stays pending")
        buttons = QHBoxLayout()  # adding and fixing documents; the run's controls sit with its progress
        for widget in (self.add_files_button, self.add_folder_button):
            buttons.addWidget(widget)
        buttons.addStretch(1)
        buttons.addWidget(self.retry_button)
        buttons.addWidget(self.delete_button)

        self.resume_banner = QFrame(frameShape=QFrame.Shape.StyledPanel)
        self.resume_label = QLabel(wordWrap=True)
        self.banner_button = QPushButton("Resume", clicked=self.controller.resume)
        banner = QHBoxLayout(self.resume_banner)
        banner.addWidget(self.resume_label, 1)
        banner.addWidget(self.banner_button)

        self.table = QTableView()
        self.table.setModel(self.model)  # no proxy: sorting and filtering happen in SQL, and a proxy
        # would ask the model for each role of a cell apart (see DocumentTableModel.multiData)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        self.table.setItemDelegateForColumn(STATUS, ProgressDelegate(self.table))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        header.setSectionResizeMode(STATUS, QHeaderView.ResizeMode.Stretch)
        for column, width in enumerate((180, 60, 70, 60, 0, 70, 120, 90)):  # Status takes the rest
            if width:
                self.table.setColumnWidth(column, width)
        self.table.selectionModel().selectionChanged.connect(self._update_buttons)
        self.table.selectionModel().selectionChanged.connect(self._preview_selected)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(lambda at: self.actions.context_menu(self.table, at))
        self.table.doubleClicked.connect(lambda index: self.actions.show_passages(index.data(ID_ROLE)))
        self.table.setToolTip("Double-click a document to read its passages; right-click for more")
        self.search_box = QLineEdit(placeholderText="Filter by name, author, sender, subject or date (Ctrl+F)",
                                    clearButtonEnabled=True)
        self.search_box.textChanged.connect(self.model.set_filter)
        self.preview = QPlainTextEdit(readOnly=True)
        self.preview.setPlaceholderText("Select a document to preview the start of its text.")
        self.preview.setMaximumBlockCount(2000)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.preview)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([400, 120])
        self.empty_hint = QLabel("Drop documents or folders here, or use Add Files… (txt, md, html, pdf, docx, "
                                 "eml, mbox, msg, pptx, xlsx, csv, epub, odt, rtf).",
                                 alignment=Qt.AlignmentFlag.AlignCenter, wordWrap=True)
        self.empty_hint.setEnabled(False)

        self.stage_label = QLabel("Idle", wordWrap=True, textFormat=Qt.TextFormat.PlainText)  # names file names
        self.stage_label.setMinimumWidth(120)
        self.eta_label = QLabel("", textFormat=Qt.TextFormat.PlainText)
        # Their sizes never follow their text: a stage text that wrapped onto a second line used to
        # shrink the table above it, a whole repaint of it (30-60 ms on the GUI thread while a run's
        # threads held the GIL) each time the line count changed. Two lines are always kept.
        for label, lines in ((self.stage_label, 2), (self.eta_label, 1)):
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
            label.setFixedHeight(lines * label.fontMetrics().lineSpacing() + 2)
        self.overall_bar = QProgressBar(textVisible=True)
        self.overall_bar.setRange(0, 1)
        self.overall_bar.setValue(0)
        progress = QHBoxLayout()
        for widget in (self.pause_button, self.resume_button, self.cancel_button):
            progress.addWidget(widget)
        progress.addWidget(self.stage_label, 4)
        progress.addWidget(self.overall_bar, 2)
        progress.addWidget(self.eta_label, 1)
        self.notice = QLabel(wordWrap=True, textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse)
        self.notice.setTextFormat(Qt.TextFormat.PlainText)
        self.notice.hide()
        self.failures_label = QLabel(wordWrap=True, textFormat=Qt.TextFormat.PlainText,
                                     textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse)
        self.failures_label.setStyleSheet(error_style())
        self.failures_label.hide()

        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(self.resume_banner)
        layout.addWidget(self.search_box)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.empty_hint)
        layout.addLayout(progress)
        layout.addWidget(self.notice)
        layout.addWidget(self.failures_label)

    # -- reading -----------------------------------------------------------------------
    def run_view(self) -> RunView:
        """The run as the table shows it."""
        c = self.controller
        p = c.last_progress
        rate = None
        if p is not None and p.eta and p.chunks_total > p.chunks_done + p.chunks_failed:
            rate = p.eta / (p.chunks_total - p.chunks_done - p.chunks_failed)
        return RunView(active=c.extracting, paused=c.paused, skipped=frozenset(c.skipped_paths),
                       worked=frozenset(c.had_work), seconds_per_chunk=rate)

    def refresh(self) -> None:
        """Read the documents again (in the background); the table follows when the read lands."""
        if self.controller.workspace.is_open:
            self.reader.read_all()

    @property
    def reading(self) -> bool:
        """A read of the documents is running or asked for."""
        return self.reader.reading

    def _on_rows_read(self, found: DocumentsRead) -> None:
        if found.page:
            self.model.add_page(found.offset, found.rows, found.total or 0, found.query)
        elif found.query != self.model.query:
            pass  # read for another order or filter: the read for this one is on its way
        elif found.whole:
            self.model.refresh(found.rows, found.total)
        else:
            self.model.update(found.rows, found.total)
        self.empty_hint.setVisible(not self.model.rows and not self.model.query.text)
        self._update_buttons()

    def say(self, text: str) -> None:
        """A sentence for the status bar."""
        self.message.emit(text)

    def show_passage(self, chunk_id: int) -> None:
        """Ask the window to open the passage viewer on a chunk."""
        self.passage_requested.emit(int(chunk_id))

    def _preview_selected(self, *_: object) -> None:
        ids = self.selected_ids()
        if len(ids) == 1:
            self.actions.show_preview(ids[0])

    def selected_ids(self) -> list[int]:
        """Ids of the selected documents."""
        rows = self.table.selectionModel().selectedRows()
        return sorted({i.data(ID_ROLE) for i in rows})

    # -- actions -----------------------------------------------------------------------
    def add_files(self) -> None:
        """Ask for documents and ingest them."""
        self.add_paths(self.interaction.choose_files())

    def add_folder(self) -> None:
        """Ask for a folder and ingest every document in it."""
        folder = self.interaction.choose_folder()
        if folder is not None:
            self.add_paths([folder])

    def add_paths(self, paths: list[Path]) -> None:
        """Ingest files or folders (queued while a run is busy)."""
        if not paths:
            return
        queued = self.controller.busy
        self.controller.add(paths)
        if queued:
            self.message.emit(f"{len(paths)} item(s) will be added when the current run ends.")

    def delete_selected(self) -> None:
        """Delete the selected documents after saying what will go with them."""
        ids = self.selected_ids()
        if not ids or self.controller.busy or self.deletion_read is not None:
            return
        rows = [r for r in (self.model.row_by_id(i) for i in ids) if r is not None]
        self.deletion_read = self.controller.tasks.run(
            READ_DELETION,
            self.controller.workspace.read_job(lambda store: entities_only_in(store, [r.id for r in rows])),
            on_success=lambda going: self._confirm_delete(rows, going),
            on_failure=self._deletion_read_failed)

    def _deletion_read_failed(self, failure: TaskFailure) -> None:
        self.deletion_read = None
        self._show_notice(failure.message, error=True)

    def _confirm_delete(self, rows: list, going: list[str]) -> None:
        self.deletion_read = None
        if self.controller.busy or not self.controller.workspace.is_open:
            return
        ids = [r.id for r in rows]
        names = ", ".join(going[:LISTED_ENTITIES]) + (f" and {len(going) - LISTED_ENTITIES} more"
                                                      if len(going) > LISTED_ENTITIES else "")
        what = rows[0].name if len(rows) == 1 else f"{len(rows)} documents"
        chunks = sum(r.chunks for r in rows)
        details = (f"{chunks} chunks and their extracted records will be removed. "
                   + (f"{len(going)} entities are found only here and will disappear: {names}."
                      if going else "No entity disappears: other documents mention all of them."))
        if self.interaction.confirm("Delete Documents", f"Delete {what} from this workspace?", "Delete", details):
            self.controller.delete(ids)

    # -- signals -----------------------------------------------------------------------
    def _on_progress(self, item: object) -> None:
        if isinstance(item, Progress):
            if item.stage == "load" and item.document_path:
                self.reader.read_changed([item.document_path])
            elif item.stage == "extract":  # files are also stored while extraction runs
                self.reader.read_changed([item.document_path] if item.document_path else [], with_work=True)

    def _on_state_changed(self) -> None:
        self._show_run()
        self.model.status_changed()
        self._update_buttons()

    def _show_run(self) -> None:
        """Draw the stage label, the bar, the notice and the failures from the one run state."""
        state = self.controller.run_state()
        self.stage_label.setText(state.text)
        self.stage_label.setToolTip(plain_tip(state.text))  # whole, should two lines not hold it
        total = max(1, state.total)
        self.overall_bar.setRange(0, total)
        self.overall_bar.setValue(min(state.done, total) if state.active else (total if state.phase == "done" else 0))
        self.overall_bar.setFormat(f"{state.done}/{state.total}" if state.active and state.total else "")
        self.overall_bar.setVisible(state.active)
        self.eta_label.setText(f"ETA {duration(state.eta)}" if state.eta and state.phase == "running" else "")
        self.notice.setText(state.summary if not state.active else "")
        restyle(self.notice, error_style() if state.phase == "failed" else "")
        self.notice.setVisible(bool(self.notice.text()))
        lines = [f"{document}: {reason}" for document, reason in state.failures]
        self.failures_label.setText("Could not be added:\n" + "\n".join(lines) if lines else "")
        self.failures_label.setVisible(bool(lines))

    def _on_finished(self, summary: str) -> None:
        self._show_run()
        self.message.emit(summary)

    def _show_notice(self, text: str, error: bool = False) -> None:
        self.notice.setText(text)
        restyle(self.notice, error_style() if error else "")
        self.notice.setVisible(bool(text))

    def _update_buttons(self) -> None:
        c = self.controller
        ingesting = c.busy and c.kind == "ingest"
        self.pause_button.setEnabled(ingesting and not c.paused)
        self.cancel_button.setEnabled(ingesting)
        can_resume = c.can_resume()
        self.resume_button.setEnabled(can_resume)
        self.retry_button.setEnabled(self.reader.has_failures())
        self.delete_button.setEnabled(not c.busy and bool(self.table.selectionModel().selectedRows()))
        pending = 0 if c.busy or not c.workspace.is_open else c.workspace.pending_chunks()
        self.resume_banner.setVisible(bool(pending))
        if pending:
            self.resume_label.setText(f"{pending} chunks were not extracted when the last run stopped. "
                                      "Resume picks them up where it left off.")
        if c.queue:
            self.eta_label.setText(f"{len(c.queue)} more waiting")

    def shutdown(self) -> None:
        """Stop reading (the workspace is closing)."""
        self.reader.shutdown()

    # -- drag and drop (Qt overrides) --------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        """Accept local files and folders."""
        if any(url.isLocalFile() for url in event.mimeData().urls()):
            event.acceptProposedAction()

    def dragMoveEvent(self, event) -> None:
        """Keep accepting while the drag moves over the panel."""
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        """Ingest what was dropped."""
        paths = [Path(url.toLocalFile()) for url in event.mimeData().urls() if url.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.add_paths(paths)
