"""Extraction health: what one chunk's replies gave, and what a run's chunks add up to.

Per chunk: records found in the replies, grounded (kept in the graph), ungrounded (kept for
review), types remapped, replies cut at the reply limit or stopped while looping, re-asks,
and the format the first reply came in. A run (or a document) sums its chunks; `verdict`
says in one sentence when most chunks gave nothing, so that is never reported as success.
Pure: the storage of these figures is `storage.health`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, fields

MOSTLY_EMPTY = 0.5  # a run where more than this share of chunks gave no entity is not a success
_JSON = re.compile(r"^\s*(?:```\w*\s*)?[\[{]")


@dataclass
class ChunkHealth:
    """The figures of one chunk's extraction."""

    found: int = 0  # entity and relation records read from the replies
    grounded: int = 0  # of those, backed by the chunk's text (in the graph)
    ungrounded: int = 0  # kept for review
    grounded_entities: int = 0
    remapped: int = 0  # entity types mapped into the configured list
    cut: int = 0  # replies that ended at the reply limit or were stopped while looping
    retries: int = 0  # replies asked again with more room
    reply_format: str = ""  # json, compact, tuple, prose or empty


@dataclass
class HealthTotals:
    """A run's or a document's chunks summed."""

    chunks: int = 0
    no_entity: int = 0  # chunks that gave no grounded entity
    found: int = 0
    grounded: int = 0
    ungrounded: int = 0
    remapped: int = 0
    cut: int = 0
    retries: int = 0

    def add(self, health: ChunkHealth) -> None:
        """Count one chunk in."""
        self.chunks += 1
        self.no_entity += health.grounded_entities == 0
        for name in ("found", "grounded", "ungrounded", "remapped", "cut", "retries"):
            setattr(self, name, getattr(self, name) + getattr(health, name))

    @property
    def mostly_empty(self) -> bool:
        """More than half of the chunks gave no entity."""
        return self.chunks > 0 and self.no_entity > self.chunks * MOSTLY_EMPTY


def totals(healths: Iterable[ChunkHealth]) -> HealthTotals:
    """Sum chunk figures."""
    summed = HealthTotals()
    for health in healths:
        summed.add(health)
    return summed


def verdict(summed: HealthTotals, profile: str) -> str:
    """The sentence a run ends with when its chunks mostly gave nothing; "" otherwise."""
    if not summed.mostly_empty:
        return ""
    # the typing profile only types and links the names the text shows: what a small model can still do
    # (bench/candidate_typing.py: smollm2:135m grounds 18.5 records a chunk with it, 0 with json)
    hint = "try the typing profile (--profile typing)" if profile != "typing" else "try a larger model"
    if summed.found and summed.ungrounded >= summed.found * MOSTLY_EMPTY:
        return (f"{summed.no_entity} of {summed.chunks} chunks gave no entity found in the text "
                f"({summed.ungrounded} records named things the text does not contain): the model may be "
                f"too small or the profile unsuited; {hint}, or review them with `docatlas ungrounded`.")
    return (f"{summed.no_entity} of {summed.chunks} chunks gave no entity: the model may be too small "
            f"or the profile unsuited; {hint}.")


def document_reason(chunks: int, no_entity: int, ungrounded: int, cut: int, remapped: int) -> str:
    """The sentence a document's health mark explains itself with; "" when nothing is wrong."""
    parts = []
    if chunks and no_entity > chunks * MOSTLY_EMPTY:
        parts.append(f"{no_entity} of {chunks} chunks gave no entity found in the text: the model may be too "
                     "small or the profile unsuited; try the typing profile.")
    if ungrounded:
        parts.append(f"{ungrounded} records named things the text does not contain; review them in "
                     "Documents > Review Ungrounded Records.")
    if cut:
        parts.append(f"{cut} replies were cut off; their records were salvaged.")
    if remapped and parts:
        parts.append(f"{remapped} types were mapped into the list.")
    return " ".join(parts)


def reply_format(text: str) -> str:
    """The shape a reply came in: json, compact, tuple, prose or empty."""
    if not text.strip():
        return "empty"
    if _JSON.match(text):
        return "json"
    if "<|#|>" in text:
        return "compact"
    if "<|>" in text:
        return "tuple"
    return "prose"


HEALTH_FIELDS = tuple(f.name for f in fields(ChunkHealth))
