"""Communities and what is computed from the relation graph: `communities` (with their
reports), `community_members`, the explorer's `graph_view_communities` (colours) and
`graph_layout` (positions), and the reads of the graph they are computed from.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from docatlas.core.storage.context import EntityText
from docatlas.core.storage.database import Store


@dataclass(frozen=True)
class ReportRow:
    """A written community report."""

    id: int
    title: str
    summary: str
    findings: str  # JSON list of {"summary", "explanation"}
    rating: float | None
    size: int


@dataclass(frozen=True)
class InnerRelation:
    """A relation between two members of one community, with its endpoints' names (None when unknown)."""

    source_key: str
    target_key: str
    keywords: str
    description: str
    weight: float
    source: str | None
    target: str | None


@dataclass(frozen=True)
class StoredMember:
    """A member of a stored community, with the community's title."""

    community_id: int
    key: str
    title: str


@dataclass(frozen=True)
class ReportText:
    """What a report says, ready to store (findings as JSON text)."""

    title: str
    summary: str
    findings: str
    rating: float | None
    rating_explanation: str


# -- the relation graph ------------------------------------------------------------------------

def relation_edges(store: Store) -> list[tuple[str, str, float]]:
    """(source_key, target_key, weight) of every relation, sorted by keys."""
    return [(s, t, float(w or 0.0)) for s, t, w in store.conn.execute(
        "SELECT source_key, target_key, weight FROM relations ORDER BY source_key, target_key")]


def entity_keys(store: Store) -> list[str]:
    """Every entity key, sorted."""
    return [r[0] for r in store.conn.execute("SELECT key FROM entities ORDER BY key")]


def entity_texts(store: Store) -> Iterable[tuple[str, str, str]]:
    """(key, name, description) of every entity, by key."""
    return store.conn.execute("SELECT key, name, description FROM entities ORDER BY key")


def relation_texts(store: Store) -> Iterable[tuple[str, str, str, str]]:
    """(source_key, target_key, keywords, description) of every relation, by keys."""
    return store.conn.execute(
        "SELECT source_key, target_key, keywords, description FROM relations ORDER BY source_key, target_key")


# -- communities and reports -------------------------------------------------------------------

def signatures(store: Store) -> dict[str, int]:
    """Community id by signature, for every stored community."""
    return {r["signature"]: r["id"] for r in store.query("SELECT id, signature FROM communities")}


def replace_communities(store: Store, stale: Sequence[int], new: dict[str, list[str]]) -> None:
    """Delete the `stale` communities, add the `new` ones (signature -> members, no report yet) and
    record the current graph version as the one they were detected on, together."""
    now = time.time()
    with store.transaction() as conn:
        conn.executemany("DELETE FROM communities WHERE id = ?", [(cid,) for cid in stale])
        for signature, members in new.items():
            cid = conn.execute("INSERT INTO communities(signature, size, updated_at) VALUES (?, ?, ?)",
                               (signature, len(members), now)).lastrowid
            conn.executemany("INSERT INTO community_members(community_id, key) VALUES (?, ?)",
                             [(cid, key) for key in members])
        row = conn.execute("SELECT value FROM meta WHERE key = 'graph_version'").fetchone()
        store.set_meta("communities_version", row[0] if row else "0", conn)


def reports_to_write(store: Store, largest: int) -> list[int]:
    """Ids of the communities among the `largest` (by size, then id) whose report is not written."""
    rows = store.query(
        "SELECT id, status FROM (SELECT id, status FROM communities ORDER BY size DESC, id LIMIT ?) "
        "WHERE status != 'done'", (max(0, largest),))
    return [r["id"] for r in rows]


def inner_relations(store: Store, community_id: int) -> list[InnerRelation]:
    """The relations between members of a community, strongest first."""
    rows = store.query(
        "SELECT r.source_key, r.target_key, r.keywords, r.description, r.weight, a.name AS s, b.name AS t "
        "FROM relations r JOIN community_members m1 ON m1.key = r.source_key AND m1.community_id = ? "
        "JOIN community_members m2 ON m2.key = r.target_key AND m2.community_id = ? "
        "LEFT JOIN entities a ON a.key = r.source_key LEFT JOIN entities b ON b.key = r.target_key "
        "ORDER BY r.weight DESC", (community_id, community_id))
    return [InnerRelation(r["source_key"], r["target_key"], r["keywords"], r["description"], r["weight"],
                          r["s"], r["t"]) for r in rows]


