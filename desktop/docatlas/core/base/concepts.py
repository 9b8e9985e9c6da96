"""The concept layer's names, found without a model: capitalised spans, linked by their sentence.

A name is a run of capitalised words (`Harbor Analytics`, `Maria Lopez`, `Bank of England`,
`NATO`), joined by a few small words (`of`, `de`, `van`, `&`...) when a capitalised word
follows; leading function words go (`The Kyoto Garden Tower` -> `Kyoto Garden Tower`), and a
single word that starts a sentence counts only when the chunk also writes it capitalised
elsewhere, not first in its sentence, or in capitals. Two names in one sentence are linked,
once per sentence. Pure Python and regular expressions: about a millisecond a chunk, nothing
loaded, any language that capitalises its names (CJK text yields none).

Why not a library: spaCy's small English model is not on PyPI (it comes from GitHub at first
use) and costs ~0.4 s to load and ~10 ms a chunk; GraphRAG's "fast" noun-phrase method needs
NLTK or spaCy data downloads too. The names this finds are candidates: the model's entities
replace them chunk by chunk (`docatlas.core.graph.merge`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from docatlas.core.base.keys import entity_key, relation_pair
from docatlas.core.base.sentences import sentence_spans

MODEL, CONCEPT = "model", "concept"  # a record's layer: the model's reply, or a name found in the text
SAME_SENTENCE = "named in the same sentence"  # the keywords of a concept link
MAX_WORDS = 6  # a longer capitalised run is a heading or a title, not a name
MAX_CHARS = 80
MAX_PER_SENTENCE = 8  # names linked in one sentence (a list of 40 names is not 780 relations)
_TOKEN = re.compile(r"[^\W_](?:[\w'\u2019&.-]*\w)?|&")
_JOINERS = frozenset("of de da do dos das del della di du van von der den la le les y & for".split())
_AFTER_JOINER = frozenset(("the",))  # "Bank of the West": a second small word, after a joiner
_FUNCTION = frozenset(
    "a an the this that these those there here it its he she they we you i his her their our your my me "
    "in on at by for from to of with without within into onto upon over under after before during since "
    "until when while where whereas if then than though although because as so but and or nor not no yes "
    "all any each every some many most more much few other such both either neither one two three also "
    "however therefore thus meanwhile later earlier today yesterday tomorrow now once again still yet "
    "mr mrs ms dr sir madam dear re fw fwd subject from to cc date sent page chapter section table figure "
    "is are was were be been being has have had do does did will would shall should can could may might must "
    "what which who whom whose why how".split())


@dataclass
class ChunkConcepts:
    """The names of one chunk (key -> display name, first seen) and their sentence links."""

    names: dict[str, str] = field(default_factory=dict)
    links: dict[tuple[str, str], int] = field(default_factory=dict)  # (key, key), key order -> sentences


def find_concepts(text: str) -> ChunkConcepts:
    """The capitalised names of `text` and the pairs that share a sentence (see the module)."""
    found = ChunkConcepts()
    spans = sentence_spans(text)
    sentences = [_names_in(text[start:end]) for start, end in spans]
    inner = {n.casefold() for names in sentences for n, first in names if not first}
    for names in sentences:
        keys: list[str] = []
        for name, first in names:
            single = " " not in name
            if single and first and name.casefold() not in inner and not name.isupper():
                continue  # "Later", "Meanwhile", "Reports": capitalised only because they start a sentence
            key = entity_key(name)
            if key not in keys:
                keys.append(key)
            found.names.setdefault(key, name)
        keys = keys[:MAX_PER_SENTENCE]
        for i, a in enumerate(keys):
            for b in keys[i + 1:]:
                pair = relation_pair(a, b)
                found.links[pair] = found.links.get(pair, 0) + 1
    return found


def _names_in(sentence: str) -> list[tuple[str, bool]]:
    """(name, starts the sentence) for each capitalised run of one sentence."""
    tokens = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(sentence)]
    names: list[tuple[str, bool]] = []
    i = 0
    while i < len(tokens):
        if not _capital(tokens[i][0]):
            i += 1
            continue
        run = [i]
        j = i + 1
        while j < len(tokens) and len(run) < MAX_WORDS * 2 and _joined(sentence, tokens[j - 1], tokens[j]):
            if _capital(tokens[j][0]):
                run.append(j)
                j += 1
                continue
            bridge = _bridge(sentence, tokens, j)
            if not bridge:
                break
            run.extend(range(j, j + bridge))
            j += bridge
        words = [tokens[k][0] for k in run]
        name = _trimmed(words)
        if name:  # "Then Scrooge": the name itself does not start the sentence
            names.append((name, i == 0 and name.split(" ", 1)[0] == _POSSESSIVE.sub("", words[0])))
        i = j
    return names


def _capital(word: str) -> bool:
    return word[:1].isupper()


def _bridge(sentence: str, tokens: list[tuple[str, int, int]], j: int) -> int:
    """How many small words from `j` join two capitalised ones ("of", "of the", "&"); 0 if none do."""
    if tokens[j][0].casefold() not in _JOINERS:
        return 0
    k = j + 1
    if k < len(tokens) and tokens[k][0].casefold() in _AFTER_JOINER and _joined(sentence, tokens[j], tokens[k]):
        k += 1
    if k < len(tokens) and _capital(tokens[k][0]) and _joined(sentence, tokens[k - 1], tokens[k]):
        return k - j
    return 0


def _joined(sentence: str, left: tuple[str, int, int], right: tuple[str, int, int]) -> bool:
    """Only spaces between two tokens (a comma, a dash or a line break ends a name)."""
    gap = sentence[left[2]:right[1]]
    return gap.strip(" \t") == "" and "\n" not in gap


_POSSESSIVE = re.compile(r"(?:['\u2019]s?)$")
_CONTRACTION = re.compile(r"^i['\u2019]", re.IGNORECASE)  # I'll, I'm, I've


def _trimmed(words: list[str]) -> str:
    """The run without leading and trailing function words; empty when nothing is left or too long."""
    if words:
        words = [*words[:-1], _POSSESSIVE.sub("", words[-1])]  # "Scrooge's" is Scrooge
    if words and _CONTRACTION.match(words[0]):
        words = words[1:]
    while words and (words[0].casefold().rstrip(".") in _FUNCTION or words[0].casefold() in _JOINERS):
        words = words[1:]
    while words and (words[-1].casefold() in _JOINERS or words[-1].casefold().rstrip(".") in _FUNCTION):
        words = words[:-1]
    name = " ".join(words).rstrip(".")
    if not name or len(words) > MAX_WORDS or len(name) > MAX_CHARS or len(name) < 2:
        return ""
    return name
