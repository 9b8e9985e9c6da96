"""Merging: per-chunk records become the graph's entities and relations.

Pure functions over records (`merge_entity`, `merge_relation`) plus `rebuild`, which
re-derives the stored graph for some keys (or all) from the per-chunk records. Because
the records are kept, a document can be deleted or the merge rules changed without
asking the model to read any document again.

Rules: a name's key is its NFKC form without surrounding quotes, extra white space or
case; the display name and the type go by vote (first seen wins a tie); descriptions are
de-duplicated and joined, or - past the summariser's token threshold - summarised by it.
Relations are undirected: weights (strength, 1 when missing) are summed and keywords
unioned; an endpoint never described as an entity still becomes a node; self-loops are
dropped. Keys merged away by an accepted suggestion (`entity_aliases`) are moved to the
key they now belong to before anything is derived.

`rebuild_steps` works in three parts and yields `Progress` between items: it reads the
records in scope, asks the summariser for the long descriptions (stage "summarize"),
derives every entity and relation (stage "merge"), and then - in ONE transaction -
re-files merged-away records, writes the rows that changed, replays the user's overrides
and clears `graph_dirty` and the keys in `pending_rederive` it derived, so no reader ever
sees a derived graph without the user's edits. A cancel between items writes nothing but
`graph_dirty=1`, so the next run finishes the merge. `rebuild` runs it to the end. All SQL is in `core.storage.graph`.
A *provisional* merge (an ingest's batches while it runs, with no summariser) writes the rows
and the overrides alone: the keys stay owed in `pending_rederive` and `graph_dirty` stays as it
was, so the run's final merge (or the next run's heal) still summarises them.

Only rows that changed are written, so a re-merge that changes nothing leaves the graph
version, the full-text index and the embedding queue alone.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections import Counter
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from docatlas.core.base.concepts import CONCEPT, MODEL
from docatlas.core.base.keys import distinct, relation_pair
from docatlas.core.base.progress import Progress
from docatlas.core.graph.overrides import aliases, list_overrides, overridden_rows, replay_overrides
from docatlas.core.graph.summarize import summarise_all
from docatlas.core.storage import graph as graph_rows
from docatlas.core.storage import healing
from docatlas.core.storage.database import Store
from docatlas.core.storage.graph import Records, Source


class Summarizer(Protocol):
    """Turns the distinct descriptions of one entity (or relation) into one text.

    Returns None to decline (short enough, or no model at hand): the descriptions are
    then joined. An optional `parallel` attribute lets `rebuild` run that many at once.
    """

    def __call__(self, name: str, descriptions: Sequence[str]) -> str | None:
        """One description for `name`, or None to join `descriptions` as they are."""
        ...


@dataclass(frozen=True)
class MergedEntity:
    """One node of the graph."""

    key: str
    name: str
    type: str
    description: str
    mentions: int
    layer: str = MODEL


@dataclass(frozen=True)
class MergedRelation:
    """One undirected edge of the graph; `source_key <= target_key`."""

    source_key: str
    target_key: str
    keywords: str
    description: str
    weight: float
    mentions: int
    layer: str = MODEL


def vote(values: Sequence[str], fallback: str) -> str:
    """The most frequent value (ignoring empty and "unknown"); the first seen wins a tie."""
    counted = Counter(v for v in values if v and v != "unknown")
    if not counted:
        return fallback
    best = max(counted.values())
    return next(v for v in values if counted.get(v) == best)


def join_descriptions(name: str, descriptions: Sequence[str], summarize: Summarizer | None = None) -> str:
    """Distinct descriptions joined by newlines, or the summariser's single text for them."""
    unique = distinct(descriptions)
    if summarize is not None and len(unique) > 1:
        summary = summarize(name, unique)
        if summary:
            return summary
    return "\n".join(unique)