def member_entities(store: Store, community_id: int) -> list[EntityText]:
    """The members of a community that are entities."""
    rows = store.query("SELECT e.key, e.name, e.type, e.description FROM community_members m "
                       "JOIN entities e ON e.key = m.key WHERE m.community_id = ?", (community_id,))
    return [EntityText(r["key"], r["name"], r["type"], r["description"]) for r in rows]


def member_keys(store: Store, community_id: int, limit: int) -> list[str]:
    """Up to `limit` member keys, most mentioned first."""
    rows = store.query("SELECT m.key FROM community_members m LEFT JOIN entities e ON e.key = m.key "
                       "WHERE m.community_id = ? ORDER BY COALESCE(e.mentions, 0) DESC, m.key LIMIT ?",
                       (community_id, limit))
    return [r["key"] for r in rows]


def best_known_names(store: Store, community_id: int, limit: int) -> list[str]:
    """Names of the `limit` most mentioned members."""
    rows = store.query(
        "SELECT e.name FROM community_members m JOIN entities e ON e.key = m.key WHERE m.community_id = ? "
        "ORDER BY e.mentions DESC, e.name LIMIT ?", (community_id, limit))
    return [r["name"] for r in rows]


def write_report(store: Store, community_id: int, report: ReportText, model: str) -> None:
    """Store a finished report."""
    with store.transaction() as conn:
        conn.execute(
            "UPDATE communities SET status = 'done', title = ?, summary = ?, findings = ?, rating = ?, "
            "rating_explanation = ?, model = ?, error = NULL, updated_at = ? WHERE id = ?",
            (report.title, report.summary, report.findings, report.rating, report.rating_explanation, model,
             time.time(), community_id))


def fail_report(store: Store, community_id: int, error: str) -> None:
    """Mark a report as failed, with the reason (it is tried again next time)."""
    with store.transaction() as conn:
        conn.execute("UPDATE communities SET status = 'failed', error = ? WHERE id = ?", (error, community_id))


def has_reports(store: Store) -> bool:
    """True when at least one community report is written."""
    return bool(store.query("SELECT 1 FROM communities WHERE status = 'done' LIMIT 1"))


def written_reports(store: Store) -> list[ReportRow]:
    """Every written report, best rated first (then largest, then oldest)."""
    rows = store.query("SELECT id, title, summary, findings, rating, size FROM communities "
                       "WHERE status = 'done' ORDER BY COALESCE(rating, 0) DESC, size DESC, id")
    return [ReportRow(r["id"], r["title"] or "", r["summary"] or "", r["findings"] or "[]", r["rating"], r["size"])
            for r in rows]


def stored_members(store: Store) -> list[StoredMember]:
    """Every member of every stored community, by community id."""
    rows = store.query("SELECT m.community_id AS id, m.key AS key, c.title AS title FROM community_members m "
                       "JOIN communities c ON c.id = m.community_id ORDER BY m.community_id")
    return [StoredMember(r["id"], r["key"], r["title"] or "") for r in rows]


# -- the explorer's colours and positions ------------------------------------------------------

def view_communities(store: Store) -> dict[str, int]:
    """The cached colouring: community number by entity key."""
    return dict(store.conn.execute("SELECT key, community FROM graph_view_communities").fetchall())


def replace_view_communities(store: Store, numbers: dict[str, int]) -> None:
    """Cache a new colouring in place of the old one."""
    with store.transaction() as conn:
        conn.execute("DELETE FROM graph_view_communities")
        conn.executemany("INSERT INTO graph_view_communities(key, community) VALUES (?, ?)", numbers.items())


def positions(store: Store) -> dict[str, tuple[float, float]]:
    """Cached layout positions by entity key."""
    return {k: (x, y) for k, x, y in store.conn.execute("SELECT key, x, y FROM graph_layout")}


def save_positions(store: Store, keys: Sequence[str], xs: Sequence[float], ys: Sequence[float]) -> None:
    """Cache positions (replacing those of the same keys)."""
    with store.transaction() as conn:
        conn.executemany("INSERT OR REPLACE INTO graph_layout(key, x, y) VALUES (?, ?, ?)", zip(keys, xs, ys))


def clear_positions(store: Store) -> None:
    """Forget every cached position."""
    with store.transaction() as conn:
        conn.execute("DELETE FROM graph_layout")


_PINS_KEY = "graph_layout_pins"  # in the meta table: a JSON list of entity keys


def pinned_keys(store: Store) -> set[str]:
    """The keys of the explorer's pinned nodes."""
    return set(json.loads(store.get_meta(_PINS_KEY) or "[]"))


def save_pinned_keys(store: Store, keys: set[str]) -> None:
    """Replace the set of pinned nodes."""
    store.set_meta(_PINS_KEY, json.dumps(sorted(keys)))
