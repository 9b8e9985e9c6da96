"""The Prompts tab's background jobs, for `gui.tasks.TaskRunner`. No Qt here.

Saves, resets, imports and re-queueing write the workspace: run them with writes=True.

Each job opens its own `Store` on the workspace database (and its own Ollama client), so
the GUI thread only ever reads. Trying a prompt on a chunk calls the model like an
extraction would, but keeps nothing except the reply cache: the graph is not touched.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from docatlas.core.base.errors import DocAtlasError
from docatlas.core.base.settings import Settings
from docatlas.core.graph.summarize import ModelSummarizer
from docatlas.core.ingest.extract import ChunkExtraction, extract_chunk, first_messages
from docatlas.core.jobs.auto_profile import profile_in_use
from docatlas.core.jobs.reextract import requeue_chunks
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.prompts import store as prompt_store
from docatlas.core.prompts.catalog import spec, token_count
from docatlas.core.storage.database import Store
from docatlas.core.storage.prompt_reads import chunk_texts
from docatlas.gui.jobs.workspace import write_job
from docatlas.gui.tasks import Job, TaskContext, writes_workspace


@dataclass(frozen=True)
class TrialRun:
    """One prompt tried on one chunk: what the model said and what was read from it."""

    label: str  # "This text", "Default", "v3 …"
    result: ChunkExtraction
    seconds: float
    prompt_tokens: int  # of the first message, counted here (a cached reply has no count from Ollama)
    cached: bool  # every reply came from the reply cache

    def summary(self) -> str:
        """Records, tokens and time in one line."""
        r = self.result
        source = "from the cache" if self.cached else f"{r.calls} model call{'s' if r.calls != 1 else ''}"
        return (f"{len(r.entities)} entities, {len(r.relations)} relations · prompt {self.prompt_tokens:,} tokens, "
                f"reply {r.completion_tokens:,} tokens · {self.seconds:.1f} s ({source})")


def save_prompt_job(db_path: Path, key: str, text: str, note: str) -> Job:
    """Save `text` as the newest version of prompt `key`."""
    return write_job(db_path, lambda store: prompt_store.save_prompt(store, key, text, note))


def reset_prompt_job(db_path: Path, key: str) -> Job:
    """Go back to the default of prompt `key` (kept as a version)."""
    return write_job(db_path, lambda store: prompt_store.reset_prompt(store, key))


def import_prompts_job(db_path: Path, prompts: dict[str, str], note: str) -> Job:
    """Save imported prompts; returns (saved, refused)."""
    return write_job(db_path, lambda store: prompt_store.save_many(store, prompts, note))


def trial_job(db_path: Path, settings: Settings, key: str, variants: Sequence[tuple[str, str]],
              chunk_id: int, use_cache: bool = True) -> Job:
    """Try extraction prompt `key` on chunk `chunk_id` with each (label, text) in turn; each run is reported."""
    item = spec(key)
    extraction = settings.extraction
    if item.name in ("glean", "loop_check"):  # make sure the prompt being tried is asked
        extraction = replace(extraction, gleaning=max(1, extraction.gleaning),
                             loop_check=extraction.loop_check or item.name == "loop_check")

    def run(context: TaskContext) -> Iterator[TrialRun]:
        runs: list[TrialRun] = []
        with Store(db_path) as store:
            rows = chunk_texts(store, chunk_id)
            if not rows:
                raise DocAtlasError("The chunk chosen is gone (its document was removed); choose another one.")
            chunk_text = rows[0]["text"]
            llm = OllamaLLM(settings.ollama, cache=store if use_cache else None)
            try:
                base = prompt_store.profile_for(store, item.group)
                for label, text in variants:
                    profile = replace(base, prompts={**base.prompts, item.name: text})
                    started = time.monotonic()
                    result = extract_chunk(llm, profile, chunk_text, extraction, context.cancel)
                    tokens = token_count(first_messages(profile, chunk_text, extraction)[0]["content"])
                    run_ = TrialRun(label, result, time.monotonic() - started, tokens,
                                    cached=result.calls == 0 and result.cached_calls > 0)
                    runs.append(run_)
                    yield run_
            finally:
                llm.close()
        return runs
    return run


def context_job(settings: Settings) -> Job:
    """The context length the model offers (within the max_context setting)."""
    def run(context: TaskContext) -> int:
        llm = OllamaLLM(settings.ollama)
        try:
            return min(llm.context_length(), settings.ollama.max_context)
        finally:
            llm.close()
    return run


def requeue_job(db_path: Path, settings: Settings) -> Job:
    """Send the chunks extracted with other prompts back to pending; returns how many."""
    def run(context: TaskContext) -> int:
        with Store(db_path) as store:
            ids = prompt_store.stale_chunks(store, profile_in_use(store, settings))
            summarize = ModelSummarizer(lambda: OllamaLLM(settings.ollama, cache=store), settings.extraction,
                                        template=prompt_store.merge_template(store, "summarize"),
                                        cancel=context.cancel)
            requeue_chunks(store, ids, summarize)
            return len(ids)
    return writes_workspace(run)
