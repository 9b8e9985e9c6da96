"""The `typing` profile: the concept layer's names handed to the model to type and link.

A model too small to write records (135M-1B) can still classify. The prompt lists the
chunk's candidate names (`base.concepts.find_concepts`) and the pairs that share a
sentence; the reply gives each name a type from the allowed list (or "not a name") and
each pair a few words for its link (or nothing). `schema_for` is the reply's JSON schema,
sent to Ollama as `format` so a grammar keeps the model to the listed names and types;
`read_reply` is forgiving (JSON of that shape or of list shape, or "Name | type" and
"A | B | link" lines) and keeps only names and pairs from the candidates, so every record
it returns is grounded by construction. Descriptions are the chunk's own sentences, never
the model's words. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from docatlas.core.base.concepts import find_concepts
from docatlas.core.base.keys import entity_key, relation_pair
from docatlas.core.base.records import EntityRecord, ParseResult, RelationRecord
from docatlas.core.base.sentences import sentence_spans
from docatlas.core.ingest import repair
from docatlas.core.ingest.described import first_sentence

NOT_A_NAME = "not a name"
MAX_NAMES = 40  # candidates listed in one prompt (a long reply is a slow one)
MAX_PAIRS = 30
LINK_CHARS = 30  # room for a link's few words
PAIR_MARK = " | "
_NO_LINK = frozenset({"", "none", "no", "unrelated", "no link", "no relation", "not linked", "n/a", "-"})
_QUOTED = re.compile(r'"([^"\n]{1,120})"\s*:\s*"([^"\n]{0,120})"')
_LINE = re.compile(r"^\s*(?:[-*•]\s*|\d+[.)]\s*)?(.+?)\s*$")


@dataclass(frozen=True)
class Candidates:
    """The names of one chunk to type, and the pairs of them that share a sentence."""

    names: tuple[str, ...] = ()
    pairs: tuple[tuple[str, str], ...] = ()
    keys: dict[str, str] = field(default_factory=dict)  # entity key -> listed name

    def listed_names(self) -> str:
        """The names as the prompt lists them, one a line."""
        return "\n".join(f"- {n}" for n in self.names) or "(none)"

    def listed_pairs(self) -> str:
        """The pairs as the prompt lists them, one a line."""
        return "\n".join(f"- {a}{PAIR_MARK}{b}" for a, b in self.pairs) or "(none)"


def candidates_of(text: str) -> Candidates:
    """The chunk's concept-layer names (first seen first) and its most repeated sentence pairs."""
    found = find_concepts(text)
    keys = list(found.names)[:MAX_NAMES]
    kept = set(keys)
    links = [(pair, n) for pair, n in found.links.items() if set(pair) <= kept]
    order = {k: i for i, k in enumerate(keys)}
    links.sort(key=lambda item: (-item[1], min(order[k] for k in item[0])))
    pairs = []
    for (a, b), _n in links[:MAX_PAIRS]:
        first, second = sorted((a, b), key=order.__getitem__)
        pairs.append((found.names[first], found.names[second]))
    return Candidates(tuple(found.names[k] for k in keys), tuple(pairs), {k: found.names[k] for k in keys})


def schema_for(candidates: Candidates, entity_types: Sequence[str]) -> dict:
    """The reply's JSON schema: every listed name typed from the list, every pair given a link."""
    choices = [*dict.fromkeys(t for t in entity_types if t.strip()), NOT_A_NAME]
    schema: dict = {
        "type": "object",
        "properties": {"types": {"type": "object",
                                 "properties": {n: {"enum": choices} for n in candidates.names},
                                 "required": list(candidates.names), "additionalProperties": False}},
        "required": ["types"],
        "additionalProperties": False,  # a grammar would otherwise let the model add names of its own
    }
    if candidates.pairs:
        listed = [f"{a}{PAIR_MARK}{b}" for a, b in candidates.pairs]
        schema["properties"]["links"] = {"type": "object",
                                         "properties": {p: {"type": "string", "maxLength": LINK_CHARS}
                                                        for p in listed},
                                         "required": listed, "additionalProperties": False}
        schema["required"].append("links")
    return schema


