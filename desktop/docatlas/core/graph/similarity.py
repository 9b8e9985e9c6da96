"""Name similarity: which entity names are likely one thing written two ways. Pure, no I/O.

Rules, strongest first (a pair gets the score of the first rule that holds):

- same words (0.95): the same words, only punctuation or spacing differ (`Jean-Luc` / `Jean Luc`).
- legal form (0.92): equal once legal suffixes are dropped (`Harbor Analytics Ltd` / `Harbor Analytics`).
- initials (0.9): one name abbreviates the other with initials, the last word equal
  (`John T. Doe` / `John Doe`, `J. Doe` / `John Doe`).
- acronym (0.85): a short name is the initials of the other (`IBM` / `International
  Business Machines`, with or without the small words: `BoA` / `Bank of America`).
- spelling (the difflib ratio, at least 0.88): nearly the same letters (`Harbour` / `Harbor`).
- contained (0.72): one name is the other with one more word before or after
  (`Northwind` / `Northwind Labs`), when both have the same known type.

Names holding different numbers never match (`Windows 10` / `Windows 11`). When both
types are known and differ, the score drops by 0.15. Only pairs scoring `MIN_SCORE` or
more are returned.

Speed: names are compared only within blocks that share a word, the first three letters
of the first word, or an acronym form. A block bigger than `MAX_BLOCK` (a very common
word) is compared by sorted neighbourhood: each name with the next `WINDOW` names.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from docatlas.core.base.keys import entity_key

MIN_SCORE = 0.7
SPELLING = 0.88
MAX_BLOCK = 200
WINDOW = 20
TYPE_PENALTY = 0.15
BIGRAM_SHARE = 0.7  # letter-pair overlap (Dice) below which difflib is not asked

SMALL_WORDS = frozenset({"the", "of", "and", "for", "a", "an", "in", "on", "at", "to", "de", "du", "des",
                         "der", "die", "das", "la", "le", "les", "van", "von", "y", "e", "und", "et"})
LEGAL_FORMS = frozenset({"inc", "incorporated", "ltd", "limited", "llc", "llp", "lp", "plc", "corp",
                         "corporation", "co", "company", "gmbh", "ag", "sa", "sas", "nv", "bv", "srl",
                         "spa", "oy", "ab", "kg", "pty", "sarl"})
_WORD = re.compile(r"[^\W_]+")
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class Named:
    """One entity as the similarity rules see it."""

    key: str
    name: str
    type: str = "unknown"


@dataclass(frozen=True)
class Match:
    """Two entities that look like one: keys in order (`a_key < b_key`), a score, the rule."""

    a_key: str
    b_key: str
    score: float
    reason: str


@dataclass(frozen=True)
class _Form:
    """The parts of a name the rules compare."""

    key: str
    type: str
    words: tuple[str, ...]
    core: tuple[str, ...]  # without legal suffixes
    numbers: tuple[str, ...]
    short: str  # the letters of a name that may be an acronym ("ibm", "boa"), else ""
    acronyms: frozenset[str]  # initials of a name of several words
    text: str  # the core words joined by spaces
    bigrams: frozenset[str]  # letter pairs of `text`, for a cheap first look at spelling


def _form(item: Named) -> _Form:
    words = tuple(_WORD.findall(entity_key(item.name)))
    core = tuple(w for w in words if w not in LEGAL_FORMS) or words
    letters = "".join(words)
    short = ""
    if words and all(len(w) == 1 for w in words) and len(words) > 1:
        short = letters  # I.B.M.
    elif len(core) == 1 and 2 <= len(core[0]) <= 6 and core[0].isalpha():
        short = core[0]
    acronyms: set[str] = set()
    if len(core) >= 2:
        acronyms.add("".join(w[0] for w in core))
        big = [w for w in core if w not in SMALL_WORDS]
        if len(big) >= 2:
            acronyms.add("".join(w[0] for w in big))
    etype = (item.type or "unknown").lower()
    text = " ".join(core)
    return _Form(item.key, etype, words, core, tuple(_DIGITS.findall(entity_key(item.name))), short,
                 frozenset(acronyms), text, frozenset(text[i:i + 2] for i in range(len(text) - 1)))


def _abbreviates(a: Sequence[str], b: Sequence[str]) -> bool:
    """One word list abbreviates the other: words equal or initial-for-word, extra initials
    allowed, at least one full word shared, the last words equal."""
    if not a or not b or a[-1] != b[-1] or len(a[-1]) < 2:
        return False
    i = j = shared = 0
    while i < len(a) and j < len(b):
        s, t = a[i], b[j]
        if s == t:
            shared += len(s) > 1
            i, j = i + 1, j + 1
        elif (len(s) == 1 and t.startswith(s)) or (len(t) == 1 and s.startswith(t)):
            i, j = i + 1, j + 1
        elif len(s) == 1:
            i += 1
        elif len(t) == 1:
            j += 1
        else:
            return False
    rest = list(a[i:]) + list(b[j:])
    return shared >= 1 and all(len(w) == 1 for w in rest)


def _contained(a: Sequence[str], b: Sequence[str]) -> bool:
    """The shorter word list is the longer one minus one word at its start or end."""
    short, long = (a, b) if len(a) < len(b) else (b, a)
    if len(long) != len(short) + 1 or not short or max(len(w) for w in short) < 3:
        return False
    return tuple(long[1:]) == tuple(short) or tuple(long[:-1]) == tuple(short)


def _rule(x: _Form, y: _Form) -> tuple[float, str] | None:
    """The first rule that holds for the pair, with its score."""
    if x.numbers != y.numbers:
        return None
    if x.words == y.words:
        return 0.95, "same words"
    if x.core == y.core:
        return 0.92, "legal form"
    if x.core[-1:] == y.core[-1:] and (len(x.core) > 1 or len(y.core) > 1) and _abbreviates(x.core, y.core):
        return 0.9, "initials"
    if (x.short and x.short in y.acronyms) or (y.short and y.short in x.acronyms):
        return 0.85, "acronym"
    a, b = x.text, y.text
    if min(len(a), len(b)) >= 5 and _may_be_spelling(x, y):
        matcher = SequenceMatcher(None, a, b, autojunk=False)
        if matcher.real_quick_ratio() >= SPELLING and matcher.quick_ratio() >= SPELLING:
            ratio = matcher.ratio()
            if ratio >= SPELLING:
                return round(ratio, 3), "spelling"
    if x.type == y.type != "unknown" and _contained(x.core, y.core):
        return 0.72, "contained"
    return None


def _may_be_spelling(x: _Form, y: _Form) -> bool:
    """Cheap bounds before difflib: similar lengths and at least half the letter pairs shared."""
    la, lb = len(x.text), len(y.text)
    if 2 * min(la, lb) < SPELLING * (la + lb):
        return False
    shared = len(x.bigrams & y.bigrams)
    return 2 * shared >= BIGRAM_SHARE * (len(x.bigrams) + len(y.bigrams))


def score_pair(a: Named, b: Named) -> tuple[float, str] | None:
    """The similarity score and rule for two names, or None when they do not look alike."""
    return _scored(_form(a), _form(b))


def _scored(x: _Form, y: _Form) -> tuple[float, str] | None:
    found = _rule(x, y)
    if found is None:
        return None
    score, reason = found
    if x.type != y.type and "unknown" not in (x.type, y.type):
        score -= TYPE_PENALTY
    return (round(score, 3), reason) if score >= MIN_SCORE else None


def candidate_pairs(forms: Sequence[_Form]) -> set[tuple[int, int]]:
    """Index pairs worth scoring: those sharing a block (see the module docstring)."""
    blocks: dict[str, list[int]] = defaultdict(list)
    for i, f in enumerate(forms):
        keys = {"w:" + w for w in f.core if len(w) > 1 and w not in SMALL_WORDS}
        if f.core:
            keys.add("p:" + f.core[0][:3])
        keys |= {"a:" + a for a in f.acronyms}
        if f.short:
            keys.add("a:" + f.short)
        for k in keys:
            blocks[k].append(i)
    pairs: set[tuple[int, int]] = set()
    for members in blocks.values():
        if len(members) < 2:
            continue
        if len(members) <= MAX_BLOCK:
            pairs.update((a, b) if a < b else (b, a)
                         for n, a in enumerate(members) for b in members[n + 1:])
            continue
        ordered = sorted(members, key=lambda i: forms[i].key)
        for n, a in enumerate(ordered):
            pairs.update((a, b) if a < b else (b, a) for b in ordered[n + 1:n + 1 + WINDOW])
    return pairs


def find_duplicates(items: Iterable[Named]) -> list[Match]:
    """Likely duplicates among `items`, best first; each pair once, keys in order."""
    forms = [_form(item) for item in items]
    found = []
    for i, j in candidate_pairs(forms):
        x, y = forms[i], forms[j]
        if x.key == y.key:
            continue
        scored = _scored(x, y)
        if scored is not None:
            a, b = sorted((x.key, y.key))
            found.append(Match(a, b, *scored))
    return sorted(found, key=lambda m: (-m.score, m.a_key, m.b_key))
