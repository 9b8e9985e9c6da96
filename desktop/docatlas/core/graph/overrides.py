"""The user's graph edits (renames, retypes, descriptions, deletions), stored and replayed.

The graph is derived from per-chunk records; an edit written straight into the derived
tables would vanish on the next rebuild, so each edit is stored in `graph_overrides` and
replayed after every re-derivation. `graph.merge` replays them; `graph.edits` adds them.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass

from docatlas.core.base.keys import relation_pair
from docatlas.core.storage import graph as graph_rows
from docatlas.core.storage import overrides as override_rows
from docatlas.core.storage.database import Store
from docatlas.core.storage.graph import Source

KINDS = ("rename", "retype", "describe", "delete", "delete_relation")
EDITABLE_COLUMNS = {"rename": "name", "retype": "type", "describe": "description"}


@dataclass(frozen=True)
class Override:
    """One stored edit of one entity (`key`); a relation edit names the other end in `value`."""

    id: int
    kind: str
    key: str
    value: dict


def list_overrides(db: Source) -> list[Override]:
    """Every stored override, oldest first (from the Store, or inside a transaction's `conn`)."""
    return [Override(i, kind, key, json.loads(value)) for i, kind, key, value in override_rows.override_rows(db)]


def add_override(store: Store, kind: str, key: str, value: dict, override_id: int | None = None) -> int:
    """Store an override (under `override_id` when given, to redo it in its old place); return its id."""
    with store.transaction() as conn:
        return store_override(conn, kind, key, value, override_id)


def store_override(conn: sqlite3.Connection, kind: str, key: str, value: dict, override_id: int | None = None) -> int:
    """`add_override` inside the caller's transaction."""
    if kind not in KINDS:
        raise ValueError(f"Unknown edit kind {kind!r}.")
    return override_rows.insert_override(conn, override_id, kind, key, json.dumps(value, ensure_ascii=False),
                                         time.time())


def remove_override(store: Store, override_id: int) -> Override | None:
    """Delete a stored override; return it (None when there was none)."""
    found = [o for o in list_overrides(store) if o.id == override_id]
    with store.transaction() as conn:
        override_rows.delete_override(conn, override_id)
    return found[0] if found else None


# -- applying ----------------------------------------------------------------------------------


def apply_overrides(store: Store, keys: set[str] | None = None) -> None:
    """Re-apply the stored overrides, in a transaction of their own.

    `merge.rebuild` already replays them inside its own transaction; this is for a caller
    that changed the overrides. Every override is replayed whatever `keys` is (they are
    few, and a replay writes only rows that differ), so applying twice changes nothing.
    """
    if not override_rows.override_rows(store):
        return
    with store.transaction() as conn:
        replay_overrides(conn)


def replay_overrides(conn: sqlite3.Connection) -> None:
    """Replay every stored override inside the caller's transaction (after a re-derivation)."""
    overrides = list_overrides(conn)
    if not overrides:
        return
    alias = aliases(conn)
    for o in overrides:
        _replay(conn, o, alias)


def overridden_rows(overrides: list[Override], alias: dict[str, str], entities: list[tuple],
                    relations: list[tuple]) -> tuple[list[tuple], list[tuple]]:
    """Derived rows with the overrides applied, before they are written.

    Entity rows are (key, name, type, description, mentions), relation rows start with
    (source_key, target_key). Writing the edited rows (rather than writing the derived
    ones and editing them after) keeps a rebuild that changes nothing from writing at all."""
    by_key = {row[0]: list(row) for row in entities}
    by_pair = {(row[0], row[1]): row for row in relations}
    positions = {"name": 1, "type": 2, "description": 3}
    deleted: set[str] = set()
    for o in overrides:
        if o.kind == "delete_relation":
            by_pair.pop(relation_pair(alias.get(o.key, o.key), alias.get(o.value["other"], o.value["other"])), None)
        elif o.kind == "delete":
            by_key.pop(o.key, None)
            deleted.add(o.key)
        elif o.key in by_key:
            column = EDITABLE_COLUMNS[o.kind]
            by_key[o.key][positions[column]] = o.value[column]
    return ([tuple(row) for row in by_key.values()],
            [row for pair, row in by_pair.items() if pair[0] not in deleted and pair[1] not in deleted])


def _replay(conn: sqlite3.Connection, o: Override, alias: dict[str, str]) -> None:
    if o.kind == "delete_relation":
        graph_rows.delete_relation(conn, *relation_pair(alias.get(o.key, o.key),
                                                        alias.get(o.value["other"], o.value["other"])))
    elif o.kind == "delete":
        graph_rows.delete_entity(conn, o.key)
    else:
        column = EDITABLE_COLUMNS[o.kind]
        graph_rows.set_entity_field(conn, o.key, column, o.value[column])


def aliases(db: Source) -> dict[str, str]:
    """Accepted merges: merged-away key -> the key it now belongs to."""
    return override_rows.aliases(db)
