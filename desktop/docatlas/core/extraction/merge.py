"""Merging: per-chunk records become the graph's entities and relations.

Pure functions over records (`merge_entity`, `merge_relation`) plus `rebuild`, which
re-derives the stored graph for some keys (or all) from the per-chunk records. Because
the records are kept, a document can be deleted or the merge rules changed without
asking the model to read any document again.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from docatlas.core.store import Store

_QUOTES = "\"'`\u201c\u201d\u2018\u2019\u00ab\u00bb"
_SPACE = re.compile(r"\s+")

# Optional: (display name, distinct descriptions) -> one description. The model-backed
# summary plugs in here; without it descriptions are joined.
Summarizer = Callable[[str, Sequence[str]], str]


def entity_key(name: str) -> str:
    """The identity of a name: Unicode-normalised, quotes and extra space removed, case folded."""
    text = unicodedata.normalize("NFKC", name).strip().strip(_QUOTES).strip()
    return _SPACE.sub(" ", text).casefold()


def distinct(texts: Iterable[str]) -> list[str]:
    """Non-empty texts without repeats (compared by normalised form), first-seen order."""
    seen: set[str] = set()
    result = []
    for text in texts:
        text = text.strip()
        marker = _SPACE.sub(" ", text).casefold().rstrip(".")
        if text and marker not in seen:
            seen.add(marker)
            result.append(text)
    return result


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
    """One undirected edge of the graph; `source_key < target_key`."""

    source_key: str
    target_key: str
    keywords: str
    description: str
    weight: float
    mentions: int


def _vote(values: Sequence[str], fallback: str) -> str:
    counted = Counter(v for v in values if v and v != "unknown")
    if not counted:
        return fallback
    best = max(counted.values())
    return next(v for v in values if counted.get(v) == best)


def _join(name: str, descriptions: Sequence[str], summarize: Summarizer | None) -> str:
    unique = distinct(descriptions)
    if summarize is not None and len(unique) > 1:
        return summarize(name, unique)
    return "\n".join(unique)


def merge_entity(key: str, names: Sequence[str], types: Sequence[str], descriptions: Sequence[str],
                 summarize: Summarizer | None = None) -> MergedEntity:
    """Merge every mention of one key: display name and type by vote, descriptions joined."""
    display = _vote([n.strip() for n in names], key)
    return MergedEntity(key, display, _vote([t.lower() for t in types], "unknown"),
                        _join(display, descriptions, summarize), len(names))


def merge_relation(pair: tuple[str, str], keywords: Sequence[str], descriptions: Sequence[str],
                   strengths: Sequence[float | None], label: str = "",
                   summarize: Summarizer | None = None) -> MergedRelation:
    """Merge every mention of one undirected pair: weights summed, keywords unioned."""
    words = distinct(w for k in keywords for w in re.split(r"[,;]", k))
    weight = sum(1.0 if s is None else s for s in strengths)
    return MergedRelation(pair[0], pair[1], ", ".join(words),
                          _join(label, descriptions, summarize), weight, len(strengths))


def relation_pair(source_key: str, target_key: str) -> tuple[str, str]:
    """Undirected: the two keys in a fixed order."""
    return (source_key, target_key) if source_key <= target_key else (target_key, source_key)


def rebuild(store: Store, keys: set[str] | None = None, summarize: Summarizer | None = None) -> None:
    """Re-derive entities and relations touching `keys` (all when None) from per-chunk records."""
    where_e, where_r, params = "", "", ()
    if keys is not None:
        if not keys:
            return
        store.query("CREATE TEMP TABLE IF NOT EXISTS touched (key TEXT PRIMARY KEY)")
        with store.transaction() as conn:
            conn.execute("DELETE FROM temp.touched")
            conn.executemany("INSERT OR IGNORE INTO temp.touched VALUES (?)", [(k,) for k in keys])
        where_e = " WHERE key IN (SELECT key FROM temp.touched)"
        where_r = (" WHERE source_key IN (SELECT key FROM temp.touched)"
                   " OR target_key IN (SELECT key FROM temp.touched)")

    mentions: dict[str, tuple[list[str], list[str], list[str]]] = {}
    for row in store.conn.execute(
        f"SELECT key, name, type, description FROM chunk_entities{where_e} ORDER BY rowid", params
    ):
        names, types, descriptions = mentions.setdefault(row[0], ([], [], []))
        names.append(row[1]), types.append(row[2]), descriptions.append(row[3])

    edges: dict[tuple[str, str], tuple[list[str], list[str], list[float | None]]] = {}
    endpoint_names: dict[str, list[str]] = {}
    for sk, tk, source, target, kw, desc, strength in store.conn.execute(
        "SELECT source_key, target_key, source, target, keywords, description, strength "
        f"FROM chunk_relations{where_r} ORDER BY rowid", params
    ):
        if sk == tk:
            continue
        kws, descs, strengths = edges.setdefault(relation_pair(sk, tk), ([], [], []))
        kws.append(kw), descs.append(desc), strengths.append(strength)
        endpoint_names.setdefault(sk, []).append(source)
        endpoint_names.setdefault(tk, []).append(target)

    entities = [merge_entity(k, n, t, d, summarize) for k, (n, t, d) in mentions.items()]
    # Endpoints the model named only in a relation still become nodes.
    for key, names in endpoint_names.items():
        if key not in mentions and (keys is None or key in keys or not _entity_exists(store, key)):
            entities.append(MergedEntity(key, _vote(names, key), "unknown", "", 0))
    relations = [merge_relation(p, k, d, s, f"{p[0]} - {p[1]}", summarize)
                 for p, (k, d, s) in edges.items()]

    with store.transaction() as conn:
        if keys is None:
            conn.execute("DELETE FROM entities")
            conn.execute("DELETE FROM relations")
        else:
            conn.execute("DELETE FROM entities WHERE key IN (SELECT key FROM temp.touched)")
            conn.execute(
                "DELETE FROM relations WHERE source_key IN (SELECT key FROM temp.touched)"
                " OR target_key IN (SELECT key FROM temp.touched)"
            )
        conn.executemany(
            "INSERT OR REPLACE INTO entities(key, name, type, description, mentions) VALUES (?, ?, ?, ?, ?)",
            [(e.key, e.name, e.type, e.description, e.mentions) for e in entities],
        )
        conn.executemany(
            "INSERT OR REPLACE INTO relations(source_key, target_key, keywords, description, weight, mentions)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [(r.source_key, r.target_key, r.keywords, r.description, r.weight, r.mentions)
             for r in relations],
        )
        conn.execute(
            "INSERT INTO meta(key, value) VALUES ('graph_dirty', '0') "
            "ON CONFLICT(key) DO UPDATE SET value='0'"
        )


def _entity_exists(store: Store, key: str) -> bool:
    return bool(store.conn.execute("SELECT 1 FROM entities WHERE key = ?", (key,)).fetchone())
