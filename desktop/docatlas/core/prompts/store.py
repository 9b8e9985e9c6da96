"""The user's prompts, kept in the workspace database: overrides, versions, fingerprints.

Tables (schema migration 4, read and written by `docatlas.core.storage.prompts`):
`prompt_overrides` holds the text used instead of a bundled default, one row per prompt key;
`prompt_versions` keeps every saved text, and every reset (a row without text), with a note
and a date, so that any two can be compared. The prompts live in the same file as the graph, so they travel with it.

Extraction prompts date the graph: the pipeline loads its profile with `extraction_profile`,
which records the profile's fingerprint in meta; a trigger stamps it on every chunk that
is finished. `stale_chunks` lists the chunks whose stamp is not what the prompts give now,
and `requeue_chunks` sends them back to `pending`, so the next run extracts them again
(the reply cache answers whatever did not change).
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from docatlas.core.base.errors import DocAtlasError
from docatlas.core.base.settings import Settings
from docatlas.core.base.tokens import get_encoding
from docatlas.core.prompts.catalog import (
    ANSWER_MODES,
    PROMPT_NAMES,
    Problem,
    Profile,
    answer_key,
    catalog,
    check,
    effective_text,
    load_profile,
    spec,
)
from docatlas.core.storage import prompts as stored

if TYPE_CHECKING:
    from docatlas.core.storage.database import Store

SET_FORMAT = "docatlas-prompt-set"
SET_VERSION = 1
RESET_NOTE = "Reset to the default"
QUERY_NAMES = ("keywords", "answer", "community_report", "community_map")


class PromptError(DocAtlasError):
    """A prompt that cannot be saved; `problems` says what and where."""

    def __init__(self, message: str, problems: Sequence[Problem] = ()):
        super().__init__(message)
        self.problems = list(problems)


@dataclass(frozen=True)
class PromptVersion:
    """One saved state of a prompt: its text (None for a reset to the default), note and date."""

    id: int
    key: str
    text: str | None
    note: str
    created_at: float

    @property
    def is_reset(self) -> bool:
        """True for a return to the default."""
        return self.text is None

    @property
    def when(self) -> str:
        """The date and time, local, to the minute."""
        return datetime.fromtimestamp(self.created_at).strftime("%Y-%m-%d %H:%M")

    @property
    def label(self) -> str:
        """How lists and diffs name it."""
        return f"v{self.id} {self.when}" + (f" — {self.note}" if self.note else "")


# -- reading --------------------------------------------------------------------------------

def overrides(store: Store) -> dict[str, str]:
    """Every override of this workspace: prompt key -> text."""
    return stored.overrides(store)


def effective(store: Store, key: str) -> str:
    """The text DocAtlas sends for `key` in this workspace."""
    return effective_text(key, overrides(store))


def default_for(store: Store, key: str) -> str:
    """What `key` would be without its own override (for an answer mode: the all-modes answer)."""
    current = overrides(store)
    current.pop(key, None)
    return effective_text(key, current)


def versions(store: Store, key: str) -> list[PromptVersion]:
    """The saved versions of a prompt, newest first."""
    return [PromptVersion(v.id, v.key, v.text, v.note, v.created_at) for v in stored.versions(store, key)]


def query_prompts(store: Store | None) -> dict[str, str]:
    """The question-answering templates in use: keywords, answer, answer_<mode>, community_*."""
    current = overrides(store) if store is not None else {}
    names = [*QUERY_NAMES, *(f"answer_{mode}" for mode in ANSWER_MODES)]
    return {name: effective_text(f"query/{name}", current) for name in names}


def answer_template(store: Store | None, mode: str) -> str:
    """The answer prompt of a query mode."""
    return effective_text(answer_key(mode), overrides(store) if store is not None else {})


def merge_template(store: Store | None, name: str) -> str:
    """A merge prompt (`summarize` or `same_entity`) as this workspace has it."""
    return effective_text(f"merge/{name}", overrides(store) if store is not None else {})


def prompts_fingerprint(store: Store | None) -> str:
    """A short hash of every override: changes whenever any prompt does (for answer caches)."""
    current = overrides(store) if store is not None else {}
    return hashlib.sha256(json.dumps(current, sort_keys=True).encode("utf-8")).hexdigest()[:12]


_SAMPLE = ("Maria Lopez founded Harbor Analytics in Lisbon in 2015. Jonas Weber joined the company as chief "
           "engineer and built its tide sensor platform, which Northwind Labs in Oslo bought for its underwater "
           "robots. Priya Nair, who leads Northwind Labs, met Maria Lopez at a conference in Porto. ")


def sample_passage(tokens: int) -> str:
    """A made-up passage of about `tokens` tokens, for sizing prompts when no document is there."""
    encoding = get_encoding()
    ids = encoding.encode(_SAMPLE * (tokens // max(1, len(encoding.encode(_SAMPLE))) + 1))
    return encoding.decode(ids[:max(1, tokens)])


def sample_values(store: Store | None, key: str, sample: str, settings: Settings) -> dict[str, str]:
    """Placeholder values that fill prompt `key` as a real call would, with `sample` as the text it reads."""
    item = spec(key)
    ex = settings.extraction
    if item.extraction:
        values = profile_for(store, item.group).values(entity_types=ex.entity_types, language=ex.language)
        return {**values, "input_text": sample}
    question = "What does the passage say about the people and organisations in it?"
    return {
        "entity_name": "Harbor Analytics", "descriptions": sample, "language": ex.language,
        "max_words": str(max(20, ex.summary_max_tokens * 3 // 4)), "first": sample[:400], "second": sample[:400],
        "question": question, "history": "(none)", "context": sample, "response_type": settings.query.response_type,
        "entities": sample, "relations": "(none)", "reports": sample,
    }


# -- writing --------------------------------------------------------------------------------

def save_prompt(store: Store, key: str, text: str, note: str = "") -> PromptVersion | None:
    """Keep `text` as the prompt `key`, as a new version with `note`; None when nothing changed.

    Raises PromptError (its problems say which and where) when the text cannot be used.
    Saving the default text again is a reset.
    """
    item = _spec(key)
    text = text.replace("\r\n", "\n")
    problems = check(key, text)
    if problems:
        raise PromptError(f"The {item.key} prompt was not saved: {problems[0].message}", problems)
    if text == effective(store, key):
        return None
    if text == default_for(store, key):
        return reset_prompt(store, key, note or RESET_NOTE)
    saved = stored.save_override(store, key, text, note.strip())
    return PromptVersion(saved.id, key, text, saved.note, saved.created_at)


def reset_prompt(store: Store, key: str, note: str = "") -> PromptVersion | None:
    """Go back to the default (kept as a version without text); None when there was no override."""
    _spec(key)
    dropped = stored.drop_override(store, key, note.strip() or RESET_NOTE)
    if dropped is None:
        return None
    return PromptVersion(dropped.id, key, None, dropped.note, dropped.created_at)


def save_many(store: Store, prompts: dict[str, str], note: str) -> tuple[list[str], list[tuple[str, str]]]:
    """Save several prompts; returns (keys saved, [(key, why it was not saved)]); unchanged ones count as saved."""
    saved: list[str] = []
    refused: list[tuple[str, str]] = []
    for key, text in prompts.items():
        try:
            save_prompt(store, key, text, note)
            saved.append(key)
        except PromptError as exc:
            refused.append((key, exc.problems[0].message if exc.problems else exc.message))
    return saved, refused


def _spec(key: str):
    try:
        return spec(key)
    except ValueError as exc:
        raise PromptError(str(exc)) from exc


def diff_texts(old: str, new: str, old_label: str, new_label: str) -> str:
    """A unified diff of two prompt texts ("" when they are the same)."""
    a = [line + "\n" for line in old.split("\n")]
    b = [line + "\n" for line in new.split("\n")]
    return "".join(difflib.unified_diff(a, b, old_label, new_label))


# -- prompt sets (JSON) ------------------------------------------------------------------------

def export_set(store: Store) -> dict:
    """The workspace's prompts as one JSON-ready object: every override with its last note and date."""
    notes = stored.override_notes(store)
    current = overrides(store)
    order = {key: i for i, key in enumerate(s.key for s in catalog())}
    return {
        "format": SET_FORMAT,
        "version": SET_VERSION,
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "prompts": [
            {"key": key, "text": current[key], "note": notes[key].note,
             "saved_at": datetime.fromtimestamp(notes[key].updated_at, UTC).isoformat(timespec="seconds")}
            for key in sorted(current, key=lambda k: order.get(k, len(order)))
        ],
    }


