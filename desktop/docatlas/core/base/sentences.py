"""Sentences of a text and the one that best matches another text, by shared words (no model).

A sentence ends at `.`, `!` or `?` (with closing quotes or brackets) before a space, at a
CJK full stop, or at a blank line; spans are (start, end) with surrounding space trimmed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_END = re.compile(r"""[.!?][)"'\]\u201d\u2019]*(?=\s)|[。！？]|\n[ \t]*\n""")
_WORD = re.compile(r"\w+")
_CITATION = re.compile(r"\[[^\[\]]{1,80}\]")
_SMALL_WORDS = frozenset(
    "a an and are as at be by for from has have he her his in is it its of on or she that the their "
    "they this to was were which who with".split())


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of `text`, in order, trimmed of surrounding whitespace."""
    spans, start = [], 0
    for match in _END.finditer(text):
        _add(spans, text, start, match.end())
        start = match.end()
    _add(spans, text, start, len(text))
    return spans


def _add(spans: list[tuple[int, int]], text: str, start: int, end: int) -> None:
    piece = text[start:end]
    stripped = piece.strip()
    if stripped:
        lead = len(piece) - len(piece.lstrip())
        spans.append((start + lead, start + lead + len(stripped)))


def words(text: str) -> set[str]:
    """The meaningful words of a text, lower-cased, without citation labels."""
    return {w for w in _WORD.findall(_CITATION.sub(" ", text).casefold()) if w not in _SMALL_WORDS}


def best_sentence(text: str, claims: Iterable[str]) -> tuple[int, int] | None:
    """The span of the sentence of `text` sharing the most words with `claims` (ties: the first)."""
    wanted: set[str] = set()
    for claim in claims:
        wanted |= words(claim)
    best, best_score = None, -1
    for start, end in sentence_spans(text):
        score = len(words(text[start:end]) & wanted)
        if score > best_score:
            best, best_score = (start, end), score
    return best


def answer_sentences(answer: str) -> list[tuple[int, int]]:
    """Sentence spans of an answer; a citation written after the full stop ("... 1815. [C1]")
    belongs to the sentence before it."""
    glued = _LATE_CITATION.sub(r"\2\3\1", answer)  # same length: the spans fit `answer`
    return sentence_spans(glued)


_LATE_CITATION = re.compile(r"([.!?])(\s+)((?:\[[^\[\]]{1,80}\]\s*)*\[[^\[\]]{1,80}\])")
