"""Every background job of the window, as factories returning a `tasks.Job`; no widgets here.

- `workspace`: ingestion, deleting documents, answering, probing and pulling models.
- `prompts`: the Prompts tab (saving through a store job, trying a prompt, re-extracting).
- `graph`: the explorer (loading, communities, scenes, images, edits, suggestions, export).

Store jobs open their own `Store` on the workspace database (the writers run on the
runner's writer thread, `writes=True`); the GUI thread's connection only reads.
"""

from __future__ import annotations

from docatlas.gui.jobs.workspace import (
    IngestResult,
    ask_job,
    delete_job,
    ingest_job,
    probe_job,
    pull_job,
    sync_job,
    write_job,
)

__all__ = ["IngestResult", "ask_job", "delete_job", "ingest_job", "probe_job", "pull_job", "sync_job", "write_job"]
