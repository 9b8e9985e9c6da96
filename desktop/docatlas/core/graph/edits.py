"""User edits to the graph that survive re-deriving it from per-chunk records, and undo exactly.

The graph (`entities`, `relations`) is derived from per-chunk records by
`docatlas.core.graph.merge.rebuild`; an edit written straight into those tables would
vanish on the next rebuild. Two kinds of edit, two mechanisms:

* Renaming, retyping, describing or deleting an entity, and deleting a relation, are rows
  in `graph_overrides`; every rebuild replays them in its own transaction. Undoing one
  removes its row and re-derives what it touched.
* Merging uses the accepted-merge mechanism of `docatlas.core.graph.suggest`: each
  merged-away key is filed in `entity_aliases` under the surviving key and its records are
  re-filed there, so relations are re-pointed, descriptions joined and provenance kept by
  the ordinary rebuild, and records extracted later under an old name land on the same
  node. A `MergeRecord` remembers the alias and suggestion rows it replaced, so undoing a
  merge (or an accepted suggestion) restores them exactly and re-files the records back.

Overrides keep naming entity keys; an override on a key that was merged away waits,
harmless, until the merge is undone.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from docatlas.core.base.keys import distinct, entity_key
from docatlas.core.graph import suggest
from docatlas.core.graph.merge import rebuild
from docatlas.core.graph.overrides import (
    EDITABLE_COLUMNS,
    aliases,
    list_overrides,
    remove_override,
    replay_overrides,
    store_override,
)
from docatlas.core.storage import graph as graph_rows
from docatlas.core.storage import overrides as override_rows
from docatlas.core.storage import suggestions as suggestion_rows
from docatlas.core.storage.database import Store


class EditError(ValueError):
    """An edit that cannot be made, with a sentence for the user."""


@dataclass
class MergeRecord:
    """What a merge changed, so that it can be taken back exactly."""

    target: str
    members: list[str]
    alias_rows: list[tuple] = field(default_factory=list)  # entity_aliases rows replaced
    suggestion_rows: list[tuple] = field(default_factory=list)  # merge_suggestions rows replaced
    overrides: list[int] = field(default_factory=list)  # overrides the merge added


def rederive(store: Store, keys: Iterable[str]) -> None:
    """Re-derive the rows of `keys` from records; the overrides are replayed in the same transaction."""
    rebuild(store, set(keys))


# -- overrides ---------------------------------------------------------------------------------


def _entity(store: Store, key: str) -> dict:
    row = graph_rows.entity(store, key)
    if row is None:
        raise EditError("That entity is no longer in the graph; refresh the view.")
    return row


def edit(store: Store, kind: str, key: str, value: dict, override_id: int | None = None) -> int:
    """Make one override edit: check it, then store and apply it in one transaction; return its id."""
    _entity(store, key)
    if kind in EDITABLE_COLUMNS:
        column = EDITABLE_COLUMNS[kind]
        text = str(value[column]).strip()
        text = text.lower() if kind == "retype" else text
        if not text and kind != "describe":
            raise EditError(f"The new {column} is empty; type one.")
        value = {column: text}
    elif kind == "delete_relation":
        _entity(store, value["other"])
    with store.transaction() as conn:
        override = store_override(conn, kind, key, value, override_id)
        replay_overrides(conn)
    return override

def rename(store: Store, key: str, name: str) -> int:
    """Give an entity a new display name; return the override id."""
    return edit(store, "rename", key, {"name": name})


def retype(store: Store, key: str, type_: str) -> int:
    """Change an entity's type; return the override id."""
    return edit(store, "retype", key, {"type": type_})


def describe(store: Store, key: str, description: str) -> int:
    """Replace an entity's description; return the override id."""
    return edit(store, "describe", key, {"description": description})


def delete(store: Store, key: str) -> int:
    """Remove an entity and its relations (later mentions stay hidden); return the override id."""
    return edit(store, "delete", key, {})


def delete_relation(store: Store, source_key: str, target_key: str) -> int:
    """Remove the relation between two entities; return the override id."""
    return edit(store, "delete_relation", source_key, {"other": target_key})


