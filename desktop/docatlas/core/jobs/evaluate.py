"""Evaluate: a saved question set asked in every mode on the user's own workspace.

The question file has one JSON object a line (blank lines and lines starting with # are
skipped):

    {"question": "Whom did Maria Lopez hire?", "answer": "Jonas Weber"}
    {"question": "Which labs buy sensors?", "answer": ["Northwind Labs"], "documents": ["beta.md"]}
    {"question": "Who founded Acme?", "absent": true}

`answer` (a text or a list) must all appear in the answer (any case); `documents` (file
name, path or title) are where the evidence should come from; `absent: true` means the
documents do not hold the answer, so the right answer declines with no references.

Per mode the report gives the share answered correctly, the evidence found (the share of
expected documents among the context's and the references' documents, or, without
documents, the share of expected answers present in the context) and the seconds per
question. Answers are asked afresh (no answer cache, no reply cache), so the times are the
model's.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from docatlas.core.base.errors import Cancelled, DocAtlasError, ModelNotFound, OllamaUnreachable
from docatlas.core.base.progress import Progress
from docatlas.core.base.settings import Settings
from docatlas.core.llm.protocol import LLM
from docatlas.core.retrieval.absent import DECLINE_MARK
from docatlas.core.retrieval.answer import MODES, Answer, ask
from docatlas.core.storage.database import Store

EVALUATED_MODES = ("naive", "local", "global", "hybrid", "mix")
MAX_QUESTIONS = 1000


class QuestionFileError(DocAtlasError):
    """The question file cannot be read as a question set."""


@dataclass(frozen=True)
class Expected:
    """One question of the set and what a right answer holds."""

    question: str
    answers: tuple[str, ...] = ()
    documents: tuple[str, ...] = ()
    absent: bool = False


@dataclass
class ModeScore:
    """How one mode did on the set."""

    mode: str
    questions: int = 0
    correct: int = 0
    evidence_sum: float = 0.0
    evidence_count: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)

    @property
    def correct_share(self) -> float:
        """Share of the questions answered correctly."""
        return self.correct / self.questions if self.questions else 0.0

    @property
    def evidence(self) -> float | None:
        """Mean evidence found, None when no question names any."""
        return self.evidence_sum / self.evidence_count if self.evidence_count else None

    @property
    def seconds_each(self) -> float:
        """Mean seconds per question."""
        return self.seconds / self.questions if self.questions else 0.0

    def to_json(self) -> dict:
        """The row of `evaluate --json`."""
        return {"mode": self.mode, "questions": self.questions, "correct": self.correct,
                "correct_share": round(self.correct_share, 4),
                "evidence": None if self.evidence is None else round(self.evidence, 4),
                "seconds_per_question": round(self.seconds_each, 3), "failures": self.failures}


def _texts(value: object, what: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) and i.strip() for i in items):
        raise QuestionFileError(f"{where}: \"{what}\" must be a text or a list of texts.")
    return tuple(i.strip() for i in items)


def read_questions(path: Path) -> list[Expected]:
    """The question set in a JSON-lines file; a bad line is named in one sentence."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise QuestionFileError(f"Cannot read the question file {path.name} ({exc.__class__.__name__}); "
                                "give a UTF-8 text file with one JSON object a line.") from None
    out = []
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"Line {number} of {path.name}"
        try:
            data = json.loads(line)
        except ValueError:
            raise QuestionFileError(f"{where} is not JSON; write one object a line, "
                                    'e.g. {"question": "...", "answer": "..."}.') from None
        if not isinstance(data, dict) or not isinstance(data.get("question"), str) or not data["question"].strip():
            raise QuestionFileError(f"{where} has no \"question\" text.")
        item = Expected(data["question"].strip(), _texts(data.get("answer", data.get("answers")), "answer", where),
                        _texts(data.get("documents"), "documents", where), data.get("absent") is True)
        if not (item.answers or item.documents or item.absent):
            raise QuestionFileError(f"{where} says nothing to check: give \"answer\", \"documents\" or "
                                    "\"absent\": true.")
        out.append(item)
    if not out:
        raise QuestionFileError(f"{path.name} holds no questions; write one JSON object a line.")
    if len(out) > MAX_QUESTIONS:
        raise QuestionFileError(f"{path.name} holds {len(out)} questions; split it into sets of at most "
                                f"{MAX_QUESTIONS}.")
    return out


