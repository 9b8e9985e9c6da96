"""Where a text mentions a name, and the sentences that mention two names, found without a model.

A mention is a case-insensitive match of the name's words (any run of whitespace between
them) that does not start or end inside a word, so "Ada" is found in "Ada's notes" but not
in "Adams".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from docatlas.core.base.sentences import sentence_spans


@lru_cache(maxsize=4096)
def _pattern(name: str) -> re.Pattern[str] | None:
    words = name.split()
    if not words:
        return None
    return re.compile(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)", re.IGNORECASE)


def mention_spans(text: str, names: Iterable[str]) -> list[tuple[int, int]]:
    """(start, end) of every mention of any of `names` in `text`, in order, without overlaps."""
    found: list[tuple[int, int]] = []
    for name in dict.fromkeys(n.strip() for n in names):
        pattern = _pattern(name)
        if pattern is not None:
            found += [m.span() for m in pattern.finditer(text)]
    found.sort(key=lambda span: (span[0], -span[1]))
    out: list[tuple[int, int]] = []
    for start, end in found:
        if not out or start >= out[-1][1]:
            out.append((start, end))
    return out


def sentences_naming(text: str, *groups: Iterable[str]) -> list[tuple[int, int]]:
    """Spans of the sentences of `text` that mention a name of every group (an entity: one
    group of its name and aliases; a relation: one group per end)."""
    spans = [mention_spans(text, group) for group in groups]
    out = []
    for start, end in sentence_spans(text):
        if all(any(start <= s and e <= end for s, e in group) for group in spans):
            out.append((start, end))
    return out
