"""Turn one model reply into typed records, whatever shape the model drifted into.

`parse_reply` reads the five output formats DocAtlas prompts for, whichever was asked:

- `lightrag` tuples  ("entity"<|>name<|>type<|>desc) ## ("relationship"<|>src<|>tgt<|>desc<|>kw<|>w)
- `graphrag` tuples  same delimiters, relationship = src, tgt, desc, strength
- `compact` lines    entity<|#|>name<|#|>type<|#|>desc / relation<|#|>src<|#|>tgt<|#|>kw<|#|>desc
- `lean` lines       the same without the descriptions: entity<|#|>name<|#|>type / relation<|#|>src<|#|>tgt<|#|>kw
- `json`             {"entities": [...], "relationships": [...]} (many key spellings)

Rules chosen for the ambiguous cases:

- Relation field order follows the record's own style: a record written with `<|#|>` (or an
  unquoted `relation` tag) is compact (keywords before description); any other is a tuple
  (description before keywords). When the two look swapped - the keyword slot holds a
  sentence and the description slot a short phrase - the sentence becomes the description.
- Strength: only a LAST field that comes after the text fields (tuple: after the
  description, i.e. 2+ fields past src/tgt; compact: after keywords and description, i.e. 3+)
  and is exactly a number in [0, 100] becomes strength, clamped to [0, 10]. A numeric
  description (`1000`, `-1.5`, `version 1.0`) stays a description.
- Truncation: without a completion marker, the reply's last tuple record that lacks its
  closing `)` is dropped when its last field is visibly cut (it does not end with a closing
  quote, sentence punctuation, a bracket or a digit). That last record is also dropped when
  it lacks a field its format requires (entity 3; relation 3, compact relation 4), so a
  compact line is kept when complete in fields. A JSON object cut before its `}` is dropped.
- An `entity` row with 4+ fields is read as a relation when its type slot holds the name
  of another entity of the reply, or - in a row of exactly 4 fields whose last is not a
  number - a capitalised name that is no known type (`entity|Alice|Bob|works with|...`).
- Think blocks are removed first; an unclosed `<think>` drops everything after it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from docatlas.core.base.records import EntityRecord, ParseResult, RelationRecord
from docatlas.core.ingest import repair

__all__ = ["parse_reply"]

HASH = "\x1f"  # <|#|> and its corruptions
PLACEHOLDER = "\x1d"  # a literal {tuple_delimiter} echoed by the model

_HASH_DELIM = re.compile(r"<\|{1,2}#{1,2}\|{0,2}>?|<?\|{1,2}#{1,2}\|{1,2}>?")
_TUPLE_DELIM = re.compile(r"(?:\s*(?:<\s*/?\|{1,2}\s*>|(?<![<|/])\|>|<\|(?![|#>]))\s*)+")
_STRONG_DELIM = re.compile(r"\s*[\x1f\x1d]+\s*")
_RECORD_START = re.compile(
    r"""^\(*\s*["“”']*\s*[A-Za-z_][\w\- ]{0,40}?\s*["“”']*\s*\**\s*(?:[\x1f\x1d]|</?\||\|)"""
)
_DECOR = re.compile(r"^\s*(?:[-*+•>]\s+|\d+[.)]\s+|#+\s*|\*\*\s*)*")
_GLUED_TUPLE = re.compile(
    r"""\)\s*(?=\(\s*["“”']?\s*[A-Za-z_]+\s*["“”']?\s*(?:[\x1f\x1d]|</?\||\|))"""
)
_GLUED_LINE = re.compile(
    r"""(?:(?<=[.!?。！？)\]])|(?<=[^\s(]["”']))[ \t]*"""
    r"""(?=(?:entity|relation|relationship)\s*["”']?\s*(?:[\x1f\x1d]|<\|))""",
    re.IGNORECASE,
)
_TERMINAL = set(".!?。！？\"”'’)）]」』") | set("0123456789")

ENTITY_TAGS = frozenset({"entity", "entities", "node", "nodes"})
RELATION_TAGS = frozenset(
    {"relationship", "relationships", "relation", "relations", "edge", "edges", "rel", "link"}
)
KEYWORD_TAGS = frozenset(
    {"content_keywords", "content keywords", "keywords", "high_level_keywords"}
)
_SPLIT_TAGS = ENTITY_TAGS | RELATION_TAGS | {"content_keywords"}
# words that read as an entity type (used to tell a type slot from a name slot)
_KNOWN_TYPES = frozenset(
    {
        "person", "people", "organization", "organisation", "geo", "location", "place", "event",
        "category", "concept", "company", "object", "date", "time", "technology", "product",
        "other", "artifact", "method", "content", "data", "document", "law", "number", "text",
    }
)
# a relation endpoint equal to one of these (or a requested type) is a type, not an entity
_TYPE_ENDPOINTS = frozenset(
    {"person", "organization", "organisation", "geo", "location", "event", "category", "concept"}
)


@dataclass
class _Raw:
    """One delimited record before interpretation."""

    tag: str  # lowercased, cleaned first field
    quoted_tag: bool  # the tag was written in quotes ("entity") - tuple style
    fields: list[str]  # raw fields after the tag
    compact: bool  # written with <|#|>
    weak: bool  # split on a bare `|`
    final: bool  # last record of a reply without completion marker (may be cut off)
    cut: bool  # ... and a tuple whose `)` and end of last field are missing


def parse_reply(text: str, *, entity_types: Sequence[str] = ()) -> ParseResult:
    """Parse one model reply into entities, relations and content keywords.

    `entity_types` are the types the prompt asked for; they help to spot a relation whose
    target is a type name. The function never raises on model output and does no I/O."""
    text = repair.strip_think(repair.normalise_text(text or ""))
    text, completed = repair.cut_completion(text)
    text = repair.strip_fences(text)

    requested = {t.strip().lower() for t in entity_types if t.strip()}
    raws = _delimited_records(text, completed)
    if raws:
        entities, relations, keywords = _interpret(raws, requested)
    else:
        entities, relations, keywords = repair.json_records(text)
    entities, relations = _drop_type_names(entities, relations, requested)

    result = ParseResult(
        entities=_unique(entities),
        relations=_unique(relations),
        content_keywords=keywords,
        completed=completed,
    )
    if result.record_count:
        result.status = "ok"
    else:
        result.status = "refusal" if repair.looks_like_refusal(text) else "empty"
    return result


# --------------------------------------------------------------------------- delimited text


def _delimited_records(text: str, completed: bool) -> list[_Raw]:
    """Split delimited text into raw records (tuple, compact or bare-pipe style)."""
    t = _HASH_DELIM.sub(HASH, text)
    t = re.sub(r"\{+\s*tuple_delimiter\s*\}+", PLACEHOLDER, t, flags=re.IGNORECASE)
    t = re.sub(r"\{+\s*record_delimiter\s*\}+", "\n", t, flags=re.IGNORECASE)
    t = re.sub(r"#{2,}", "\n", t)  # the `##` record delimiter (and heading marks)
    t = _GLUED_TUPLE.sub(")\n", t)  # `) (` and `)(` between records
    t = _GLUED_LINE.sub("\n", t)  # `...description.entity<|#|>Bob`

    lines: list[str] = []
    joinable = False  # the last record is open and no blank line came after it
    for line in t.split("\n"):
        s = _DECOR.sub("", line).strip()
        if not s:
            joinable = False
            continue
        if _RECORD_START.match(s):
            lines.append(s)
        elif joinable:
            lines[-1] += " " + s  # a quoted field running over several lines
        else:
            continue
        joinable = _open_tuple(lines[-1])
    raws: list[_Raw] = []
    for index, line in enumerate(lines):
        raws.extend(_split_line(line, last=index == len(lines) - 1 and not completed))
    return raws


def _open_tuple(line: str) -> bool:
    """A tuple record still inside a quoted field (a quote left open, no final `)`)."""
    open_quote = line.count('"') % 2 == 1 or line.count("“") > line.count("”")
    return line.startswith("(") and not line.endswith(")") and open_quote


def _split_line(line: str, *, last: bool) -> list[_Raw]:
    """Fields of one record line; a line may hold several glued records."""
    body = line.strip().rstrip(",;").strip()
    tuple_style = body.startswith("(")
    closed = False
    if tuple_style:
        body = body[1:].strip()
        if body.endswith(")"):
            body, closed = body[:-1], True
    compact = HASH in body
    weak = False
    if HASH in body or PLACEHOLDER in body:
        parts = _STRONG_DELIM.split(body)
        if len(parts) < 4 and _TUPLE_DELIM.search(body):
            # delimiters mixed within the record: `<|>` stood in for `<|#|>` somewhere
            parts = [p for part in parts for p in _TUPLE_DELIM.split(part)]
    elif _TUPLE_DELIM.search(body):
        parts = _TUPLE_DELIM.split(body)
    else:
        parts = body.strip().strip("|").split("|")
        weak = True
        if repair.clean_text(parts[0]).lower() not in _SPLIT_TAGS | KEYWORD_TAGS:
            return []

    groups: list[list[str]] = [[parts[0]]]
    for part in parts[1:]:
        if repair.clean_text(part).lower() in _SPLIT_TAGS and len(groups[-1]) >= 4:
            groups.append([part])  # `...description<|#|>entity<|#|>Bob...`
        else:
            groups[-1].append(part)

    raws = []
    for i, group in enumerate(groups):
        head = group[0].strip().lstrip("(").strip()
        tag = repair.clean_text(head).lower()
        final = last and i == len(groups) - 1
        cut = final and tuple_style and not closed and not _ends_complete(group[-1])
        raws.append(
            _Raw(
                tag=tag,
                quoted_tag=head[:1] in "\"“”'",
                fields=group[1:],
                compact=compact,
                weak=weak,
                final=final,
                cut=cut,
            )
        )
    return raws


def _ends_complete(field: str) -> bool:
    """The field ends with a closing quote, sentence punctuation, a bracket or a digit."""
    s = field.rstrip()
    return bool(s) and s[-1] in _TERMINAL


# --------------------------------------------------------------------------- interpretation


def _interpret(
    raws: list[_Raw], requested: set[str]
) -> tuple[list[EntityRecord], list[RelationRecord], list[str]]:
    """Turn raw records into entities, relations and keywords."""
    raws = [r for r in raws if not (r.cut or (r.final and len(r.fields) < _needed(r)))]
    known = _KNOWN_TYPES | requested
    names: set[str] = set()
    for raw in raws:  # first pass: plain 3-field entities tell names and types apart
        if raw.tag in ENTITY_TAGS and len(raw.fields) == 3:
            names.add(repair.name_key(repair.clean_name(raw.fields[0])))
            known |= {repair.clean_type(raw.fields[1])}

    entities: list[EntityRecord] = []
    relations: list[RelationRecord] = []
    keywords: list[str] = []
    for raw in raws:
        if raw.tag in KEYWORD_TAGS:
            for kw in repair.split_keywords(" , ".join(raw.fields)):
                if kw not in keywords:
                    keywords.append(kw)
        elif raw.tag in RELATION_TAGS:
            relations.extend(_relation(raw))
        elif raw.tag in ENTITY_TAGS:
            if len(raw.fields) >= 4 and _names_something(raw, names, known):
                relations.extend(_relation(raw))  # a relation row labelled `entity`
            else:
                entities.extend(_entity(raw.fields, raw.tag))
        elif (
            not raw.weak
            and len(raw.fields) >= 2
            and re.fullmatch(r"[a-z_][a-z _\-]{0,30}", raw.tag)
        ):
            # a record tagged with its type: ("organization"<|>name<|>organization<|>desc)
            entities.extend(_entity(raw.fields, raw.tag))

    return entities, relations, keywords


def _drop_type_names(
    entities: list[EntityRecord], relations: list[RelationRecord], requested: set[str]
) -> tuple[list[EntityRecord], list[RelationRecord]]:
    """Drop entities named after their own type (`person`/person) and relations with a type
    name as endpoint, unless the reply declared an entity of that name."""
    entities = [e for e in entities if repair.name_key(e.name) != e.type]
    type_names = (_TYPE_ENDPOINTS | requested) - {repair.name_key(e.name) for e in entities}
    relations = [
        r for r in relations
        if repair.name_key(r.source) not in type_names and repair.name_key(r.target) not in type_names
    ]
    return entities, relations


def _needed(raw: _Raw) -> int:
    """Fields a record must carry to count when it may have been cut off."""
    if raw.tag in RELATION_TAGS:
        return 4 if raw.compact else 3
    if raw.tag in KEYWORD_TAGS:
        return 1
    return 3 if raw.tag in ENTITY_TAGS else 2


def _names_something(raw: _Raw, names: set[str], known_types: set[str]) -> bool:
    """True when an entity row's type slot holds an entity name rather than a type: the
    name of another entity of the reply, or - in a row shaped exactly like a relation
    (4 fields, the last not a number) - a capitalised name that is no known type."""
    value = repair.clean_name(raw.fields[1])
    if not value or value.lower() in known_types:
        return False
    if repair.name_key(value) in names:
        return True
    if len(raw.fields) != 4 or repair.as_number(raw.fields[-1]) is not None:
        return False
    latin = value.isascii() and not any(ch.isdigit() for ch in value)
    return latin and value != value.lower() and not (value.isupper() and " " not in value)


def _entity(fields: list[str], tag: str) -> list[EntityRecord]:
    """An entity from [name, type, description, extra...]; [] when it is junk."""
    name = repair.clean_name(fields[0])
    if len(fields) == 1:
        return []
    rest = [f for f in fields[2:]]
    type_raw = fields[1]
    if len(fields) == 2:  # [name, description] or [name, type]
        second = repair.clean_text(fields[1])
        if repair.looks_like_sentence(second) or tag not in ENTITY_TAGS:
            type_raw, rest = (tag if tag not in ENTITY_TAGS else ""), [fields[1]]
        else:
            rest = []
    confidence = None
    if len(rest) > 1:
        number = repair.as_number(rest[-1])
        if number is not None:
            rest = rest[:-1]
            if 0 <= number <= 1:
                confidence = number
    etype = repair.clean_type(type_raw)
    if etype == "unknown" and tag not in ENTITY_TAGS:
        etype = repair.clean_type(tag)
    description = "; ".join(d for d in (repair.clean_description(f) for f in rest) if d)
    if repair.is_junk_name(name) or repair.is_reserved(etype):
        return []
    return [EntityRecord(name=name, type=etype, description=description, confidence=confidence)]


def _relation(raw: _Raw) -> list[RelationRecord]:
    """A relation from [source, target, ...] in the record's own field order."""
    fields = raw.fields
    if len(fields) < 3:
        return []
    source, target = repair.clean_name(fields[0]), repair.clean_name(fields[1])
    rest = list(fields[2:])
    keywords_first = raw.compact or (raw.tag == "relation" and not raw.quoted_tag)
    strength = None
    if len(rest) >= (3 if keywords_first else 2):
        number = repair.as_number(rest[-1])
        if number is not None and 0 <= number <= 100:
            strength, rest = repair.clamp(number, 0.0, 10.0), rest[:-1]
    cleaned = [repair.clean_text(f) for f in rest]
    if len(cleaned) == 1 and keywords_first and not repair.looks_like_sentence(cleaned[0]):
        keywords, description = cleaned[0], ""  # lean: src, tgt, keywords (the text gives the description)
    elif len(cleaned) == 1:
        keywords, description = "", cleaned[0]
    else:
        first, second, extra = cleaned[0], cleaned[1], cleaned[2:]
        keywords, description = (first, second) if keywords_first else (second, first)
        if (
            repair.looks_like_sentence(keywords)
            and not repair.looks_like_sentence(description)
            and len(description) < len(keywords)
        ):
            keywords, description = description, keywords
        description = " ".join(d for d in [description, *extra] if d)
    if repair.is_junk_name(source) or repair.is_junk_name(target) or repair.name_key(source) == repair.name_key(target):
        return []
    return [
        RelationRecord(
            source=source,
            target=target,
            keywords="" if repair.is_placeholder(keywords) else keywords,
            description=repair.clean_description(description),
            strength=strength,
        )
    ]


def _unique(records: list[Any]) -> list[Any]:
    """Drop exact duplicates, keep the first of each and the order."""
    seen: set[Any] = set()
    out = []
    for record in records:
        if record not in seen:
            seen.add(record)
            out.append(record)
    return out