def _matches(document: str, path: str, title: str) -> bool:
    want = document.casefold()
    return want in (path.casefold(), PurePath(path).name.casefold(), title.casefold())


def contains(text: str, wanted: str) -> bool:
    """True when `wanted` is in `text` as a whole (any case): "4" is not found in "14"."""
    return re.search(rf"(?<!\w){re.escape(wanted)}(?!\w)", text, re.IGNORECASE) is not None


def judge(expected: Expected, answer: Answer) -> tuple[bool, float | None]:
    """(answered correctly, evidence found or None) for one answer."""
    text = answer.answer.casefold()
    declines = DECLINE_MARK in text
    if expected.absent:
        return declines and not answer.references, None
    sources = [(c.path, c.title) for c in answer.context.chunks] + [(r.document, r.title) for r in answer.references]
    found_docs = [d for d in expected.documents if any(_matches(d, p, t) for p, t in sources)]
    if expected.answers:
        right = all(contains(answer.answer, a) for a in expected.answers)
    else:
        cited = [(r.document, r.title) for r in answer.references if r.cited] or sources
        right = not declines and any(_matches(d, p, t) for d in expected.documents for p, t in cited)
    if expected.documents:
        evidence = len(found_docs) / len(expected.documents)
    else:
        evidence = sum(contains(answer.context.text, a) for a in expected.answers) / len(expected.answers)
    return right, evidence


def best_line(scores: list[ModeScore]) -> str:
    """One sentence naming the mode with the most correct answers and its lead over naive."""
    if not scores:
        return ""
    best = max(scores, key=lambda s: (s.correct, -s.seconds_each))
    naive = next((s for s in scores if s.mode == "naive"), None)
    if naive is None or best.mode == "naive":
        return f"Best: {best.mode}, {best.correct} of {best.questions} correct."
    return (f"Best: {best.mode}, {best.correct} of {best.questions} correct, {best.correct - naive.correct} more "
            "than naive.")


def evaluate(store: Store, llm: LLM, settings: Settings, questions: Sequence[Expected],
             modes: Sequence[str] = EVALUATED_MODES, scores: list[ModeScore] | None = None,
             cancel: threading.Event | None = None) -> Iterator[Progress]:
    """Ask every question in every mode, filling `scores` (one per mode); yields a Progress a question.

    A question the model fails on counts as wrong and its sentence is kept in the mode's
    failures; Ollama unreachable or the user stopping ends the run (the scores so far stay).
    """
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise DocAtlasError(f"There is no query mode called {unknown[0]!r}; choose from: {', '.join(MODES)}.")
    scores = [] if scores is None else scores
    started = time.perf_counter()
    total = len(questions) * len(modes)
    done = 0
    for mode in modes:
        score = ModeScore(mode)
        scores.append(score)
        for item in questions:
            if cancel is not None and cancel.is_set():
                yield Progress("cancelled", "Evaluation stopped.", step_done=done, step_total=total,
                               elapsed=time.perf_counter() - started)
                return
            began = time.perf_counter()
            try:
                answer = ask(store, llm, item.question, settings, mode=mode, cancel=cancel, use_cache=False)
            except Cancelled:
                yield Progress("cancelled", "Evaluation stopped.", step_done=done, step_total=total,
                               elapsed=time.perf_counter() - started)
                return
            except (OllamaUnreachable, ModelNotFound):
                raise
            except DocAtlasError as exc:
                score.failures.append(f"{item.question[:60]}: {exc.message}")
                answer = None
            score.seconds += time.perf_counter() - began
            score.questions += 1
            if answer is not None:
                right, evidence = judge(item, answer)
                score.correct += right
                if evidence is not None:
                    score.evidence_sum += evidence
                    score.evidence_count += 1
            done += 1
            yield Progress("evaluate", f"{mode}: question {score.questions} of {len(questions)}",
                           step_done=done, step_total=total, elapsed=time.perf_counter() - started)
    yield Progress("done", "Evaluation finished.", step_done=done, step_total=total,
                   elapsed=time.perf_counter() - started)
