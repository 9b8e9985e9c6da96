"""Where a text mentions a name, and the sentences that mention two names, found without a model.

A mention is a case-insensitive match of the name's words (any run of whitespace between
them) that does not start or end inside a word, so "Ada" is found in "Ada's notes" but not
in "Adams".
"""

from __future__ import annotations

import re
from bisect import bisect_right
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
    lowered = text.lower()
    for name in dict.fromkeys(n.strip() for n in names):
        pattern = _pattern(name)
        if pattern is None:
            continue
        first = name.split()[0].lower()
        if len(lowered) != len(text) or len(first) != len(name.split()[0]):
            found += [m.span() for m in pattern.finditer(text)]
            continue
        position = lowered.find(first)  # a plain search for the first word, then the whole match
        while position >= 0:
            match = pattern.match(text, position)
            if match:
                found.append(match.span())
            position = lowered.find(first, position + 1)
    found.sort(key=lambda span: (span[0], -span[1]))
    out: list[tuple[int, int]] = []
    for start, end in found:
        if not out or start >= out[-1][1]:
            out.append((start, end))
    return out


def sentences_naming(text: str, *groups: Iterable[str],
                     sentences: list[tuple[int, int]] | None = None) -> list[tuple[int, int]]:
    """Spans of the sentences of `text` that mention a name of every group (an entity: one
    group of its name and aliases; a relation: one group per end). `sentences`: the text's
    `sentence_spans`, when the caller has them already."""
    sentences = sentence_spans(text) if sentences is None else sentences
    starts = [start for start, _ in sentences]
    common: set[int] | None = None
    for group in groups:
        holding = set()
        for s, e in mention_spans(text, group):
            at = bisect_right(starts, s) - 1
            if at >= 0 and e <= sentences[at][1]:
                holding.add(at)
        common = holding if common is None else common & holding
    return [sentences[at] for at in sorted(common or ())]