def merge_entity(key: str, names: Sequence[str], types: Sequence[str], descriptions: Sequence[str],
                 summarize: Summarizer | None = None) -> MergedEntity:
    """Merge every mention of one key: display name and type by vote, descriptions joined."""
    display = vote([n.strip() for n in names], key)
    return MergedEntity(key, display, vote([t.lower() for t in types], "unknown"),
                        join_descriptions(display, descriptions, summarize), len(names))


def merge_relation(pair: tuple[str, str], keywords: Sequence[str], descriptions: Sequence[str],
                   strengths: Sequence[float | None], label: str = "",
                   summarize: Summarizer | None = None) -> MergedRelation:
    """Merge every mention of one undirected pair: weights summed, keywords unioned."""
    words = distinct(w for k in keywords for w in re.split(r"[,;]", k))
    weight = sum(1.0 if s is None else s for s in strengths)
    return MergedRelation(pair[0], pair[1], ", ".join(words),
                          join_descriptions(label, descriptions, summarize), weight, len(strengths))


# -- re-deriving the stored graph ------------------------------------------------------------------

SummaryRequest = tuple[str, tuple[str, ...]]  # (display name or relation label, distinct descriptions)


@dataclass
class _Plan:
    """What a rebuild derives: the records in scope grouped by key and by pair."""

    scope: set[str] | None  # keys to re-derive, aliases included; None: all
    moved: list[tuple[str, str]]  # (alias, key) whose records are re-filed under key
    records: Records
    mentions: dict[str, tuple[list[str], list[str], list[str]]] = field(default_factory=dict)
    edges: dict[tuple[str, str], tuple[list[str], list[str], list[float | None]]] = field(default_factory=dict)
    endpoints: list[tuple[str, str]] = field(default_factory=list)  # nodes named only in relations: (key, name)
    labels: dict[tuple[str, str], str] = field(default_factory=dict)
    display: dict[str, str] = field(default_factory=dict)
    concept: set[str] = field(default_factory=set)  # keys only the concept layer names
    concept_pairs: set[tuple[str, str]] = field(default_factory=set)  # pairs only the concept layer links

    @property
    def size(self) -> int:
        """Entities and relations to derive."""
        return len(self.mentions) + len(self.endpoints) + len(self.edges)


@dataclass
class _Derived:
    entities: list[MergedEntity] = field(default_factory=list)
    relations: list[MergedRelation] = field(default_factory=list)
    missing: bool = False  # a summary was owed but not at hand: the graph stays dirty


def rebuild(store: Store, keys: set[str] | None = None, summarize: Summarizer | None = None,
            cancel: threading.Event | None = None, *, provisional: bool = False) -> None:
    """Re-derive entities and relations touching `keys` (all when None); `rebuild_steps` to the end."""
    for _ in rebuild_steps(store, keys, summarize, cancel, provisional=provisional):
        pass


def rebuild_steps(store: Store, keys: set[str] | None = None, summarize: Summarizer | None = None,
                  cancel: threading.Event | None = None, *, provisional: bool = False) -> Iterator[Progress]:
    """Re-derive entities and relations touching `keys` (all when None), yielding progress.

    Stops between items once `cancel` is set, or when the caller closes it: nothing is
    written then but `graph_dirty=1`, so the next ingest run merges everything again.
    `provisional`: write the derived rows only, leaving `graph_dirty` and `pending_rederive`
    as they are (what was owed stays owed, also when it stops)."""
    if keys is not None and not keys:
        return
    written: Progress | None = None
    try:
        written = yield from _steps(store, keys, summarize, cancel, provisional)
    finally:
        if written is None and not provisional:
            with contextlib.suppress(Exception):  # never hide why the merge stopped
                graph_rows.mark_graph_dirty(store)
    if written is not None:
        yield written


