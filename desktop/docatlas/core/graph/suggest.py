"""Merge suggestions: likely duplicate entities, stored, and merged only when someone says so.

`suggest_merges` scores the names of the graph's entities (see `similarity.py`) and keeps
the likely pairs in `merge_suggestions` as `open`. Nothing is merged until a suggestion is
accepted - by the user (`accept`), or by the model when asked (`confirm_with_model`). A
rejected pair is never suggested again. Accepting files the merged-away key as an alias
of the surviving one (`entity_aliases`) and re-derives both from the per-chunk records;
the names the model wrote are kept, so `unmerge` can take it back.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from docatlas.core.base.keys import entity_key
from docatlas.core.graph.merge import Summarizer, rebuild
from docatlas.core.graph.similarity import MIN_SCORE, Named, find_duplicates
from docatlas.core.ingest.extract import yes_or_no
from docatlas.core.llm.protocol import LLM
from docatlas.core.prompts.catalog import render
from docatlas.core.prompts.store import merge_template
from docatlas.core.storage import graph as graph_rows
from docatlas.core.storage import overrides as override_rows
from docatlas.core.storage import suggestions as suggestion_rows
from docatlas.core.storage.database import Store

CHECK_TOKENS = 8
_DESCRIPTION_CHARS = 400  # of each entity's description shown to the model


@dataclass(frozen=True)
class Suggestion:
    """Two entities that may be one; `a_key < b_key`."""

    id: int
    a_key: str
    b_key: str
    a_name: str
    b_name: str
    score: float
    reason: str
    status: str  # open, accepted, rejected
    decided_by: str | None  # user or model


def suggest_merges(store: Store, min_score: float = MIN_SCORE) -> list[Suggestion]:
    """Find likely duplicates among the entities, store the new ones as open; return all open.

    Open suggestions whose entities are gone are dropped; decided pairs stay decided."""
    rows = graph_rows.all_entities(store)
    names = {r["key"]: r["name"] for r in rows}
    matches = [m for m in find_duplicates(Named(r["key"], r["name"], r["type"]) for r in rows)
               if m.score >= min_score]
    now = time.time()
    with store.transaction() as conn:
        suggestion_rows.delete_suggestions(
            conn, [sid for sid, a, b in suggestion_rows.open_pairs(conn) if a not in names or b not in names])
        suggestion_rows.upsert_open(
            conn, [(m.a_key, m.b_key, names[m.a_key], names[m.b_key], m.score, m.reason, now) for m in matches])
    return list_suggestions(store)


def list_suggestions(store: Store, status: str | None = "open") -> list[Suggestion]:
    """Stored suggestions (open ones by default; all with None), best first."""
    return [_suggestion(r) for r in suggestion_rows.suggestion_rows(store, status)]


def get_suggestion(store: Store, suggestion_id: int) -> Suggestion:
    """One suggestion by id; ValueError (one sentence) when there is none."""
    row = suggestion_rows.suggestion_row(store, suggestion_id)
    if row is None:
        raise ValueError(f"There is no merge suggestion {suggestion_id}; `docatlas suggestions` lists them.")
    return _suggestion(row)


def accept(store: Store, suggestion_id: int, *, keep: str | None = None, by: str = "user",
           summarize: Summarizer | None = None) -> str:
    """Merge the pair: the entity with more mentions (or `keep`, a key of the pair) survives.

    Returns the surviving key. The graph is re-derived for both keys without reading any
    document again; `summarize` writes the merged description when it grows long."""
    suggestion = _open(store, suggestion_id)
    pair = (suggestion.a_key, suggestion.b_key)
    if keep is not None and keep not in pair:
        raise ValueError(f"{keep!r} is not one of the two entities of suggestion {suggestion_id}.")
    survivor = keep or _survivor(store, *pair)
    alias = pair[1] if survivor == pair[0] else pair[0]
    now = time.time()
    with store.transaction() as conn:
        override_rows.file_alias(conn, alias, survivor, now)
        suggestion_rows.decide(conn, suggestion_id, "accepted", by, now)
        # Other open pairs with the merged-away entity are found again under the survivor.
        suggestion_rows.drop_open_with(conn, alias)
    rebuild(store, {alias, survivor}, summarize)
    return survivor


def reject(store: Store, suggestion_id: int, *, by: str = "user") -> None:
    """Mark the pair as two different entities; it is never suggested again."""
    _open(store, suggestion_id)
    with store.transaction() as conn:
        suggestion_rows.decide(conn, suggestion_id, "rejected", by, time.time())


def unmerge(store: Store, alias: str, summarize: Summarizer | None = None) -> None:
    """Take back an accepted merge: records written under the alias's names return to it."""
    survivor = override_rows.alias_target(store, alias)
    if survivor is None:
        raise ValueError(f"{alias!r} was not merged into another entity.")
    with store.transaction() as conn:
        override_rows.remove_alias(conn, alias)
        entities, relations = graph_rows.records_under(conn, {survivor})

        def back(key: str, name: str) -> str:
            return alias if key == survivor and entity_key(name) == alias else key

        graph_rows.refile_records(
            conn, [(alias, rowid) for rowid, key, name in entities if back(key, name) != key],
            [(back(sk, source), back(tk, target), rowid) for rowid, sk, tk, source, target in relations
             if (back(sk, source), back(tk, target)) != (sk, tk)])
        suggestion_rows.reject_accepted_pair(conn, alias, survivor, time.time())
    rebuild(store, {alias, survivor}, summarize)

