"""Review ungrounded records: what the model named that its chunk's text does not contain.

A dialog (Documents > Review Ungrounded Records…) listing the held-back records with their
document and reason; "Add to Graph" accepts the selected one, which then joins the graph.
The list is read on the runner's reader threads and the accept runs on its writer thread;
model output is shown as plain text, never as markup.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from docatlas.core.jobs.review import accept_record
from docatlas.core.storage import ungrounded
from docatlas.gui.jobs import write_job
from docatlas.gui.jobs.graph import read_job
from docatlas.gui.tasks import TaskFailure, TaskRunner

COLUMNS = ("Record", "Reason", "Document")
LIMIT = 500


def record_text(row: ungrounded.UngroundedRow) -> str:
    """`Felix (person)` or `Fred → Felix`."""
    return f"{row.name} → {row.target}" if row.kind == "relation" else f"{row.name} ({row.type})"


class UngroundedReview(QDialog):
    """The list of held-back records, with a button that adds the selected one to the graph."""

    def __init__(self, tasks: TaskRunner, db_path: Path, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Review Ungrounded Records")
        self.tasks, self.db_path = tasks, db_path
        self.rows: list[ungrounded.UngroundedRow] = []
        self.summary = QLabel("Reading…")
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().hide()
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self.accept_button = QPushButton("Add to Graph")
        self.accept_button.setEnabled(False)
        self.accept_button.setToolTip("Keep the selected record: it joins the graph and stays after a rebuild")
        self.accept_button.clicked.connect(self.accept_selected)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(self.accept_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.resize(760, 420)
        self.reload()

    def reload(self) -> None:
        """Read the list again (on a reader thread)."""
        def read(store):
            return ungrounded.list_ungrounded(store, limit=LIMIT), ungrounded.ungrounded_count(store)
        self.tasks.run("Reading ungrounded records", read_job(self.db_path, read), key="ungrounded-review",
                       on_success=self._show, on_failure=self._failed)

    def accept_selected(self) -> None:
        """Add the selected record to the graph (on the writer thread), then read the list again."""
        row = self._selected()
        if row is None:
            return
        self.accept_button.setEnabled(False)
        self.summary.setText(f"Adding {record_text(row)} to the graph…")
        self.tasks.run("Adding a record to the graph", write_job(self.db_path, lambda s: accept_record(s, row.id)),
                       writes=True, on_success=self._accepted, on_failure=self._failed)

    def _accepted(self, _record: object) -> None:
        self.reload()
        refresh = getattr(self.parent(), "refresh", None)  # the window reads the workspace again
        if callable(refresh):
            refresh()

    def _show(self, found: object) -> None:
        rows, total = found  # type: ignore[misc]
        self.rows = list(rows)
        self.table.setRowCount(len(self.rows))
        for position, row in enumerate(self.rows):
            for column, text in enumerate((record_text(row), row.reason, Path(row.document).name)):
                item = QTableWidgetItem(text)
                if column == 2:
                    item.setToolTip(row.document)
                self.table.setItem(position, column, item)
        shown = f"{len(self.rows)} of {total}" if total > len(self.rows) else str(total)
        self.summary.setText(
            f"{shown} records name things their text does not contain; they are not in the graph. "
            "Select one and press Add to Graph to keep it." if total else
            "No record waits for review: everything the model named is in its text.")
        self._selection_changed()

    def _failed(self, failure: TaskFailure) -> None:
        self.summary.setText(failure.message)
        self._selection_changed()

    def _selected(self) -> ungrounded.UngroundedRow | None:
        picked = self.table.selectionModel().selectedRows()
        return self.rows[picked[0].row()] if picked and picked[0].row() < len(self.rows) else None

    def _selection_changed(self) -> None:
        self.accept_button.setEnabled(self._selected() is not None)


def show_ungrounded_review(tasks: TaskRunner, db_path: Path, parent: QWidget | None = None) -> UngroundedReview:
    """Open the review dialog (not modal: the window stays usable)."""
    dialog = UngroundedReview(tasks, db_path, parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog
