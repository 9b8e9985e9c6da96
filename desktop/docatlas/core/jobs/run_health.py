"""The health summary of an ingestion run, kept in the workspace for whoever shows the run.

`finish_run_health` sums the figures of the chunks a run extracted, keeps the summary under
the meta key `last_run_health` (JSON), and returns the sentence to warn with when most chunks
gave nothing (`ingest.health.verdict`); `last_run_health` reads it back.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import asdict

from docatlas.core.ingest.findings import run_totals
from docatlas.core.ingest.health import verdict
from docatlas.core.storage.database import Store

META_KEY = "last_run_health"
log = logging.getLogger("docatlas.pipeline")


def finish_run_health(store: Store, chunk_ids: Sequence[int], profile: str) -> str:
    """Sum the run's chunks, keep the summary, return the warning sentence ("" when healthy)."""
    summed = run_totals(store, chunk_ids)
    warning = verdict(summed, profile)
    store.set_meta(META_KEY, json.dumps({**asdict(summed), "profile": profile, "warning": warning,
                                         "mostly_empty": summed.mostly_empty}))
    if warning:  # counts only: no document text goes to the log
        log.warning("extraction health: %s", warning)
    if summed.cut or summed.ungrounded:
        log.info("extraction health: %d chunks, %d records grounded, %d held back, %d replies cut, %d re-asked",
                 summed.chunks, summed.grounded, summed.ungrounded, summed.cut, summed.retries)
    return warning


def last_run_health(store: Store) -> dict | None:
    """The summary of the last run, or None before any run."""
    raw = store.get_meta(META_KEY)
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None
