"""The workspace's background jobs: core generators wrapped for `tasks.TaskRunner`.

Each job opens its own `Store` on the workspace database (the writer, on the task's
thread) and its own Ollama client, and closes both when it ends. No Qt here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from docatlas.core.base.progress import Progress
from docatlas.core.base.settings import Settings
from docatlas.core.jobs.ingest import index, remove_document
from docatlas.core.jobs.sync import describe, sync
from docatlas.core.llm.admin import OllamaProbe, PullStatus, probe, pull_model
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.retrieval.answer import Answer, ask
from docatlas.core.storage.database import Store
from docatlas.gui.run_state import retry_progress
from docatlas.gui.tasks import Job, TaskContext, writes_workspace


@dataclass(frozen=True)
class IngestResult:
    """How an ingestion run ended."""

    last: Progress | None
    cancelled: bool
    embed_error: str = ""  # the search index could not be completed (e.g. no embedding model)
    note: str = ""  # what a sync of the linked folders found and did, in one sentence


def ingest_job(db_path: Path, paths: Sequence[Path], settings: Settings) -> Job:
    """Add `paths` (none: just continue pending and failed chunks), extract, merge and embed."""
    def run(context: TaskContext) -> Iterator[Progress]:
        last: Progress | None = None
        with Store(db_path) as store:
            llm = OllamaLLM(settings.ollama, cache=store)
            llm.on_retry = lambda attempt, attempts: context.report(retry_progress(attempt, attempts))
            try:
                for last in index(store, list(paths), settings, llm=llm, cancel=context.cancel):
                    yield last
            finally:
                llm.close()
        warning = " ".join(last.warnings) if last is not None else ""
        return IngestResult(last, context.cancel.is_set(), warning)
    return writes_workspace(run)


def sync_job(db_path: Path, settings: Settings, remove_gone: bool) -> Job:
    """Bring the workspace in line with its linked folders (`core.jobs.sync`): ingest, remove gone files."""
    def run(context: TaskContext) -> Iterator[Progress]:
        with Store(db_path) as store:
            llm = OllamaLLM(settings.ollama, cache=store)
            llm.on_retry = lambda attempt, attempts: context.report(retry_progress(attempt, attempts))
            try:
                report = yield from sync(store, settings, llm=llm, cancel=context.cancel, remove_gone=remove_gone)
            finally:
                llm.close()
        last = report.last
        warning = " ".join(last.warnings) if last is not None else ""
        return IngestResult(last, context.cancel.is_set(), warning, note=describe(report))
    return writes_workspace(run)


def write_job(db_path: Path, work: Callable[[Store], object]) -> Job:
    """Run `work` on a store of its own (saves, resets, imports, graph edits); run it with writes=True."""
    def run(context: TaskContext) -> object:
        with Store(db_path) as store:
            return work(store)
    return writes_workspace(run)


def delete_job(db_path: Path, document_ids: Sequence[int]) -> Job:
    """Remove documents and re-derive the graph they touched (no model calls)."""
    def run(context: TaskContext) -> int:
        with Store(db_path) as store:
            for document_id in document_ids:
                remove_document(store, document_id)
        return len(document_ids)
    return writes_workspace(run)


def ask_job(db_path: Path, settings: Settings, question: str, mode: str, history: list[dict], budget: int = 0,
            stop_reading: threading.Event | None = None) -> Job:
    """Answer a question; every streamed piece of the answer is reported as progress (text), and with a
    `budget` of model calls the reading for it first (`Progress`; `stop_reading` ends it, the answer follows)."""
    def run(context: TaskContext) -> Answer:
        with Store(db_path) as store:
            llm = OllamaLLM(settings.ollama, cache=store)
            try:
                if budget > 0:
                    from docatlas.core.jobs.budgeted import ask_within

                    return ask_within(store, llm, question, settings, budget, mode=mode, history=history,
                                      on_token=context.report, cancel=context.cancel, stop=stop_reading,
                                      on_progress=context.report)
                return ask(store, llm, question, settings, mode=mode, history=history,
                           on_token=context.report, cancel=context.cancel)
            finally:
                llm.close()
    return run


def probe_job(settings: Settings) -> Job:
    """Check the Ollama host and list its models."""
    def run(context: TaskContext) -> OllamaProbe:
        return probe(settings)
    return run


def pull_job(settings: Settings, name: str) -> Job:
    """Download a model through Ollama, reporting its progress."""
    def run(context: TaskContext) -> Iterator[PullStatus]:
        yield from pull_model(settings, name, context.cancel)
        return name
    return run

