"""The "Evaluate…" dialog of the chat: run a saved question set in every mode, see the table.

The question file is JSON lines (see `core.jobs.evaluate`); the run goes on the window's
runner, off the GUI thread, and can be stopped. The table shows per mode the share answered
correctly, the evidence found and the seconds per question, and one line names the best
mode against naive.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from docatlas.core.base.progress import Progress
from docatlas.core.jobs.evaluate import ModeScore, best_line
from docatlas.gui.jobs.evaluation import evaluation_job
from docatlas.gui.tasks import BackgroundTask, TaskFailure, TaskRunner

HELP = ('A question set is a text file with one JSON object a line: {"question": "…", "answer": "…"}, '
        'or "documents": ["report.pdf"], or "absent": true for a question the documents cannot answer.')
COLUMNS = ("Mode", "Correct", "Evidence found", "Seconds per question")


class EvaluationDialog(QDialog):
    """Pick a question file, run it in every mode, read the scores."""

    def __init__(self, tasks: TaskRunner, db_path: Path, settings: Callable, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Evaluate the answers")
        self.tasks, self.db_path, self.settings = tasks, db_path, settings
        self.task: BackgroundTask | None = None
        self.scores: list[ModeScore] = []
        self.stopped = False
        self.choose_file: Callable[[], str] = self._choose_file  # tests replace it
        intro = QLabel(HELP, wordWrap=True)
        intro.setTextFormat(Qt.TextFormat.PlainText)
        self.path_edit = QLineEdit(placeholderText="Question file (.jsonl)")
        self.browse_button = QPushButton("Browse…", clicked=self.browse)
        self.run_button = QPushButton("Run", clicked=self.run)
        self.stop_button = QPushButton("Stop", clicked=self.stop)
        row = QHBoxLayout()
        for widget, stretch in ((self.path_edit, 1), (self.browse_button, 0), (self.run_button, 0),
                                (self.stop_button, 0)):
            row.addWidget(widget, stretch)
        self.progress = QProgressBar()
        self.status = QLabel("Choose a question file and press Run.", wordWrap=True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.best = QLabel("")
        self.best.setTextFormat(Qt.TextFormat.PlainText)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(row)
        for widget in (self.progress, self.status):
            layout.addWidget(widget)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.best)
        self.resize(640, 420)
        self._update_buttons()

    def _choose_file(self) -> str:
        name, _ = QFileDialog.getOpenFileName(self, "Question Set", str(Path.home()),
                                              "Question sets (*.jsonl *.json *.txt);;All files (*)")
        return name

    def browse(self) -> None:
        """Pick the question file."""
        name = self.choose_file()
        if name:
            self.path_edit.setText(name)

    def run(self) -> None:
        """Start the evaluation on the runner."""
        text = self.path_edit.text().strip()
        if not text or self.task is not None:
            self.status.setText("Choose a question file first.")
            return
        self.table.setRowCount(0)
        self.best.setText("")
        self.status.setText("Starting…")
        job = evaluation_job(self.db_path, self.settings(), Path(text).expanduser())
        self.task = self.tasks.run("Evaluating", job, on_progress=self._on_progress, on_success=self._on_scores,
                                   on_failure=self._on_failure, on_finished=self._on_finished)
        self._update_buttons()

    def stop(self) -> None:
        """Stop the run at the next question."""
        if self.task is not None:
            self.task.cancel()
            self.status.setText("Stopping…")

    def _on_progress(self, progress: object) -> None:
        if isinstance(progress, Progress):
            self.stopped = progress.stage == "cancelled"
            self.progress.setRange(0, max(1, progress.step_total))
            self.progress.setValue(progress.step_done)
            self.status.setText(progress.message)

    def _on_scores(self, scores: object) -> None:
        self.scores = list(scores) if isinstance(scores, list) else []
        self.table.setRowCount(len(self.scores))
        for row, s in enumerate(self.scores):
            cells = (s.mode, f"{s.correct} of {s.questions} ({s.correct_share:.0%})",
                     "–" if s.evidence is None else f"{s.evidence:.0%}", f"{s.seconds_each:.1f} s")
            for column, text in enumerate(cells):
                self.table.setItem(row, column, QTableWidgetItem(text))
        self.best.setText(best_line(self.scores))
        failures = [f for s in self.scores for f in s.failures]
        if self.stopped:
            self.status.setText("Stopped; the table counts the questions asked so far.")
        elif failures:
            self.status.setText(f"Finished; {len(failures)} answers failed and count as wrong, e.g. {failures[0]}")
        else:
            self.status.setText("Finished.")

    def _on_failure(self, failure: TaskFailure) -> None:
        self.status.setText("The evaluation was stopped." if failure.cancelled else failure.message)

    def _on_finished(self) -> None:
        self.task = None
        self._update_buttons()

    def _update_buttons(self) -> None:
        busy = self.task is not None
        self.run_button.setEnabled(not busy)
        self.browse_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)

    def done(self, result: int) -> None:
        """Closing the dialog stops a run in progress."""
        self.stop()
        super().done(result)
