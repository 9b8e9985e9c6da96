"""The `query` command: an answer streamed with its sources, or JSON.

With `--budget N` (default: the `query.read_budget` setting) the question first spends up to N
model calls reading the passages it needs that the model has not read yet (`jobs.budgeted`);
on a terminal the calls spent are shown on stderr as they go, and the notes say what was read
and whether it is in the graph now (`--json`: `reading`)."""

from __future__ import annotations

import argparse
import json
import sys

from docatlas.cli.common import workspace_models
from docatlas.cli.guards import clean
from docatlas.core.base.errors import DocAtlasError
from docatlas.core.base.progress import Progress
from docatlas.core.base.settings import Settings
from docatlas.core.base.text import json_for_terminal
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.retrieval.answer import ask
from docatlas.core.retrieval.context import page_label
from docatlas.core.storage.database import Store


def cmd_query(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """Answer a question from the graph: streamed text and sources, or JSON."""
    streamed = False
    settings = workspace_models(args, store, settings)

    def show(piece: str) -> None:
        nonlocal streamed
        streamed = True
        sys.stdout.write(clean(piece))  # the model's text never drives the terminal
        sys.stdout.flush()

    budget = args.budget if getattr(args, "budget", None) is not None else max(0, settings.query.read_budget)
    shown_spent = False

    def spent(step: Progress) -> None:
        nonlocal shown_spent
        if sys.stderr.isatty():  # redrawn in place; elsewhere the notes below say what was read
            shown_spent = True
            sys.stderr.write("\r" + clean(step.message) + "\x1b[K")
            sys.stderr.flush()

    llm = OllamaLLM(settings.ollama, cache=store)
    try:
        if budget:  # the extraction side loads only for a question that reads
            from docatlas.core.jobs.budgeted import ask_within

            answer = ask_within(store, llm, " ".join(args.text), settings, budget, mode=args.mode,
                                on_token=None if args.json else show, on_progress=spent)
        else:
            answer = ask(store, llm, " ".join(args.text), settings, mode=args.mode,
                         on_token=None if args.json else show)
    except DocAtlasError:
        if streamed:  # the error sentence goes below the unfinished answer
            print()
        raise
    finally:
        if shown_spent:
            sys.stderr.write("\r\x1b[K")
        llm.close()
    for warning in answer.warnings:
        print(f"note: {clean(warning)}", file=sys.stderr)
    if args.json:
        print(json_for_terminal(json.dumps(answer.to_json(), indent=2, ensure_ascii=False)))
        return 0
    print()
    sources = [r for r in answer.references if r.cited] or list(answer.references)
    if sources:
        print("\nSources:")
        for ref in sources:
            label = f"[{ref.label}] " if ref.label else ""
            by = f" — {ref.byline}" if ref.byline else ""
            pages = page_label(ref.page, ref.page if ref.quote else ref.page_end)
            print(clean(f"  {label}{ref.document}{pages} (chunk {ref.chunk}){by}"))
            if ref.quote:
                print(clean(f"      \u201c{ref.quote}\u201d"))
    print(f"\n{clean(answer.rests_on)}")  # the layers it drew on: the model's graph, what it read, names only
    return 0