def read_set(data: object) -> dict[str, str]:
    """Prompt key -> text from an exported prompt set; ValueError (a user sentence) if it is not one."""
    if not isinstance(data, dict) or data.get("format") != SET_FORMAT:
        raise ValueError("This JSON file is not a DocAtlas prompt set (it has no \"format\": "
                         f"\"{SET_FORMAT}\").")
    if int(data.get("version", 0) or 0) > SET_VERSION:
        raise ValueError("This prompt set was written by a newer DocAtlas; update DocAtlas to import it.")
    items = data.get("prompts")
    if not isinstance(items, list):
        raise ValueError("This prompt set has no list of prompts.")
    found: dict[str, str] = {}
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("key"), str) and isinstance(item.get("text"), str):
            found[item["key"]] = item["text"]
    return found


# -- extraction prompts and the graph --------------------------------------------------------

def profile_for(store: Store | None, name: str) -> Profile:
    """An extraction profile with this workspace's overrides of its prompts."""
    prefix = f"{name}/"
    mine = {k[len(prefix):]: v for k, v in (overrides(store) if store is not None else {}).items()
            if k.startswith(prefix)}
    return load_profile(name, mine)


def fingerprint(profile: Profile) -> str:
    """A short hash of what a profile asks: its name and the text of each of its prompts."""
    payload = {"profile": profile.name, "prompts": {n: profile.prompts.get(n, "") for n in PROMPT_NAMES}}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def extraction_profile(store: Store, name: str) -> Profile:
    """The profile a run extracts with; its fingerprint is recorded so finished chunks carry it."""
    profile = profile_for(store, name)
    store.set_meta(f"prompt_hash:{name}", fingerprint(profile))
    return profile


