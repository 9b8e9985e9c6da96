"""The one Progress type every job yields, and the sink protocol that receives it.

A job (ingest, delete, rebuild, re-extract, embed, communities, ...) is a generator of
`Progress`; the CLI prints it, the window shows it, a test reads it. Nothing else carries
progress, so one display serves every job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class HostLoad:
    """How one Ollama host of the pool is doing in this run (shown per host while it runs)."""

    host: str  # the address as the user wrote it, e.g. "http://gpu1:11434"
    remote: bool  # not this computer: the window and the CLI name it as such
    slots: int  # calls it may have in flight
    in_flight: int = 0
    calls: int = 0  # calls it answered in this run
    failures: int = 0
    calls_per_minute: float = 0.0
    state: str = "ok"  # "ok", or "set aside" while a failed host waits to be tried again


@dataclass(frozen=True)
class Progress:
    """A snapshot of a run, yielded after every step worth showing."""

    stage: str  # "load", "extract", "merge", "embed", "communities", "done", "cancelled"
    message: str = ""
    document: str | None = None  # file name of the document just read
    document_path: str | None = None  # its full path, as the store keys it
    documents_total: int = 0
    documents_done: int = 0
    documents_skipped: int = 0
    documents_failed: int = 0
    chunks_total: int = 0
    chunks_done: int = 0
    chunks_failed: int = 0
    chunks_copied: int = 0  # of chunks_done: near-duplicates that took their original's records, no call
    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    elapsed: float = 0.0
    eta: float | None = None
    failures: tuple[tuple[str, str], ...] = field(default=())  # (document, reason)
    step_done: int = 0  # progress of the embed and communities stages
    step_total: int = 0
    warnings: tuple[str, ...] = ()  # not fatal: e.g. no embedding model, keyword search only
    hosts: tuple[HostLoad, ...] = ()  # the Ollama hosts' loads while the model is called
    # Files are still being read while their first chunks are extracted: chunks_total (and
    # what is known of the documents) is what is known so far and still grows.
    still_reading: bool = False
    # Chunks of this run whose records are in the graph: merged in small batches while the run
    # goes on, so a view that shows the graph can follow it (it grows by a batch every few seconds).
    chunks_merged: int = 0


class ProgressSink(Protocol):
    """Whoever shows a run: called with every Progress a job yields."""

    def __call__(self, progress: Progress) -> None:
        """Show or record one snapshot."""
        ...