def confirm_with_model(store: Store, llm: LLM, *, limit: int | None = None,
                       cancel: threading.Event | None = None,
                       summarize: Summarizer | None = None) -> dict[str, int]:
    """Ask the model about each open suggestion (best first): YES accepts, NO rejects.

    An unclear answer leaves the suggestion open. Returns counts of each outcome."""
    counts = {"accepted": 0, "rejected": 0, "unclear": 0}
    template = merge_template(store, "same_entity")  # the workspace's own, if the user changed it
    for suggestion in list_suggestions(store)[:limit]:
        if cancel is not None and cancel.is_set():
            break
        if not _still_open(store, suggestion.id):
            continue  # an earlier accept in this loop removed it
        values = {"first": _describe(store, suggestion.a_key), "second": _describe(store, suggestion.b_key)}
        reply = llm.chat([{"role": "user", "content": render(template, values)}],
                         num_predict=CHECK_TOKENS, cancel=cancel)
        verdict = yes_or_no(reply.text)
        if verdict is True:
            accept(store, suggestion.id, by="model", summarize=summarize)
            counts["accepted"] += 1
        elif verdict is False:
            reject(store, suggestion.id, by="model")
            counts["rejected"] += 1
        else:
            counts["unclear"] += 1
    return counts


def _open(store: Store, suggestion_id: int) -> Suggestion:
    suggestion = get_suggestion(store, suggestion_id)
    if suggestion.status != "open":
        raise ValueError(f"Merge suggestion {suggestion_id} was already {suggestion.status}.")
    return suggestion


def _still_open(store: Store, suggestion_id: int) -> bool:
    return suggestion_rows.is_open(store, suggestion_id)


def _survivor(store: Store, a: str, b: str) -> str:
    """The key with more mentions; then the longer name; then the first."""
    rows = {k: row for k in (a, b) if (row := graph_rows.entity(store, k)) is not None}
    if a not in rows or b not in rows:
        return a if a in rows else b
    rank = {k: (rows[k]["mentions"], len(rows[k]["name"])) for k in (a, b)}
    return b if rank[b] > rank[a] else a


def _describe(store: Store, key: str) -> str:
    row = graph_rows.entity(store, key)
    if row is None:
        return key
    description = " ".join(row["description"].split())[:_DESCRIPTION_CHARS]
    return f"{row['name']} ({row['type']}): {description}" if description else f"{row['name']} ({row['type']})"


def _suggestion(row: dict) -> Suggestion:
    return Suggestion(id=row["id"], a_key=row["a_key"], b_key=row["b_key"], a_name=row["a_name"],
                      b_name=row["b_name"], score=row["score"], reason=row["reason"], status=row["status"],
                      decided_by=row["decided_by"])
