"""The identities of graph items: an entity's key from its name, a relation's pair and reference.

Every layer agrees on these, so they live at the bottom: extraction stamps keys on records,
storage keys rows by them, the graph merges by them and retrieval embeds under them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

_QUOTES = "\"'`\u201c\u201d\u2018\u2019\u00ab\u00bb"
_SPACE = re.compile(r"\s+")

def entity_key(name: str) -> str:
    """The identity of a name: Unicode-normalised, quotes and extra space removed, case folded."""
    text = unicodedata.normalize("NFKC", name).strip().strip(_QUOTES).strip()
    return _SPACE.sub(" ", text).casefold()


def distinct(texts: Iterable[str]) -> list[str]:
    """Non-empty texts without repeats (compared by normalised form), first-seen order."""
    seen: set[str] = set()
    result = []
    for text in texts:
        text = text.strip()
        marker = _SPACE.sub(" ", text).casefold().rstrip(".")
        if text and marker not in seen:
            seen.add(marker)
            result.append(text)
    return result


def relation_pair(source_key: str, target_key: str) -> tuple[str, str]:
    """Undirected: the two keys in a fixed order."""
    return (source_key, target_key) if source_key <= target_key else (target_key, source_key)



RELATION_REF_SEP = "\x1f"


def relation_ref(source_key: str, target_key: str) -> str:
    """The embedding/queue reference of a relation: its two keys joined by U+001F."""
    return f"{source_key}{RELATION_REF_SEP}{target_key}"


def split_relation_ref(ref: str) -> tuple[str, str]:
    """The (source_key, target_key) of a relation reference."""
    source, _, target = ref.partition(RELATION_REF_SEP)
    return source, target
