"""Grounding: a record joins the graph only if its chunk's text backs it.

An entity is grounded when its name, or a variant of it, occurs in the chunk: the same
words up to case, whitespace, punctuation and a possessive ("Scrooge's"), a known alias, or
a close fuzzy match of the same number of words (a typo, a dropped accent). A name used in a
prompt's own example is held to the stricter rule: the chunk must contain it word for word
(up to case and spacing), so an echoed example never enters a graph. A relation is grounded
when both of its ends are. Nothing is thrown away: what is not grounded is returned with
the reason, to be stored and reviewed. Pure functions, no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from docatlas.core.base.keys import entity_key
from docatlas.core.base.records import EntityRecord, RelationRecord

FUZZY = 0.88  # SequenceMatcher ratio a near miss must reach (one wrong letter in ~8)
MIN_FUZZY_CHARS = 5  # shorter names must match exactly: "Tom" is not "Tim"
NOT_IN_TEXT = "not in the text"
EXAMPLE = "the prompt's example, not in the text"
END_MISSING = "an end is not in the text"
_POSSESSIVE = re.compile(r"(\w)['’`]s\b")
_NON_WORD = re.compile(r"[^\w]+")
_LEADING = ("the ", "a ", "an ")


@dataclass(frozen=True)
class Ungrounded:
    """A record the chunk's text does not back, with the reason."""

    record: EntityRecord | RelationRecord
    reason: str


@dataclass
class Grounding:
    """The records split into grounded ones and the rest."""

    entities: list[EntityRecord] = field(default_factory=list)
    relations: list[RelationRecord] = field(default_factory=list)
    ungrounded: list[Ungrounded] = field(default_factory=list)


def normalise(text: str) -> str:
    """Case, accents, width (NFKC), punctuation, possessives and spacing folded: " a b c "."""
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))  # "Zürich" is "Zurich"
    text = _POSSESSIVE.sub(r"\1", text)
    words = _NON_WORD.sub(" ", text).replace("_", " ").split()
    return " " + " ".join(words) + " " if words else " "


class ChunkText:
    """A chunk's text, prepared once for many name look-ups."""

    def __init__(self, text: str) -> None:
        self.folded = normalise(text)
        self.words = self.folded.split()

    def contains(self, name: str) -> bool:
        """The name's words occur in order, up to case, punctuation and possessives."""
        folded = normalise(name)
        if folded.strip() and folded in self.folded:
            return True
        for article in _LEADING:  # "The Lagos Institute" written as "Lagos Institute"
            if folded.startswith(" " + article) and folded[len(article):] in self.folded:
                return True
        return False

    def near(self, name: str) -> bool:
        """A stretch of the same number of words is a close fuzzy match of the name."""
        target = normalise(name).strip()
        size = len(target.split())
        if len(target) < MIN_FUZZY_CHARS or size == 0:
            return False
        matcher = SequenceMatcher(autojunk=False)
        matcher.set_seq2(target)
        for start in range(len(self.words) - size + 1):
            window = " ".join(self.words[start:start + size])
            if abs(len(window) - len(target)) > len(target) * (1 - FUZZY) + 1:
                continue
            matcher.set_seq1(window)
            if matcher.real_quick_ratio() >= FUZZY and matcher.quick_ratio() >= FUZZY and matcher.ratio() >= FUZZY:
                return True
        return False


def ground(
    entities: Iterable[EntityRecord],
    relations: Iterable[RelationRecord],
    text: str,
    *,
    examples: Collection[str] = (),
    aliases: Mapping[str, Collection[str]] | None = None,
    accepted: Collection[str] = (),
) -> Grounding:
    """Split records into those the chunk `text` backs and the rest (with reasons).

    `examples`: names from the prompts' examples (word-for-word rule). `aliases`: entity key
    -> other names known for it (a name is grounded when one of them is in the text).
    `accepted`: entity keys the user accepted for this chunk; they count as grounded.
    """
    chunk = ChunkText(text)
    example_keys = {entity_key(n) for n in examples}
    accepted_keys = set(accepted)
    verdicts: dict[str, str | None] = {}

    def verdict(name: str) -> str | None:
        """None when grounded, else the reason."""
        key = entity_key(name)
        if key not in verdicts:
            verdicts[key] = _verdict(name, key, chunk, example_keys, aliases or {}, accepted_keys)
        return verdicts[key]

    result = Grounding()
    for entity in entities:
        reason = verdict(entity.name)
        if reason is None:
            result.entities.append(entity)
        else:
            result.ungrounded.append(Ungrounded(entity, reason))
    for relation in relations:
        reasons = [r for r in (verdict(relation.source), verdict(relation.target)) if r]
        if not reasons:
            result.relations.append(relation)
        else:
            result.ungrounded.append(Ungrounded(relation, EXAMPLE if EXAMPLE in reasons else END_MISSING))
    return result


def _verdict(name: str, key: str, chunk: ChunkText, example_keys: set[str],
             aliases: Mapping[str, Collection[str]], accepted: set[str]) -> str | None:
    if key in accepted:
        return None
    if key in example_keys:
        return None if normalise(name) in chunk.folded else EXAMPLE
    if chunk.contains(name) or any(chunk.contains(a) for a in aliases.get(key, ())):
        return None
    return None if chunk.near(name) else NOT_IN_TEXT
