"""The user's graph edits (renames, retypes, descriptions, deletions), stored and replayed.

The graph is derived from per-chunk records; an edit written straight into the derived
tables would vanish on the next rebuild, so each edit is stored in `graph_overrides` and
replayed after every re-derivation. `graph.merge` replays them; `graph.edits` adds them.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from docatlas.core.base.keys import relation_pair
from docatlas.core.storage.database import Store

KINDS = ("rename", "retype", "describe", "delete", "delete_relation")
EDITABLE_COLUMNS = {"rename": "name", "retype": "type", "describe": "description"}


@dataclass(frozen=True)
class Override:
    """One stored edit of one entity (`key`); a relation edit names the other end in `value`."""

    id: int
    kind: str
    key: str
    value: dict


def list_overrides(store: Store) -> list[Override]:
    """Every stored override, oldest first."""
    return [Override(r[0], r[1], r[2], json.loads(r[3]))
            for r in store.conn.execute("SELECT id, kind, key, value FROM graph_overrides ORDER BY id")]


def add_override(store: Store, kind: str, key: str, value: dict, override_id: int | None = None) -> int:
    """Store an override (under `override_id` when given, to redo it in its old place); return its id."""
    if kind not in KINDS:
        raise ValueError(f"Unknown edit kind {kind!r}.")
    with store.transaction() as conn:
        cursor = conn.execute("INSERT INTO graph_overrides(id, kind, key, value, created_at) VALUES (?, ?, ?, ?, ?)",
                              (override_id, kind, key, json.dumps(value, ensure_ascii=False), time.time()))
        return int(cursor.lastrowid)


def remove_override(store: Store, override_id: int) -> Override | None:
    """Delete a stored override; return it (None when there was none)."""
    found = [o for o in list_overrides(store) if o.id == override_id]
    with store.transaction() as conn:
        conn.execute("DELETE FROM graph_overrides WHERE id = ?", (override_id,))
    return found[0] if found else None


# -- applying ----------------------------------------------------------------------------------


def apply_overrides(store: Store, keys: set[str] | None = None) -> None:
    """Re-apply the stored overrides after `merge.rebuild(store, keys)`.

    Every override is replayed whatever `keys` is (they are few, and a replay writes only
    rows that differ), so applying twice changes nothing and any rebuild may be followed
    by it.
    """
    overrides = list_overrides(store)
    if not overrides:
        return
    alias = aliases(store)
    with store.transaction() as conn:
        for o in overrides:
            _replay(conn, o, alias)


def _replay(conn, o: Override, alias: dict[str, str]) -> None:
    if o.kind == "delete_relation":
        a, b = relation_pair(alias.get(o.key, o.key), alias.get(o.value["other"], o.value["other"]))
        conn.execute("DELETE FROM relations WHERE source_key = ? AND target_key = ?", (a, b))
    elif o.kind == "delete":
        conn.execute("DELETE FROM relations WHERE source_key = ? OR target_key = ?", (o.key, o.key))
        conn.execute("DELETE FROM entities WHERE key = ?", (o.key,))
    else:
        column = EDITABLE_COLUMNS[o.kind]
        # Only when different: an update fires the full-text and embedding triggers.
        conn.execute(f"UPDATE entities SET {column} = ? WHERE key = ? AND {column} IS NOT ?",
                     (o.value[column], o.key, o.value[column]))


def aliases(store: Store) -> dict[str, str]:
    """Accepted merges: merged-away key -> the key it now belongs to."""
    if not store.query("SELECT 1 FROM sqlite_master WHERE name = 'entity_aliases'"):
        return {}
    return {r["alias"]: r["key"] for r in store.query("SELECT alias, key FROM entity_aliases")}
