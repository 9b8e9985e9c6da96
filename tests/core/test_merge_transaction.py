"""A rebuild writes the derived graph, the user's edits and `graph_dirty=0` in ONE transaction.

A second connection reads the file before every statement the rebuild's connection runs,
so it sees the state after each of its commits: never a deleted entity back, a rename
undone, a merged-away key, or `graph_dirty=0` with the graph not yet complete."""

from __future__ import annotations

import pytest
from docatlas.core.graph import edits
from docatlas.core.graph.merge import rebuild, rebuild_steps
from docatlas.core.storage.database import Store
from test_edits_helpers import add_document, build_graph, open_store, snapshot

HARBOR, LTD = "harbor analytics", "harbor analytics ltd"
LATER = [("Harbor Analytics Ltd opened an office in Porto.",
          [("Harbor Analytics Ltd", "organization", "Has an office in Porto."), ("Porto", "location", "A city.")],
          [("Harbor Analytics Ltd", "Porto", "office", "Harbor Analytics Ltd opened an office in Porto.")])]


@pytest.fixture
def store(tmp_path):
    with open_store(tmp_path) as s:
        yield build_graph(s)


class Watcher:
    """Reads the workspace through its own connection before each statement of the writer."""

    def __init__(self, store: Store, expected: tuple[list[tuple], list[tuple]]):
        self.reader = Store(store.path)
        self.expected = expected
        self.statements: list[str] = []
        self.states = 0
        self.seen: list[str] = []
        store.conn.set_trace_callback(self.check)

    def check(self, statement: str) -> None:
        """What any reader could see now (only committed rows): the user's edits, and no half graph.

        Called by SQLite, which drops exceptions raised here: what is wrong is kept in `seen`."""
        self.statements.append(statement.strip().upper())
        self.states += 1
        names = {r["key"]: r["name"] for r in self.reader.query("SELECT key, name FROM entities")}
        if "tomas berg" in names:
            self.seen.append("a deleted entity came back")
        if LTD in names:
            self.seen.append("a merged-away entity came back")
        if names.get("maria lopez", "María López") != "María López":
            self.seen.append("a rename was undone")
        if self.reader.get_meta("graph_dirty") == "0" and snapshot(self.reader) != self.expected:
            self.seen.append("graph_dirty=0 before the graph was complete")

    def commits(self) -> int:
        """COMMITs the writer issued."""
        return sum(s == "COMMIT" for s in self.statements)


def edited(store: Store) -> tuple[list[tuple], list[tuple]]:
    """One edit of each kind, and a merge; then lose the derived rows (what stale records look like)."""
    edits.delete(store, "tomas berg")
    edits.rename(store, "maria lopez", "María López")
    edits.retype(store, "jonas weber", "Engineer")
    edits.describe(store, "lisbon", "Hand-written.")
    edits.delete_relation(store, "priya nair", "northwind labs")
    edits.merge(store, [LTD], HARBOR)
    add_document(store, "porto.txt", LATER)  # records filed under the merged-away key
    rebuild(store)
    expected = snapshot(store)
    with store.transaction() as conn:
        conn.execute("DELETE FROM relations")
        conn.execute("DELETE FROM entities")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'graph_dirty'")
        conn.execute("UPDATE chunk_entities SET key = ? WHERE name = 'Harbor Analytics Ltd'", (LTD,))
        conn.execute("UPDATE chunk_relations SET source_key = ? WHERE source = 'Harbor Analytics Ltd'", (LTD,))
        conn.execute("UPDATE chunk_relations SET target_key = ? WHERE target = 'Harbor Analytics Ltd'", (LTD,))
    return expected


@pytest.mark.parametrize("keys", [None, {"maria lopez", "tomas berg", HARBOR, "porto", "lisbon", "jonas weber",
                                         "northwind labs", "priya nair"}])
def test_a_rebuild_is_one_commit_and_no_reader_sees_an_unedited_graph(store, keys):
    expected = edited(store)
    watcher = Watcher(store, expected)
    try:
        rebuild(store, keys)
    finally:
        store.conn.set_trace_callback(None)
    watcher.check("-- after the rebuild")
    assert watcher.seen == [] and watcher.states > 5
    assert watcher.commits() == 1
    assert snapshot(store) == expected and store.get_meta("graph_dirty") == "0"
    # the records of the merged-away key were re-filed in that same commit
    assert not store.query("SELECT 1 FROM chunk_entities WHERE key = ?", (LTD,))
    watcher.reader.close()


def test_a_rebuild_that_changes_nothing_still_commits_once(store):
    expected = edited(store)
    rebuild(store)
    changes = store.conn.total_changes
    watcher = Watcher(store, expected)
    try:
        rebuild(store)
    finally:
        store.conn.set_trace_callback(None)
    assert watcher.seen == [] and watcher.commits() == 1
    assert store.conn.total_changes - changes == 1  # graph_dirty=0 written again; not one graph row
    watcher.reader.close()


def test_records_written_by_another_connection_during_a_rebuild_are_merged_too(store):
    before = snapshot(store)
    with store.transaction() as conn:
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'graph_dirty'")
    steps = rebuild_steps(store)
    first = next(steps)  # the records are read; now another process adds a document
    assert first.stage == "merge" and first.step_total == len(before[0]) + len(before[1])
    with Store(store.path) as other:
        add_document(other, "porto.txt", LATER)
    for _ in steps:
        pass
    names = {r["key"] for r in store.query("SELECT key FROM entities")}
    assert {"porto", LTD} <= names and store.get_meta("graph_dirty") == "0"


def test_a_merge_is_never_seen_without_its_pinned_name_or_hand_written_description(store):
    edits.describe(store, LTD, "Hand-written.")
    reader, seen = Store(store.path), []

    def check(_statement: str) -> None:
        rows = {r["key"]: r for r in reader.query("SELECT key, name, description FROM entities")}
        if LTD not in rows:  # merged: the survivor must carry the edits that came with the merge
            if rows[HARBOR]["name"] != "Harbor Group" or "Hand-written." not in rows[HARBOR]["description"]:
                seen.append(dict(rows[HARBOR]))

    store.conn.set_trace_callback(check)
    try:
        edits.merge(store, [LTD], HARBOR, name="Harbor Group")
    finally:
        store.conn.set_trace_callback(None)
    check("-- after the merge")
    reader.close()
    assert seen == []
