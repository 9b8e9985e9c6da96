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

`rebuild` writes only rows that changed, so a re-merge that changes nothing leaves the
graph version, the full-text index and the embedding queue alone.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol, TypeVar

from docatlas.core.base.keys import distinct, relation_pair
from docatlas.core.graph.overrides import aliases, apply_overrides
from docatlas.core.storage.database import Store

T = TypeVar("T")


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


@dataclass(frozen=True)
class MergedRelation:
    """One undirected edge of the graph; `source_key <= target_key`."""

    source_key: str
    target_key: str
    keywords: str
    description: str
    weight: float
    mentions: int


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


def apply_aliases(conn: sqlite3.Connection) -> set[str]:
    """Move per-chunk records filed under a merged-away key to the surviving key.

    Runs inside the caller's transaction; returns every key involved (old and new).
    """
    moved: set[str] = set()
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'entity_aliases'").fetchone():
        return moved  # a workspace opened below schema 3 (tests of older versions)
    pairs = conn.execute(
        "SELECT alias, key FROM entity_aliases WHERE alias IN (SELECT key FROM chunk_entities)"
        " OR alias IN (SELECT source_key FROM chunk_relations)"
        " OR alias IN (SELECT target_key FROM chunk_relations)"
    ).fetchall()
    for alias, key in pairs:
        conn.execute("UPDATE chunk_entities SET key = ? WHERE key = ?", (key, alias))
        conn.execute("UPDATE chunk_relations SET source_key = ? WHERE source_key = ?", (key, alias))
        conn.execute("UPDATE chunk_relations SET target_key = ? WHERE target_key = ?", (key, alias))
        moved |= {alias, key}
    return moved


def rebuild(store: Store, keys: set[str] | None = None, summarize: Summarizer | None = None) -> None:
    """Re-derive entities and relations touching `keys` (all when None) from per-chunk records."""
    if keys is not None and not keys:
        return
    with store.transaction() as conn:
        moved = apply_aliases(conn)
    if keys is not None:
        alias_of = aliases(store)
        keys = set(keys) | {alias_of[k] for k in keys if k in alias_of} | moved
        store.query("CREATE TEMP TABLE IF NOT EXISTS touched (key TEXT PRIMARY KEY)")
        with store.transaction() as conn:
            conn.execute("DELETE FROM temp.touched")
            conn.executemany("INSERT OR IGNORE INTO temp.touched VALUES (?)", [(k,) for k in keys])
    where_e, where_r = _scope(keys is not None)

    mentions: dict[str, tuple[list[str], list[str], list[str]]] = {}
    for key, name, etype, description in store.conn.execute(
        f"SELECT key, name, type, description FROM chunk_entities{where_e} ORDER BY chunk_id, rowid"
    ):
        names, types, descriptions = mentions.setdefault(key, ([], [], []))
        names.append(name), types.append(etype), descriptions.append(description)

    edges: dict[tuple[str, str], tuple[list[str], list[str], list[float | None]]] = {}
    endpoint_names: dict[str, list[str]] = {}
    for sk, tk, source, target, kw, desc, strength in store.conn.execute(
        "SELECT source_key, target_key, source, target, keywords, description, strength "
        f"FROM chunk_relations{where_r} ORDER BY chunk_id, rowid"
    ):
        if sk == tk:
            continue
        kws, descs, strengths = edges.setdefault(relation_pair(sk, tk), ([], [], []))
        kws.append(kw), descs.append(desc), strengths.append(strength)
        endpoint_names.setdefault(sk, []).append(source)
        endpoint_names.setdefault(tk, []).append(target)

    workers = max(1, int(getattr(summarize, "parallel", 1) or 1)) if summarize is not None else 1
    entities = _map(lambda item: merge_entity(item[0], *item[1], summarize), list(mentions.items()), workers)
    display = {e.key: e.name for e in entities}
    # Endpoints the model named only in a relation still become nodes.
    for key, names in endpoint_names.items():
        if key not in mentions and (keys is None or key in keys or not _entity_exists(store, key)):
            entities.append(MergedEntity(key, vote(names, key), "unknown", "", 0))
            display[key] = entities[-1].name
    labels = {pair: _label(pair, display, store) for pair in edges} if summarize is not None else {}
    relations = _map(
        lambda item: merge_relation(item[0], *item[1], labels.get(item[0], ""), summarize),
        list(edges.items()), workers,
    )
    _write(store, keys is not None, entities, relations)
    # The user's edits (rename, retype, describe, delete) outlive every re-derivation.

    apply_overrides(store, keys)


def _scope(partial: bool) -> tuple[str, str]:
    """WHERE clauses limiting records (and stored rows) to the touched keys."""
    if not partial:
        return "", ""
    return (" WHERE key IN (SELECT key FROM temp.touched)",
            " WHERE source_key IN (SELECT key FROM temp.touched)"
            " OR target_key IN (SELECT key FROM temp.touched)")


def _label(pair: tuple[str, str], display: dict[str, str], store: Store) -> str:
    """"the link between Source and Target" in display names, for a relation summary."""
    names = []
    for key in pair:
        if key not in display:
            rows = store.query("SELECT name FROM entities WHERE key = ?", (key,))
            display[key] = rows[0]["name"] if rows else key
        names.append(display[key])
    return f"the link between {names[0]} and {names[1]}"


def _map(fn: Callable[[T], object], items: list[T], workers: int) -> list:
    """`fn` over `items`, on `workers` threads when more than one (summaries wait on the model)."""
    if workers <= 1 or len(items) < 2:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="docatlas-merge") as pool:
        return list(pool.map(fn, items))


def _write(store: Store, partial: bool, entities: list[MergedEntity], relations: list[MergedRelation]) -> None:
    """Replace the stored rows in scope by the derived ones, writing only the differences."""
    where_e, where_r = _scope(partial)
    with store.transaction() as conn:
        old_e = {r[0]: tuple(r) for r in conn.execute(
            f"SELECT key, name, type, description, mentions FROM entities{where_e}")}
        old_r = {(r[0], r[1]): tuple(r) for r in conn.execute(
            f"SELECT source_key, target_key, keywords, description, weight, mentions FROM relations{where_r}")}
        new_e = {e.key: (e.key, e.name, e.type, e.description, e.mentions) for e in entities}
        new_r = {(r.source_key, r.target_key): (r.source_key, r.target_key, r.keywords, r.description,
                                                 r.weight, r.mentions) for r in relations}
        conn.executemany("DELETE FROM entities WHERE key = ?", [(k,) for k in old_e.keys() - new_e.keys()])
        conn.executemany("DELETE FROM relations WHERE source_key = ? AND target_key = ?",
                         list(old_r.keys() - new_r.keys()))
        conn.executemany(
            "INSERT OR REPLACE INTO entities(key, name, type, description, mentions) VALUES (?, ?, ?, ?, ?)",
            [row for key, row in new_e.items() if old_e.get(key) != row],
        )
        conn.executemany(
            "INSERT OR REPLACE INTO relations(source_key, target_key, keywords, description, weight, mentions)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [row for pair, row in new_r.items() if old_r.get(pair) != row],
        )
        conn.execute(
            "INSERT INTO meta(key, value) VALUES ('graph_dirty', '0') "
            "ON CONFLICT(key) DO UPDATE SET value='0'"
        )


def _entity_exists(store: Store, key: str) -> bool:
    return bool(store.conn.execute("SELECT 1 FROM entities WHERE key = ?", (key,)).fetchone())
