"""Entity types held to the configured list.

A type the model made up ("family member of scrooge's", "family", "unknown") is mapped to
the nearest allowed type: the same word up to spelling ("organisation"), a known synonym
("company" -> organization, "city" -> location), or a close spelling; failing that,
"other". The model's own word is kept as a note (`TypeNote`). Pure functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from difflib import get_close_matches

from docatlas.core.base.records import EntityRecord

OTHER = "other"
_SYNONYMS: dict[str, tuple[str, ...]] = {
    "person": ("people", "human", "character", "individual", "man", "woman", "family", "member",
               "author", "name", "child", "boy", "girl", "relative", "nephew", "niece", "clerk",
               "persona", "role", "occupation", "title", "ghost", "spirit"),
    "organization": ("organisation", "company", "org", "institution", "agency", "group", "firm",
                     "business", "corporation", "ministry", "school", "university", "team", "party",
                     "startup", "start-up", "restaurant", "shop", "bank"),
    "location": ("place", "geo", "city", "country", "region", "address", "town", "site", "geography",
                 "area", "street", "building", "river", "state", "village", "room", "house"),
    "event": ("meeting", "incident", "occasion", "holiday", "festival", "war", "battle", "date", "time"),
    "concept": ("idea", "topic", "theme", "category", "notion", "emotion", "feeling", "quality"),
    "technology": ("software", "tool", "device", "system", "machine", "drone", "product", "method"),
}


@dataclass(frozen=True)
class TypeNote:
    """A type the model wrote that is not in the list, and the type stored instead."""

    name: str
    written: str
    stored: str


def allowed_type(written: str, allowed: Sequence[str]) -> str:
    """The allowed type nearest to `written` (itself when allowed), else "other"."""
    word = " ".join(written.casefold().replace("_", " ").split())
    choices = [t.casefold() for t in allowed]
    if not choices or word in choices:
        return word or OTHER
    close = get_close_matches(word, choices, n=1, cutoff=0.8)
    if close:
        return close[0]
    words = word.replace("'s", "").replace("-", " ").split()
    for choice in choices:
        synonyms = _SYNONYMS.get(choice, ())
        if word in synonyms or any(w in synonyms or w == choice for w in words):
            return choice
    return OTHER


def hold_types(entities: Sequence[EntityRecord], allowed: Sequence[str]) -> tuple[list[EntityRecord], list[TypeNote]]:
    """Entities with their types mapped into `allowed`, and a note for each one changed."""
    if not allowed:
        return list(entities), []
    held: list[EntityRecord] = []
    notes: list[TypeNote] = []
    for entity in entities:
        stored = allowed_type(entity.type, allowed)
        if stored != entity.type:
            notes.append(TypeNote(entity.name, entity.type, stored))
            entity = replace(entity, type=stored)
        held.append(entity)
    return held, notes
