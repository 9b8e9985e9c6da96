"""The evaluation job of the chat's "Evaluate…" dialog: a question set asked in every mode."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from docatlas.core.base.progress import Progress
from docatlas.core.base.settings import Settings
from docatlas.core.jobs.evaluate import EVALUATED_MODES, ModeScore, evaluate, read_questions
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.storage.database import Store
from docatlas.gui.tasks import Job, TaskContext


def evaluation_job(db_path: Path, settings: Settings, questions: Path,
                   modes: Sequence[str] = EVALUATED_MODES) -> Job:
    """Read the question file and ask it in each mode; progress per question, the scores as result."""
    def run(context: TaskContext) -> Iterator[Progress]:
        expected = read_questions(questions)  # read here, off the GUI thread: the file may be large
        scores: list[ModeScore] = []
        with Store(db_path) as store:
            llm = OllamaLLM(settings.ollama)  # no reply cache: the times are the model's
            try:
                yield from evaluate(store, llm, settings, expected, modes, scores, cancel=context.cancel)
            finally:
                llm.close()
        return scores
    return run