def read_reply(text: str, candidates: Candidates, chunk: str, entity_types: Sequence[str] = ()) -> ParseResult:
    """Typed names and linked pairs from a reply; only listed names, only listed pairs."""
    text = repair.strip_fences(repair.strip_think(repair.normalise_text(text or "")))
    typed, links = _from_json(text)
    if not typed and not links:  # JSON cut by the reply limit, or not JSON at all
        typed, links = _from_quoted(text)
    if not typed and not links:
        typed, links = _from_lines(text)
    spans = sentence_spans(chunk)
    allowed = {t.strip().casefold(): t.strip() for t in entity_types if t.strip()}
    pair_keys = {relation_pair(entity_key(a), entity_key(b)) for a, b in candidates.pairs}
    entities: dict[str, EntityRecord] = {}
    rejected: set[str] = set()
    for name, written in typed:
        key = entity_key(name)
        kind = repair.clean_text(written).casefold()
        if key not in candidates.keys or key in entities or key in rejected:
            continue
        if kind in (NOT_A_NAME, "none", "not a name."):
            rejected.add(key)
            continue
        listed = candidates.keys[key]
        entities[key] = EntityRecord(listed, allowed.get(kind, kind or "other"), first_sentence(chunk, spans, [listed]))
    relations: dict[tuple[str, str], RelationRecord] = {}
    for a, b, words in links:
        ka, kb = entity_key(a), entity_key(b)
        pair = relation_pair(ka, kb)
        phrase = repair.clean_text(words).strip(" .;,")[:LINK_CHARS]
        if pair not in pair_keys or pair in relations or phrase.casefold() in _NO_LINK or {ka, kb} & rejected:
            continue
        source, target = candidates.keys[ka], candidates.keys[kb]
        relations[pair] = RelationRecord(source, target, phrase, first_sentence(chunk, spans, [source], [target]))
    result = ParseResult(entities=list(entities.values()), relations=list(relations.values()), completed=True)
    result.status = "ok" if result.record_count else "empty"
    return result


def _from_json(text: str) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    """(name, type) and (a, b, link) from a JSON reply, keyed ({"types": {name: type}}) or listed."""
    obj = repair.load_json_object(text)
    if not obj:
        return [], []
    typed: list[tuple[str, str]] = []
    links: list[tuple[str, str, str]] = []
    types = obj.get("types", obj.get("names", obj.get("entities")))
    if isinstance(types, dict):
        typed = [(str(k), str(v)) for k, v in types.items()]
    elif isinstance(types, list):
        typed = [(str(i.get("name", "")), str(i.get("type", ""))) for i in types if isinstance(i, dict)]
    found = obj.get("links", obj.get("pairs", obj.get("relations")))
    if isinstance(found, dict):
        for k, v in found.items():
            ends = [p.strip() for p in str(k).split("|")]
            if len(ends) == 2:
                links.append((ends[0], ends[1], str(v)))
    elif isinstance(found, list):
        links = [(str(i.get("source", i.get("a", ""))), str(i.get("target", i.get("b", ""))),
                  str(i.get("relation", i.get("link", i.get("keywords", ""))))) for i in found if isinstance(i, dict)]
    return typed, links


def _from_quoted(text: str) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    """Every finished `"key": "value"` of a reply (a key with `|` is a pair)."""
    typed: list[tuple[str, str]] = []
    links: list[tuple[str, str, str]] = []
    for key, value in _QUOTED.findall(text):
        ends = [p.strip() for p in key.split("|")]
        if len(ends) == 2:
            links.append((ends[0], ends[1], value))
        elif len(ends) == 1:
            typed.append((key, value))
    return typed, links


def _from_lines(text: str) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    """"Name | type" and "A | B | link" lines (a colon works for the first kind too)."""
    typed: list[tuple[str, str]] = []
    links: list[tuple[str, str, str]] = []
    for line in text.splitlines():
        body = _LINE.match(line)
        if not body:
            continue
        parts = [p.strip(" \t\"',{}") for p in body.group(1).split("|")]
        if len(parts) == 1 and ":" in parts[0]:
            parts = [p.strip(" \t\"',{}") for p in parts[0].rsplit(":", 1)]
        if len(parts) == 2:
            typed.append((parts[0], parts[1]))
        elif len(parts) >= 3:
            links.append((parts[0], parts[1], " ".join(parts[2:])))
    return typed, links
