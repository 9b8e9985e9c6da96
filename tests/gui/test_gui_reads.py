"""No SQL on the GUI thread while a run reports progress, on a workspace of 5,000 chunks.

Every statement on the window's connections is recorded with the thread that ran it (SQLite's
trace callback), from the first progress tick to the last: the reads the table and the status
bar need run on background threads, and a tick reads only the documents it names, never the
whole workspace again.
"""

from __future__ import annotations

import threading

from docatlas.core.storage.database import Store
from fixtures.big_workspace import fill_workspace
from gui_helpers import statuses, wait_idle, wait_read

EXISTING_CHUNKS = 5000
PER_DOCUMENT = 50


class StatementLog:
    """Statements run on traced connections, each with whether the GUI thread ran it."""

    def __init__(self) -> None:
        self.recording = False
        self.on_gui_thread: list[str] = []
        self.elsewhere: list[str] = []

    def trace(self, store: Store) -> Store:
        """Record what `store` runs from now on."""
        store.conn.set_trace_callback(self._record)
        return store

    def _record(self, sql: str) -> None:
        if self.recording:
            gui = threading.current_thread() is threading.main_thread()
            (self.on_gui_thread if gui else self.elsewhere).append(sql)


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
