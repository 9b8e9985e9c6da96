"""`docatlas ungrounded`: the records the model gave that their chunk's text does not contain.

Lists them (id, document, the record, why it was held back); `--accept ID` adds one to the
graph. Model output is shown with control characters replaced, never raw.
"""

from __future__ import annotations

import argparse
import json

from docatlas.cli.common import UserError, writing
from docatlas.core.base.settings import Settings
from docatlas.core.graph.summarize import ModelSummarizer
from docatlas.core.jobs.review import NoSuchRecord, accept_record
from docatlas.core.llm.replay import ReplayLLM
from docatlas.core.prompts import store as prompt_store
from docatlas.core.storage import ungrounded
from docatlas.core.storage.database import Store

LIMIT = 500


def terminal_safe(text: str) -> str:
    """Text fit for a terminal: control characters (escape sequences, bells) become `?`."""
    return "".join(ch if ch.isprintable() else "?" for ch in str(text))


def describe(row: ungrounded.UngroundedRow) -> str:
    """One line for a record: `entity Felix (person)` or `relation Fred -> Felix`."""
    if row.kind == "relation":
        return f"relation {terminal_safe(row.name)} -> {terminal_safe(row.target)}"
    return f"entity {terminal_safe(row.name)} ({terminal_safe(row.type)})"


def cmd_ungrounded(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """List the ungrounded records, or accept one into the graph."""
    if args.accept:
        summarize = ModelSummarizer(ReplayLLM(settings.ollama, store), settings.extraction,
                                    template=prompt_store.merge_template(store, "summarize"))
        try:
            with writing(args, store, "accept"):
                row = accept_record(store, args.accept, summarize=summarize)
        except NoSuchRecord as exc:
            raise UserError(str(exc)) from exc
        print(f"Added {describe(row)} to the graph.")
        return 0
    rows = ungrounded.list_ungrounded(store, limit=LIMIT)
    if args.json:
        print(json.dumps([{"id": r.id, "document": r.document, "kind": r.kind, "name": r.name, "type": r.type,
                           "target": r.target, "description": r.description, "reason": r.reason}
                          for r in rows], indent=2, ensure_ascii=False))
        return 0
    for r in rows:
        print(f"  [{r.id}] {describe(r)}: {terminal_safe(r.reason)}  ({terminal_safe(r.document)})")
    total = ungrounded.ungrounded_count(store)
    shown = f"{len(rows)} of {total}" if total > len(rows) else str(total)
    print(f"{shown} records wait for review" + ("; add one to the graph with `docatlas ungrounded --accept ID`."
                                                if total else "."))
    return 0