def _steps(store: Store, keys: set[str] | None, summarize: Summarizer | None,
           cancel: threading.Event | None, provisional: bool) -> Generator[Progress, None, Progress | None]:
    """The work of `rebuild_steps`; returns its last Progress once the graph is written, else None."""
    version = graph_rows.data_version(store)
    plan = _plan(store, keys, summarize is not None)
    yield Progress(stage="merge", message=f"Merging {plan.size} entities and relations", step_total=plan.size)
    summaries: dict[SummaryRequest, str | None] = {}
    if summarize is not None:
        requests = _summary_requests(plan, summarize)
        for done in summarise_all(requests, summarize, summaries, cancel):
            yield Progress(stage="summarize", message=f"Summarised {done} of {len(requests)} long descriptions",
                           step_done=done, step_total=len(requests))
    lookup = (summaries, getattr(summarize, "needs_summary", None)) if summarize is not None else (None, None)
    derived = _Derived()
    every = max(1, plan.size // 50)
    for done in _derive(plan, *lookup, derived, cancel):
        if done % every == 0:
            yield Progress(stage="merge", message=f"Merged {done} of {plan.size}", step_done=done,
                           step_total=plan.size)
    if cancel is not None and cancel.is_set():
        yield Progress(stage="merge", message="Merge stopped; the next run finishes it.")
        return None
    with store.transaction() as conn:
        if graph_rows.data_version(conn) != version:
            # Another connection wrote meanwhile: derive again from what is stored now (no
            # model call here; a summary not at hand leaves the graph dirty for the next run).
            plan, derived = _plan(conn, keys, summarize is not None), _Derived()
            for _ in _derive(plan, *lookup, derived, None):
                pass
        graph_rows.move_records(conn, plan.moved)
        # The user's edits (rename, retype, describe, delete) outlive every re-derivation:
        # applied to the rows before they are written, and replayed on the stored ones.
        entities, relations = overridden_rows(
            list_overrides(conn), aliases(conn),
            [(e.key, e.name, e.type, e.description, e.mentions, e.layer) for e in derived.entities],
            [(r.source_key, r.target_key, r.keywords, r.description, r.weight, r.mentions, r.layer)
             for r in derived.relations])
        graph_rows.write_derived(conn, plan.scope, entities, relations)
        replay_overrides(conn)
        if not provisional:
            graph_rows.set_graph_dirty(conn, derived.missing)
            healing.clear(conn, plan.scope)  # the keys a drop or a chunk left owed are derived now
    return Progress(stage="merge", message=f"Merged {plan.size} entities and relations", step_done=plan.size,
                    step_total=plan.size)


def _plan(db: Source, keys: set[str] | None, labelled: bool) -> _Plan:
    """Read the records in scope (merged-away keys mapped to their survivor) and group them."""
    alias_of = aliases(db)
    moved = sorted(graph_rows.aliased_record_pairs(db))
    scope = None
    if keys is not None:
        scope = set(keys) | {alias_of[k] for k in keys if k in alias_of} | {k for pair in moved for k in pair}
    plan = _Plan(scope, moved, graph_rows.read_records(db, scope))
    filed = dict(moved)
    concept_names: dict[str, list[str]] = {}
    concept_links: dict[tuple[str, str], tuple[list[str], list[str], list[float | None]]] = {}
    for key, name, etype, description, layer in plan.records.entities:
        key = filed.get(key, key)
        if layer == CONCEPT:
            concept_names.setdefault(key, []).append(name)
            continue
        names, types, descriptions = plan.mentions.setdefault(key, ([], [], []))
        names.append(name), types.append(etype), descriptions.append(description)
    endpoint_names: dict[str, list[str]] = {}
    for sk, tk, source, target, kw, desc, strength, layer in plan.records.relations:
        sk, tk = filed.get(sk, sk), filed.get(tk, tk)
        if sk == tk:
            continue
        kws, descs, strengths = (concept_links if layer == CONCEPT else plan.edges).setdefault(
            relation_pair(sk, tk), ([], [], []))
        kws.append(kw), descs.append(desc), strengths.append(strength)
        if layer != CONCEPT:
            endpoint_names.setdefault(sk, []).append(source)
            endpoint_names.setdefault(tk, []).append(target)
    _add_concepts(plan, concept_names, concept_links, endpoint_names)
    if labelled:  # display names are needed for summaries only (merge_entity votes again)
        plan.display = {key: vote([n.strip() for n in names], key) for key, (names, _, _) in plan.mentions.items()}
    stored = graph_rows.entity_names(db, [k for k in endpoint_names if k not in plan.mentions])
    # Endpoints the model named only in a relation still become nodes.
    for key, names in endpoint_names.items():
        if key not in plan.mentions and (scope is None or key in scope or key not in stored):
            plan.endpoints.append((key, vote(names, key)))
            plan.display[key] = plan.endpoints[-1][1]
    if labelled:
        def name(key: str) -> str:
            return plan.display.get(key) or stored.get(key) or key

        plan.labels = {pair: f"the link between {name(pair[0])} and {name(pair[1])}" for pair in plan.edges}
    return plan


def _add_concepts(plan: _Plan, names: dict[str, list[str]],
                  links: dict[tuple[str, str], tuple[list[str], list[str], list[float | None]]],
                  endpoints: dict[str, list[str]]) -> None:
    """The concept layer's names and links where no model record names the key or links the pair.

    Every record of a key in scope is read, and every record of a pair with an end in scope,
    so "no model record" is known for each: the model's records replace the concept layer's."""
    for key, found in names.items():
        if key not in plan.mentions and key not in endpoints:
            plan.mentions[key] = (found, [""] * len(found), [""] * len(found))
            plan.concept.add(key)
    for pair, link in links.items():
        if pair not in plan.edges:
            plan.edges[pair] = link
            plan.concept_pairs.add(pair)


def _summary_requests(plan: _Plan, summarize: Summarizer) -> list[SummaryRequest]:
    """The (name, descriptions) the summariser is asked about: past its threshold when it says so."""
    needs = getattr(summarize, "needs_summary", None)
    requests = [(plan.display[key], tuple(distinct(descriptions)))
                for key, (_, _, descriptions) in plan.mentions.items()]
    requests += [(plan.labels[pair], tuple(distinct(descriptions)))
                 for pair, (_, descriptions, _) in plan.edges.items()]
    return list(dict.fromkeys(r for r in requests if len(r[1]) > 1 and (needs is None or needs(r[1]))))


def _derive(plan: _Plan, summaries: dict[SummaryRequest, str | None] | None, needs: Callable | None,
            out: _Derived, cancel: threading.Event | None) -> Iterator[int]:
    """Merge every entity and relation of `plan` into `out`; yield the count done after each.

    Summaries come from `summaries` (None: descriptions joined); one owed by `needs` (or
    by any summariser without `needs_summary`) but absent marks `out` as missing."""

    def answer(name: str, descriptions: Sequence[str]) -> str | None:
        request = (name, tuple(descriptions))
        if request in summaries:
            return summaries[request]
        if needs is None or needs(descriptions):
            out.missing = True
        return None

    summarize = answer if summaries is not None else None
    done = 0
    for key, (names, types, descriptions) in plan.mentions.items():
        if cancel is not None and cancel.is_set():
            return
        merged = merge_entity(key, names, types, descriptions, summarize)
        out.entities.append(replace(merged, layer=CONCEPT) if key in plan.concept else merged)
        done += 1
        yield done
    for key, name in plan.endpoints:
        out.entities.append(MergedEntity(key, name, "unknown", "", 0))
        done += 1
        yield done
    for pair, (keywords, descriptions, strengths) in plan.edges.items():
        if cancel is not None and cancel.is_set():
            return
        merged = merge_relation(pair, keywords, descriptions, strengths, plan.labels.get(pair, ""), summarize)
        out.relations.append(replace(merged, layer=CONCEPT) if pair in plan.concept_pairs else merged)
        done += 1
        yield done
