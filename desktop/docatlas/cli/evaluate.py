"""The `evaluate` command: a saved question set asked in every mode, scored per mode."""

from __future__ import annotations

import argparse
import json
import sys

from docatlas.core.base.settings import Settings
from docatlas.core.jobs.evaluate import EVALUATED_MODES, ModeScore, best_line, evaluate, read_questions
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.storage.database import Store


def plain(text: str) -> str:
    """Text safe for a terminal: control characters (escape sequences too) become spaces."""
    return "".join(c if c.isprintable() else " " for c in text)


def score_table(scores: list[ModeScore]) -> list[str]:
    """The report as lines: per mode correct, evidence, seconds; then the best mode against naive."""
    lines = [f"{'mode':<8} {'correct':>14} {'evidence':>9} {'s/question':>11}"]
    for s in scores:
        evidence = "-" if s.evidence is None else f"{s.evidence:.2f}"
        lines.append(f"{s.mode:<8} {f'{s.correct}/{s.questions} ({s.correct_share:.0%})':>14} {evidence:>9} "
                     f"{s.seconds_each:>11.2f}")
    lines.append(best_line(scores))
    return lines


def cmd_evaluate(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """Ask the questions of a JSON-lines file in each mode and print the scores."""
    questions = read_questions(args.questions)
    modes = tuple(args.modes) if args.modes else EVALUATED_MODES
    scores: list[ModeScore] = []
    llm = OllamaLLM(settings.ollama)  # no reply cache: the times are the model's
    tty = sys.stderr.isatty()
    try:
        for p in evaluate(store, llm, settings, questions, modes, scores):
            if p.stage == "evaluate" and tty:
                sys.stderr.write(f"\r{p.message} ({p.step_done}/{p.step_total})\x1b[K")
                sys.stderr.flush()
    finally:
        llm.close()
        if tty:
            sys.stderr.write("\r\x1b[K")
    for s in scores:
        for failure in s.failures:
            print(f"note: {s.mode}: {plain(failure)}", file=sys.stderr)
    if args.json:
        print(json.dumps({"questions": len(questions), "modes": [s.to_json() for s in scores],
                          "best": best_line(scores)}, indent=2, ensure_ascii=False))
        return 0
    print(f"{len(questions)} questions from {plain(args.questions.name)}, model {plain(settings.ollama.model)}")
    print("\n".join(score_table(scores)))
    return 0
