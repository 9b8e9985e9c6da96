"""No SQL on the GUI thread while a run reports progress, on a workspace of 5,000 chunks.

Every statement on the window's connections is recorded with the thread that ran it (`StatementLog`,
at the Python call), from the first progress tick to the last: the reads the table and the status
bar need run on background threads, and a tick reads only the documents it names, never the
whole workspace again.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable

from docatlas.core.storage.database import Store
from fixtures.big_workspace import fill_workspace
from gui_helpers import statuses, wait_idle, wait_read

EXISTING_CHUNKS = 5000
PER_DOCUMENT = 50


class StatementLog:
    """Statements run on traced connections, each with whether the GUI thread ran it.

    A store's connection is swapped for a `RecordingConnection`, which records each statement in
    Python before it reaches SQLite. (SQLite's trace callback would deadlock: the writer's
    connection is shared with the run's loader thread, and a callback that needs the GIL inside
    SQLite's connection mutex waits for a thread that holds the GIL while it waits for that mutex.)
    """

    def __init__(self) -> None:
        self.recording = False
        self.on_gui_thread: list[str] = []
        self.elsewhere: list[str] = []

    def trace(self, store: Store) -> Store:
        """Record what `store` runs from now on."""
        if not isinstance(store.conn, RecordingConnection):
            store.conn = RecordingConnection(store.conn, self._record)
        return store

    def _record(self, sql: str) -> None:
        if self.recording:
            gui = threading.current_thread() is threading.main_thread()
            (self.on_gui_thread if gui else self.elsewhere).append(sql)


class RecordingConnection:
    """A sqlite3 connection that tells `record` every statement run through it or its cursors."""

    def __init__(self, conn: sqlite3.Connection, record: Callable[[str], None]) -> None:
        object.__setattr__(self, "_conn", conn)
        object.__setattr__(self, "_record", record)

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        self._record(sql)
        return self._conn.execute(sql, *args)

    def executemany(self, sql: str, *args: object) -> sqlite3.Cursor:
        self._record(sql)
        return self._conn.executemany(sql, *args)

    def executescript(self, script: str) -> sqlite3.Cursor:
        self._record(script)
        return self._conn.executescript(script)

    def cursor(self, *args: object) -> RecordingCursor:
        return RecordingCursor(self._conn.cursor(*args), self._record)

    def __enter__(self) -> RecordingConnection:
        self._conn.__enter__()
        return self

    def __exit__(self, *exc: object) -> object:
        return self._conn.__exit__(*exc)

    def __getattr__(self, name: str) -> object:
        return getattr(self._conn, name)

    def __setattr__(self, name: str, value: object) -> None:
        setattr(self._conn, name, value)


class RecordingCursor(RecordingConnection):
    """A cursor that tells `record` every statement it runs; the rest is the cursor's own."""

    def __iter__(self):
        return iter(self._conn)


def test_progress_ticks_run_no_sql_on_the_gui_thread(qtbot, make_window, workspace_dir, corpus):
    with Store(workspace_dir / "docatlas.sqlite") as store:
        existing = fill_workspace(store, EXISTING_CHUNKS, per_document=PER_DOCUMENT)
    log = StatementLog()
    window = make_window()
    workspace = window.workspace
    log.trace(workspace.store)
    workspace.open_store = lambda: log.trace(Store(workspace.db_path))
    wait_read(qtbot, window)
    assert len(statuses(window)) == existing and workspace.counts.chunks == EXISTING_CHUNKS

    partial_reads: list[int] = []
    window.ingestion.reader.rows_read.connect(
        lambda found: None if found.whole else partial_reads.append(len(found.rows)))
    ticks: list[object] = []

    def tick(item: object) -> None:  # runs after the window's own handlers of the same tick
        ticks.append(item)
        log.recording = getattr(item, "stage", "") not in ("done", "cancelled")

    window.ingestion.progressed.connect(tick)
    log.recording = True
    window.documents_panel.add_paths([corpus])
    wait_idle(qtbot, window)
    log.recording = False

    assert len(ticks) > 5 and ticks[-1].stage == "done" and partial_reads, "the table followed the run"
    assert log.on_gui_thread == [], "SQL on the GUI thread:\n" + "\n".join(log.on_gui_thread)
    assert any("FROM documents d LEFT JOIN document_counts" in sql for sql in log.elsewhere)
    assert max(partial_reads) <= 3  # the corpus's documents, never the workspace's
    shown = statuses(window)
    assert len(shown) == existing + 3 and {shown[n] for n in ("alpha.txt", "beta.md", "gamma.txt")} == {"done"}
    assert "Ready" in window.work_label.text() and f"{existing + 3} documents" in window.work_label.text()
