"""Trying an extraction prompt on a chunk: the raw reply beside what was read from it, and a
second prompt (the default, the saved one, an older version) side by side for comparison."""

from __future__ import annotations

from PySide6.QtCore import QStringListModel, Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from docatlas.gui.jobs.prompts import TrialRun

NOT_EXTRACTION = ("Trying on a chunk is for the extraction prompts (extraction, gleaning, loop check, examples): "
                  "their replies become the graph's records. The other prompts are used by merging and questions.")
NO_CHUNKS = "Add documents first: a prompt is tried on one of their chunks."


class TrialResultView(QWidget):
    """One run: its numbers, the raw reply, and the entities and relations read from it."""

    def __init__(self, title: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.title_label = QLabel(title)
        font = self.title_label.font()
        font.setWeight(QFont.Weight.Bold)
        self.title_label.setFont(font)
        self.stats_label = QLabel(wordWrap=True)
        self.raw_view = QPlainTextEdit(readOnly=True)
        self.raw_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.raw_view.setPlaceholderText("The model's reply, as it came")
        self.entity_table = _table(["Name", "Type", "Description"])
        self.relation_table = _table(["Source", "Target", "Keywords", "Description", "Strength"])
        parsed = QWidget()
        column = QVBoxLayout(parsed)
        column.setContentsMargins(0, 0, 0, 0)
        self.entities_label = QLabel("Entities")
        self.relations_label = QLabel("Relations")
        for widget in (self.entities_label, self.entity_table, self.relations_label, self.relation_table):
            column.addWidget(widget)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.raw_view)
        split.addWidget(parsed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        head = QHBoxLayout()
        head.addWidget(self.title_label)
        head.addWidget(self.stats_label, 1)
        layout.addLayout(head)
        layout.addWidget(split, 1)

    def clear(self, note: str = "") -> None:
        """Empty the view (with a note in place of the numbers)."""
        self.stats_label.setText(note)
        self.raw_view.setPlainText("")
        self.entity_table.setRowCount(0)
        self.relation_table.setRowCount(0)

    def show_run(self, run: TrialRun) -> None:
        """Show one finished run."""
        self.title_label.setText(run.label)
        self.stats_label.setText(run.summary())
        replies = run.result.raw_replies
        self.raw_view.setPlainText(replies[0] if len(replies) == 1 else "\n\n".join(
            f"--- reply {n} ---\n{text}" for n, text in enumerate(replies, 1)))
        _fill(self.entity_table, [(e.name, e.type, e.description) for e in run.result.entities])
        _fill(self.relation_table, [(r.source, r.target, r.keywords, r.description,
                                     "" if r.strength is None else f"{r.strength:g}") for r in run.result.relations])
        self.entities_label.setText(f"Entities ({len(run.result.entities)})")
        self.relations_label.setText(f"Relations ({len(run.result.relations)})")


class TrialView(QWidget):
    """Pick a chunk (and, to compare, a second prompt), try, and read the results side by side."""

    chunk_changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.note_label = QLabel(wordWrap=True)
        self.note_label.setEnabled(False)
        self.chunk_combo = QComboBox(minimumContentsLength=30)
        # the labels in one string list (set in one call, however many chunks), the ids beside them
        self._chunk_labels = QStringListModel(self)
        self._chunk_ids: list[int] = []
        self.chunk_combo.setModel(self._chunk_labels)
        self.chunk_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.chunk_combo.currentIndexChanged.connect(lambda _i: self.chunk_changed.emit())
        self.compare_combo = QComboBox()
        self.fresh_check = QCheckBox("Ask the model again (not from the reply cache)")
        self.fresh_check.setToolTip("For timing: a reply from the cache takes no time at all")
        self.run_button = QPushButton("Try")
        self.run_button.setToolTip("Send the prompt, as it is in the editor, to the current model; "
                                   "nothing is added to the graph")
        self.stop_button = QPushButton("Stop", enabled=False)
        self.status_label = QLabel(wordWrap=True)
        self.result_a = TrialResultView("This text")
        self.result_b = TrialResultView("Compared with")
        self.result_b.hide()
        picks = QHBoxLayout()
        picks.addWidget(QLabel("Chunk:"))
        picks.addWidget(self.chunk_combo, 2)
        picks.addWidget(QLabel("Compare with:"))
        picks.addWidget(self.compare_combo, 1)
        runs = QHBoxLayout()
        runs.addWidget(self.run_button)
        runs.addWidget(self.stop_button)
        runs.addWidget(self.fresh_check)
        runs.addStretch(1)
        results = QSplitter(Qt.Orientation.Vertical)
        results.addWidget(self.result_a)
        results.addWidget(self.result_b)
        layout = QVBoxLayout(self)
        layout.addWidget(self.note_label)
        layout.addLayout(picks)
        layout.addLayout(runs)
        layout.addWidget(self.status_label)
        layout.addWidget(results, 1)

    def set_chunks(self, chunks: list[tuple[int, str]]) -> None:
        """(chunk id, label) of every chunk that can be tried; keeps the choice when it is still there."""
        chosen = self.chunk_id()
        self.chunk_combo.blockSignals(True)
        self._chunk_ids = [chunk_id for chunk_id, _label in chunks]
        self._chunk_labels.setStringList([label for _chunk_id, label in chunks])
        index = self._chunk_ids.index(chosen) if chosen in self._chunk_ids else 0
        self.chunk_combo.setCurrentIndex(index if chunks else -1)
        self.chunk_combo.blockSignals(False)
        if self.chunk_id() != chosen:
            self.chunk_changed.emit()

    def chunk_id(self) -> int | None:
        """The chunk chosen, if any."""
        index = self.chunk_combo.currentIndex()
        return self._chunk_ids[index] if 0 <= index < len(self._chunk_ids) else None

    def set_comparisons(self, entries: list[tuple[str, str]]) -> None:
        """(label, text) of the prompts this one can be compared with; the first choice is none."""
        self.compare_combo.clear()
        self.compare_combo.addItem("Nothing (try this text only)", None)
        for label, text in entries:
            self.compare_combo.addItem(label, text)

    def comparison(self) -> tuple[str, str] | None:
        """(label, text) to compare with, or None."""
        text = self.compare_combo.currentData()
        return (self.compare_combo.currentText(), text) if text is not None else None

    def set_usable(self, extraction: bool, has_chunks: bool) -> None:
        """Enable trying for extraction prompts when there is a chunk; say why not otherwise."""
        self.note_label.setText("" if extraction and has_chunks else NOT_EXTRACTION if not extraction else NO_CHUNKS)
        self.note_label.setVisible(not (extraction and has_chunks))
        for widget in (self.chunk_combo, self.compare_combo, self.fresh_check, self.run_button):
            widget.setEnabled(extraction and has_chunks)

    def set_running(self, running: bool, comparing: bool = False) -> None:
        """Show a run starting or ending."""
        self.run_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        if running:
            self.status_label.setText("Asking the model…")
            self.result_a.clear("Waiting for the model…")
            self.result_b.clear("Waiting for the model…")
            self.result_b.setVisible(comparing)

    def show_run(self, index: int, run: TrialRun) -> None:
        """Show the first (index 0) or the compared (index 1) run."""
        (self.result_a if index == 0 else self.result_b).show_run(run)


def _table(headers: list[str]) -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setHorizontalHeaderLabels(headers)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.verticalHeader().hide()
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    table.horizontalHeader().setStretchLastSection(True)
    return table


def _fill(table: QTableWidget, rows: list[tuple[str, ...]]) -> None:
    table.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            table.setItem(r, c, QTableWidgetItem(value))
    table.resizeColumnsToContents()
