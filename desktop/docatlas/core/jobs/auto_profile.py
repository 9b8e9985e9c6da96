"""`--profile auto`: try every extraction profile on the first chunks, keep the best for the model.

The score of a profile is the number of grounded records (entities and relations the
chunk's text backs) it gets from the first `TRIAL_CHUNKS` chunks, without gleaning. Of the
profiles within `RECALL_SLACK` (2%) of the best score, the one whose replies were shortest
wins (reply tokens are most of a local model's time: `lean`, which writes no descriptions,
when the model follows it); ties go to the earlier profile of `TRIAL_ORDER`. The winner is
remembered per model in the workspace (`model_facts`), so later runs skip the trial. Only when none of them gets a grounded record is
`FALLBACK` tried (`typing`: the model types the names found in the text instead of writing
records, which a 135M model can do); it never competes with a profile that works, since
linking every pair that shares a sentence would outscore the plain profiles on counts alone.
The trial replies are cached, so the chosen profile's first pass over those chunks costs
nothing again.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import replace

from docatlas.core.base.errors import LLMError, OllamaUnreachable
from docatlas.core.base.progress import Progress
from docatlas.core.base.settings import Settings
from docatlas.core.base.tokens import count_tokens
from docatlas.core.ingest.extract import extract_chunk
from docatlas.core.llm.protocol import LLM
from docatlas.core.prompts.catalog import available_profiles
from docatlas.core.prompts.store import extraction_profile
from docatlas.core.storage import health as stored_health
from docatlas.core.storage.database import ChunkRow, Store

AUTO = "auto"
TRIAL_CHUNKS = 2
TRIAL_ORDER = ("json", "lean", "compact", "lightrag", "graphrag")
RECALL_SLACK = 0.02  # a profile this close to the best score competes on reply tokens
FALLBACK = ("typing",)  # tried only when every profile above got nothing grounded
SPENT = ("calls", "cached_calls", "prompt_tokens", "completion_tokens")


def trial_profiles() -> list[str]:
    """The profiles a trial compares, in tie-break order."""
    shipped = available_profiles()
    first = [p for p in TRIAL_ORDER if p in shipped] + [p for p in shipped if p not in TRIAL_ORDER + FALLBACK]
    return first + [p for p in FALLBACK if p in shipped]


def choose_profile(store: Store, work: Sequence[ChunkRow], settings: Settings, llm: LLM,
                   cancel: threading.Event, scores: dict[str, int], spent: dict[str, int]) -> Iterator[Progress]:
    """Fill `scores` (profile -> grounded records) from a trial and remember the winner.

    Yields a Progress per profile tried; adds the trial's model calls and tokens to `spent`.
    Does nothing when the model already has a choice. A trial where no profile got a
    grounded record is not remembered (the next run tries again)."""
    if stored_health.chosen_profile(store, llm.model) is not None or not work:
        return
    trial = replace(settings.extraction, gleaning=0, loop_check=False)
    replied: dict[str, int] = {}  # profile -> reply tokens of its trial
    for number, name in enumerate(trial_profiles(), 1):
        if cancel.is_set():
            return
        if name in FALLBACK and any(scores.values()):
            break  # a plain profile works: the fallback is not needed
        yield Progress(stage="extract", step_done=number - 1, step_total=len(trial_profiles()),
                       message=f"Trying the {name} profile on {min(len(work), TRIAL_CHUNKS)} chunks")
        profile = extraction_profile(store, name)
        score = 0
        for chunk in work[:TRIAL_CHUNKS]:
            try:
                result = extract_chunk(llm, profile, chunk.text or store.chunk_text(chunk.id), trial, cancel)
                score += result.health.grounded
                replied[name] = replied.get(name, 0) + sum(count_tokens(r) for r in result.raw_replies)
                for figure in SPENT:
                    spent[figure] = spent.get(figure, 0) + getattr(result, figure)
            except OllamaUnreachable:
                raise
            except LLMError:
                continue  # this profile's prompt does not suit; it scores what it got
        scores[name] = score
    if scores and not cancel.is_set():
        best = cheapest_of_the_best(scores, replied)
        if scores[best] > 0:  # with nothing grounded anywhere, the next run tries again
            stored_health.put_chosen_profile(store, llm.model, best, scores)


def cheapest_of_the_best(scores: dict[str, int], replied: dict[str, int]) -> str:
    """The profile with the fewest reply tokens among those within RECALL_SLACK of the best score."""
    order = trial_profiles()
    top = max(scores.values())
    close = [p for p in scores if scores[p] >= top * (1 - RECALL_SLACK)]
    return min(close, key=lambda p: (replied.get(p, 0), order.index(p) if p in order else len(order)))


def profile_in_use(store: Store, settings: Settings) -> str:
    """The profile extraction uses now: the settings' own, or for `auto` the one chosen for the chat model."""
    return resolved_settings(store, settings, settings.ollama.model).extraction.profile


def resolved_settings(store: Store, settings: Settings, model: str) -> Settings:
    """`settings` with `auto` replaced by the profile chosen for `model` (else the first of TRIAL_ORDER)."""
    if settings.extraction.profile != AUTO:
        return settings
    chosen = stored_health.chosen_profile(store, model) or trial_profiles()[0]
    return replace(settings, extraction=replace(settings.extraction, profile=chosen))