def undo(store: Store, override_id: int) -> None:
    """Take an override back: forget it and re-derive what it touched."""
    o = remove_override(store, override_id)
    if o is not None:
        rederive(store, {o.key, o.value["other"]} if o.kind == "delete_relation" else {o.key})


# -- merges ------------------------------------------------------------------------------------


def _snapshot(store: Store, keys: Sequence[str]) -> tuple[list[tuple], list[tuple]]:
    """The alias and suggestion rows a merge of `keys` may change."""
    return override_rows.alias_rows(store, keys), suggestion_rows.rows_naming(store, keys)


def _file_aliases(conn, members: Sequence[str], target: str) -> None:
    now = time.time()
    for member in members:
        if member != target:
            override_rows.file_alias(conn, member, target, now)
            suggestion_rows.drop_open_with(conn, member)


def merge(store: Store, keys: Sequence[str], target: str, name: str | None = None) -> MergeRecord:
    """Merge entities into `target`: relations re-pointed, descriptions joined, records kept.

    `name` (optional) pins the merged entity's display name; hand-written descriptions of
    the members are joined into the merged one rather than lost."""
    members = list(dict.fromkeys([target, *keys]))
    if len(members) < 2:
        raise EditError("Choose at least two entities to merge.")
    rows = {k: _entity(store, k) for k in members}
    record = MergeRecord(target, members, *_snapshot(store, members))
    described = {o.key for o in list_overrides(store) if o.kind == "describe"}
    with store.transaction() as conn:
        _file_aliases(conn, members, target)
        if described & set(members):
            joined = "\n".join(distinct(rows[k]["description"] for k in members))
            record.overrides.append(store_override(conn, "describe", target, {"description": joined}))
        if name and name.strip():
            record.overrides.append(store_override(conn, "rename", target, {"name": name.strip()}))
    # One transaction derives the merged entity and replays the edits: no reader sees it without them.
    rebuild(store, set(members))
    return record


def accept_suggestion(store: Store, suggestion_id: int, keep: str | None = None) -> MergeRecord:
    """Accept a merge suggestion (see `suggest.accept`), remembering how to take it back."""
    found = suggest.get_suggestion(store, suggestion_id)
    pair = [found.a_key, found.b_key]
    record = MergeRecord(keep or "", pair, *_snapshot(store, pair))
    record.target = suggest.accept(store, suggestion_id, keep=keep)  # overrides replayed by its rebuild
    return record


def reject_suggestion(store: Store, suggestion_id: int) -> MergeRecord:
    """Reject a merge suggestion, remembering how to take it back."""
    found = suggest.get_suggestion(store, suggestion_id)
    record = MergeRecord("", [], [], *_snapshot(store, [found.a_key, found.b_key])[1:])
    suggest.reject(store, suggestion_id)
    return record


def undo_merge(store: Store, record: MergeRecord) -> None:
    """Take a merge (or a decided suggestion) back: aliases, suggestions and records as before."""
    for override in record.overrides:
        remove_override(store, override)
    members = record.members
    touched = set(members)
    with store.transaction() as conn:
        if members:
            override_rows.replace_alias_rows(conn, members, record.alias_rows)
        suggestion_rows.restore_rows(conn, record.suggestion_rows)
        touched |= {key for row in record.alias_rows for key in row[:2]}
        if members:
            _refile(conn, touched)
    if members:
        rederive(store, touched)


def _refile(conn, keys: set[str]) -> None:
    """File the records now under `keys` under the key their names give (aliases applied)."""
    alias = aliases(conn)

    def canonical(name: str) -> str:
        key = entity_key(name)
        return alias.get(key, key)

    entities, relations = graph_rows.records_under(conn, keys)
    entity_rows = [(canonical(name), rowid) for rowid, key, name in entities if canonical(name) != key]
    relation_rows = []
    for rowid, sk, tk, source, target in relations:
        new = (canonical(source), canonical(target))
        if new != (sk, tk):
            relation_rows.append((*new, rowid))
    graph_rows.refile_records(conn, entity_rows, relation_rows)