def stale_chunks(store: Store, profile_name: str) -> list[int]:
    """Finished chunks extracted with other prompts than `profile_name` has now (ids, in order).

    A chunk finished before prompts were stamped counts as extracted with the bundled prompts
    of its profile: those are loaded and hashed once per profile, not once per chunk."""
    current = fingerprint(profile_for(store, profile_name))
    defaults: dict[str, str] = {}  # profile -> fingerprint of its bundled prompts
    stale = []
    for chunk in stored.finished_chunk_stamps(store):
        if _stamp(chunk.profile, chunk.prompt_hash, profile_name, defaults) != current:
            stale.append(chunk.id)
    return stale


def staleness(store: Store, profile_name: str) -> tuple[int, int]:
    """(Finished chunks extracted with other prompts, finished chunks), counted per stamp in SQL
    (a few groups, so opening a big workspace reads no chunk into Python)."""
    current = fingerprint(profile_for(store, profile_name))
    defaults: dict[str, str] = {}
    groups = stored.finished_stamp_counts(store)
    stale = sum(n for profile, stamp, n in groups if _stamp(profile, stamp, profile_name, defaults) != current)
    return stale, sum(n for _, _, n in groups)


def _stamp(profile: str | None, stamp: str | None, profile_name: str, defaults: dict[str, str]) -> str:
    """A chunk's stamp; for one finished before stamping, its profile's bundled prompts' (cached in `defaults`)."""
    if stamp is not None:
        return stamp
    name = profile or ""
    if name not in defaults:
        defaults[name] = _default_fingerprint(name or profile_name)
    return defaults[name]


def _default_fingerprint(name: str) -> str:
    try:
        return fingerprint(load_profile(name))
    except ValueError:  # a profile this version no longer ships
        return ""
