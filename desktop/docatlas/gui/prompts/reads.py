"""What the Prompts tab reads from the workspace, as functions of a `Store` run on the runner.

The tab hands these to `Workspace.read_job` (a connection of its own on a reader thread) and
shows the result when it lands; the GUI thread runs no SQL. No widgets here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from docatlas.core.base.settings import Settings
from docatlas.core.jobs.auto_profile import profile_in_use
from docatlas.core.prompts import store as prompt_store
from docatlas.core.prompts.catalog import spec
from docatlas.core.storage.database import Store
from docatlas.core.storage.prompt_reads import chunk_texts, trial_chunks
from docatlas.gui.prompts.editor import PromptState


@dataclass(frozen=True)
class TabRead:
    """The workspace as the tab shows it: chunks to try on, how many are stale, the overrides."""

    chunks: list[dict] = field(default_factory=list)  # {id, idx, tokens, title}, in document order
    stale: int = 0  # finished chunks extracted with other prompts than the profile in use
    finished: int = 0
    overrides: dict[str, str] = field(default_factory=dict)  # prompt key -> this workspace's text
    profile: str = ""  # the profile extraction uses now ("auto" resolved for the chat model)


@dataclass(frozen=True)
class SampleRead:
    """The text a prompt is measured with, and the placeholder values filling it."""

    chunk_text: str | None  # the chunk chosen, None when none is (or it is gone)
    sample: str  # the chunk's text, or a made-up passage of a full chunk's size
    values: dict[str, str]


def read_tab(store: Store, settings: Settings, max_chunks: int) -> TabRead:
    """The chunks offered for trying, the staleness of the profile in use and the overrides."""
    profile = profile_in_use(store, settings)
    stale, finished = prompt_store.staleness(store, profile)
    return TabRead(trial_chunks(store, max_chunks), stale, finished, prompt_store.overrides(store), profile)


def read_prompt(store: Store, key: str) -> PromptState:
    """What the workspace holds for one prompt."""
    mine = prompt_store.overrides(store)
    return PromptState(spec(key), prompt_store.effective(store, key), prompt_store.default_for(store, key),
                       key in mine, prompt_store.versions(store, key))


def read_sample(store: Store, chunk_id: int | None, key: str | None, settings: Settings) -> SampleRead:
    """The chosen chunk's text (or a made-up passage) and the values prompt `key` is filled with."""
    rows = chunk_texts(store, chunk_id)
    text = rows[0]["text"] if rows else None
    sample = text if text is not None else prompt_store.sample_passage(settings.chunking.chunk_tokens)
    values = prompt_store.sample_values(store, key, sample, settings) if key else {}
    return SampleRead(text, sample, values)


def read_staleness(store: Store, settings: Settings) -> tuple[str, int]:
    """The profile in use and how many finished chunks were extracted with other prompts than it has now."""
    profile = profile_in_use(store, settings)
    return profile, prompt_store.staleness(store, profile)[0]
