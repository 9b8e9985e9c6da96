"""Repair helpers for `parse.py`: text clean-up, field cleaning, junk tests and tolerant JSON.

Everything here is pure (text in, values out). The parser combines these pieces; they are
kept apart so each rule can be read, and tested, on its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from docatlas.core.base.records import EntityRecord, RelationRecord

# --------------------------------------------------------------------------- text level

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.IGNORECASE | re.DOTALL)
_THINK_OPEN = re.compile(r"<(?:think|thinking|reasoning)>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>", re.IGNORECASE)
# <|COMPLETE|>, <|complete|>, <|COMPLETE|, |COMPLETE|>, <COMPLETE>, {completion_delimiter}
_COMPLETION = re.compile(
    r"\{+\s*completion_delimiter\s*\}+|<\s*\|?\s*complete\s*\|?\s*>?|\|\s*complete\s*\|\s*>?", re.IGNORECASE
)
_FENCE = re.compile(r"```[A-Za-z0-9_+-]*")


def normalise_text(text: str) -> str:
    """Drop a BOM and control characters (keeping newlines and tabs), unify line ends."""
    text = text.replace("\ufeff", "").replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", text)


def strip_think(text: str) -> str:
    """Remove reasoning blocks: closed ones, an unclosed `<think>` to the end, and the
    text before a stray `</think>` whose opening tag the chat template swallowed."""
    text = _THINK_BLOCK.sub("\n", text)
    opened = _THINK_OPEN.search(text)
    if opened:
        text = text[: opened.start()]
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    return text


def cut_completion(text: str) -> tuple[str, bool]:
    """Replace every completion marker (any case or corruption) by a newline.

    Returns the text and whether a marker was seen."""
    new, count = _COMPLETION.subn("\n", text)
    return new, count > 0


def strip_fences(text: str) -> str:
    """Turn markdown code fences (```json, ```text, ```) into line breaks."""
    return _FENCE.sub("\n", text)


_REFUSAL = re.compile(
    r"\b(?:i[’']?m sorry|i am sorry|i apologi[sz]e|as an ai\b|as a language model"
    r"|i can(?:not|[’']t)\b|i[’']?m unable|i am unable|i won[’']?t\b|i must decline"
    r"|unable to (?:assist|help|comply|fulfil|process|extract)"
    r"|please provide (?:the|a|me|your)|extraction can(?:not)? be performed)",
    re.IGNORECASE,
)


def looks_like_refusal(text: str) -> bool:
    """True when a reply without records reads as the model declining the task."""
    return bool(_REFUSAL.search(text[:1500]))


# --------------------------------------------------------------------------- fields

_WS = re.compile(r"\s+")
_QUOTES = "\"“”„‟«»「」『』"
_SINGLE = "'‘’"
_PAIRS = {"(": ")", "[": "]", "{": "}", "（": "）", "【": "】", "<": ">"}
_CLOSERS = {v: k for k, v in _PAIRS.items()}


def _strip_unbalanced(s: str) -> str:
    """Remove an opening bracket at the start or a closing one at the end that has no partner."""
    while s and s[0] in _PAIRS and s.count(s[0]) > s.count(_PAIRS[s[0]]):
        s = s[1:].strip()
    while s and s[-1] in _CLOSERS and s.count(s[-1]) > s.count(_CLOSERS[s[-1]]):
        s = s[:-1].strip()
    return s


def clean_text(value: Any) -> str:
    """Clean one field: control characters, surrounding quotes (straight, curly, doubled),
    unbalanced brackets, surrounding markdown `**`/backticks; collapse whitespace."""
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        value = ", ".join(clean_text(v) for v in value if clean_text(v))
    s = _WS.sub(" ", _CONTROL.sub("", str(value))).strip()
    s = s.replace('\\"', '"').replace("\\'", "'")  # escaped quotes in a tuple field
    previous = None
    while s != previous:
        previous = s
        s = s.strip().strip("`").strip()
        if s.startswith("*") or s.endswith("*"):
            s = s.strip("*").strip()
        s = s.strip(_QUOTES).strip()
        if len(s) >= 2 and s[0] in _SINGLE and s[-1] in _SINGLE:
            s = s[1:-1].strip()
        s = _strip_unbalanced(s)
    return s


_TEMPLATE_WORDS = frozenset(
    {
        "entity", "entities", "entity_name", "entity_type", "entity_description", "name",
        "type", "description", "source", "target", "source_entity", "target_entity",
        "src_id", "tgt_id", "relation", "relationship", "relationship_description",
        "relationship_keywords", "relationship_strength", "relationship_type", "keywords",
        "content_keywords", "n/a", "na", "none", "null", "nil", "unknown", "...", "…", "tbd",
        "todo", "-", "--", "?", "example", "placeholder", "undefined",
    }
)
_RESERVED = frozenset({"__proto__", "constructor", "prototype", "hasownproperty", "tostring",
                       "valueof", "isprototypeof", "__definegetter__", "__definesetter__"})
_DELIMITER_BITS = ("<|", "|>", "|", "\x1f", "\x1d", "##", "tuple_delimiter", "record_delimiter")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_WORD = re.compile(r"\w+(?:['’.\-]\w+)*")
_SENTENCE_END = ".。!?！？"


def name_key(name: str) -> str:
    """Case- and space-insensitive comparison key of a name."""
    return " ".join(name.casefold().split())


def word_count(s: str) -> int:
    """Words in `s`; CJK text has no spaces, so every two CJK characters count as one word."""
    cjk = len(_CJK.findall(s))
    return len(_WORD.findall(_CJK.sub(" ", s))) + (cjk + 1) // 2


def is_placeholder(s: str) -> bool:
    """True for template words and empty markers (`entity_name`, `<TYPE>`, `N/A`, `...`)."""
    core = s.strip().strip("<>{}[]()").strip().lower()
    return not core or core in _TEMPLATE_WORDS or core.strip(".…") == ""


def is_reserved(s: str) -> bool:
    """JavaScript object keys that would poison a later dict/JSON consumer.

    Names are matched as written (`Constructor` is a fine name for a builder), types lowercased."""
    return s in _RESERVED or (s.startswith("__") and s.endswith("__") and len(s) > 4)


def looks_like_sentence(s: str) -> bool:
    """A clause rather than a name or keyword list: ends like a sentence with 4+ words,
    or runs past 10 words."""
    n = word_count(s)
    return (bool(s) and s[-1] in _SENTENCE_END and n >= 4) or n > 10


def is_junk_name(name: str) -> bool:
    """Names that must never become an entity or an endpoint (see parse.py for the list)."""
    if not name or len(name) > 120 or is_placeholder(name) or is_reserved(name):
        return True
    if name.startswith("#") or name.endswith(":"):
        return True  # markdown heading, "**Entities:**" label
    if any(bit in name for bit in _DELIMITER_BITS) or any(q in name for q in _QUOTES):
        return True
    words = word_count(name)
    return words > 12 or (name[-1] in ".。" and words > 6)


def clean_name(value: Any) -> str:
    """Clean an entity name or an endpoint; trailing commas/semicolons go too."""
    return clean_text(value).rstrip(",;，；").strip()


def clean_type(value: Any) -> str:
    """Lowercase type, first item of a list (`person, extra` -> `person`), `unknown` if empty."""
    s = clean_text(value)
    s = re.split(r"[,/|;，、]", s, maxsplit=1)[0]
    s = clean_text(s).lower()
    return "unknown" if is_placeholder(s) else s


def clean_description(value: Any) -> str:
    """Clean a description; a bare placeholder (`N/A`, `none`, `...`) becomes empty."""
    s = clean_text(value)
    return "" if is_placeholder(s) else s


def split_keywords(value: Any) -> list[str]:
    """Split a keyword field (`a, b; c` or a JSON list) into cleaned, distinct keywords."""
    items: Iterable[Any] = value if isinstance(value, list | tuple) else re.split(
        r"[,，、;；\n]", clean_text(value))
    out: list[str] = []
    for item in items:
        kw = clean_text(item)
        if kw and not is_placeholder(kw) and kw not in out:
            out.append(kw)
    return out


_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)")


def as_number(value: Any) -> float | None:
    """The value as a float when it is exactly a number (`8`, `0.75`, `+2.5`), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    s = clean_text(value)
    return float(s) if _NUMBER.fullmatch(s) else None


def clamp(x: float, low: float, high: float) -> float:
    """`x` limited to [low, high]."""
    return max(low, min(high, x))


# --------------------------------------------------------------------------- tolerant JSON


class _Bad(Exception):
    """Not JSON at this position."""


class _Cut(Exception):
    """The text ended inside a value; `partial` holds what was complete."""

    def __init__(self, partial: Any = None) -> None:
        super().__init__()
        self.partial = partial


class Partial(dict):
    """A JSON object cut off by the end of the reply (its last member may be missing)."""


_BARE_WORDS: dict[str, Any] = {
    "true": True, "false": False, "null": None, "none": None, "undefined": None, "nan": None,
}
_OPEN_QUOTES = {'"': '"', "'": "'", "“": "”", "”": "”", "‘": "’"}
_NEXT_KEY = re.compile(r"""["'“][^"'“”\n]{1,60}["'”]\s*:""")  # `"a" "key": ...` (comma missing)


class _Reader:
    """A forgiving recursive-descent JSON reader: single quotes, curly quotes, unquoted keys
    and values, trailing or missing commas, comments, Python literals, a cut-off end."""

    def __init__(self, text: str, pos: int) -> None:
        self.s = text
        self.i = pos
        self.depth = 0

    def ws(self) -> None:
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c.isspace():
                self.i += 1
            elif s.startswith("//", self.i) or c == "#":
                end = s.find("\n", self.i)
                self.i = len(s) if end < 0 else end + 1
            elif s.startswith("/*", self.i):
                end = s.find("*/", self.i + 2)
                self.i = len(s) if end < 0 else end + 2
            else:
                return

    def value(self) -> Any:
        self.ws()
        if self.i >= len(self.s):
            raise _Cut()
        c = self.s[self.i]
        if c == "{":
            return self.container("}", {})
        if c == "[":
            return self.container("]", [])
        if c in _OPEN_QUOTES:
            return self.string()
        return self.bare()

    def container(self, close: str, out: Any) -> Any:
        self.depth += 1
        if self.depth > 64:
            raise _Bad()
        self.i += 1
        is_obj = isinstance(out, dict)
        while True:
            self.ws()
            if self.i >= len(self.s):
                raise _Cut(Partial(out) if is_obj else out)
            c = self.s[self.i]
            if c == close:
                self.i += 1
                self.depth -= 1
                return out
            if c in "}]":
                raise _Bad()
            if c == ",":
                self.i += 1
                continue
            start = self.i
            if is_obj:
                key = self.string() if c in _OPEN_QUOTES else self.bare_key()
                self.ws()
                if self.i >= len(self.s):
                    raise _Cut(Partial(out))
                if self.s[self.i] not in ":=":
                    raise _Bad()
                self.i += 1
            try:
                item = self.value()
            except _Cut as cut:
                if is_obj:
                    if isinstance(cut.partial, list):
                        out[str(key)] = cut.partial  # keep the complete elements
                    raise _Cut(Partial(out)) from None
                if isinstance(cut.partial, list):
                    out.append(cut.partial)
                raise _Cut(out) from None  # a cut object or string is dropped
            if is_obj:
                out[str(key)] = item
            else:
                out.append(item)
            if self.i == start:
                raise _Bad()

    def string(self) -> str:
        s = self.s
        close = _OPEN_QUOTES[s[self.i]]
        closers = {close, '"'} if close == "”" else {close}
        self.i += 1
        buf: list[str] = []
        while self.i < len(s):
            c = s[self.i]
            if c == "\\" and self.i + 1 < len(s):
                nxt = s[self.i + 1]
                if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", s[self.i + 2 : self.i + 6]):
                    buf.append(chr(int(s[self.i + 2 : self.i + 6], 16)))
                    self.i += 6
                    continue
                buf.append({"n": "\n", "t": "\t", "r": ""}.get(nxt, nxt))
                self.i += 2
                continue
            if c in closers:
                # a quote ends the string only where JSON could go on; otherwise it is text
                j = self.i + 1
                newline = False
                while j < len(s) and s[j].isspace():
                    newline = newline or s[j] == "\n"
                    j += 1
                if j >= len(s) or s[j] in ",:}]=" or newline or _NEXT_KEY.match(s, j):
                    self.i += 1
                    return "".join(buf)
            buf.append(c)
            self.i += 1
        raise _Cut()

    def bare_key(self) -> str:
        m = re.compile(r"[^\s:=,{}\[\]\"']+").match(self.s, self.i)
        if not m:
            raise _Bad()
        self.i = m.end()
        return m.group()

    def bare(self) -> Any:
        m = re.compile(r"[^,}\]\n]*").match(self.s, self.i)
        raw = m.group() if m else ""
        word = raw.strip()
        if not word or "{" in word or "[" in word or ":" in word:
            raise _Bad()
        self.i += len(raw)
        if word.lower() in _BARE_WORDS:
            return _BARE_WORDS[word.lower()]
        number = as_number(word)
        if number is not None:
            return int(number) if re.fullmatch(r"[+-]?\d+", word) else number
        return word


def load_json_values(text: str) -> list[tuple[Any, bool]]:
    """Every JSON object or array found in `text`, in order, as (value, complete) pairs.

    Prose before, between and after is skipped; a value cut by the end of the text is
    returned with complete=False and holds only its finished members."""
    found: list[tuple[Any, bool]] = []
    i = 0
    while True:
        starts = [p for p in (text.find("{", i), text.find("[", i)) if p >= 0]
        if not starts:
            return found
        start = min(starts)
        reader = _Reader(text, start)
        try:
            value = reader.value()
        except _Bad:
            i = start + 1
            continue
        except _Cut as cut:
            if cut.partial:
                found.append((cut.partial, False))
            return found
        except RecursionError:
            i = start + 1
            continue
        found.append((value, True))
        i = reader.i


def load_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in `text` that parses (tolerantly), or None."""
    for value, _complete in load_json_values(text):
        if isinstance(value, dict):
            return dict(value)
    return None


# --------------------------------------------------------------------------- JSON records

_NAME_KEYS = ("name", "entity_name", "entity", "title", "label", "id")
_TYPE_KEYS = ("type", "entity_type", "category", "kind")
_DESC_KEYS = ("description", "entity_description", "relationship_description", "desc", "summary")
_SOURCE_KEYS = ("source", "source_entity", "src_id", "src", "from", "head", "subject")
_TARGET_KEYS = ("target", "target_entity", "tgt_id", "tgt", "to", "tail", "object")
_KEYWORD_KEYS = ("keywords", "relationship_keywords", "relationship_type", "type", "relation",
                 "predicate", "label")
_STRENGTH_KEYS = ("strength", "relationship_strength", "weight", "score")
_ENTITY_LISTS = ("entities", "nodes", "entity_list")
_RELATION_LISTS = ("relationships", "relations", "edges", "links", "relationship_list")
_KEYWORD_LISTS = ("content_keywords", "high_level_keywords")


def json_records(text: str) -> tuple[list[EntityRecord], list[RelationRecord], list[str]]:
    """Entities, relations and content keywords from every JSON value found in `text`.

    Record lists are read under any known key (`entities`/`nodes`, `relationships`/
    `relations`/`edges`...), at any depth; bare record objects and arrays of them count too.
    An object cut off by the end of the reply is dropped."""
    entities: list[EntityRecord] = []
    relations: list[RelationRecord] = []
    keywords: list[str] = []
    for value, _complete in load_json_values(text):
        _walk_json(value, entities, relations, keywords)
    return entities, relations, keywords


def _walk_json(value: Any, entities: list, relations: list, keywords: list[str]) -> None:
    """Collect records from a JSON value: record lists under known keys, bare record objects."""
    if isinstance(value, list):
        for item in value:
            _walk_json(item, entities, relations, keywords)
        return
    if not isinstance(value, dict) or (isinstance(value, Partial) and not _has_lists(value)):
        return
    lower = {str(k).strip().lower(): v for k, v in value.items()}
    if _has_lists(value):
        for key, v in lower.items():
            items = v if isinstance(v, list) else [v]
            if key in _ENTITY_LISTS:
                entities.extend(e for item in items for e in _json_entity(item))
            elif key in _RELATION_LISTS:
                relations.extend(r for item in items for r in _json_relation(item))
            elif key in _KEYWORD_LISTS:
                keywords.extend(k for k in split_keywords(v) if k not in keywords)
            elif isinstance(v, dict | list):
                _walk_json(v, entities, relations, keywords)
    elif _first(lower, _SOURCE_KEYS) is not None and _first(lower, _TARGET_KEYS) is not None:
        relations.extend(_json_relation(value))
    elif _first(lower, _NAME_KEYS) is not None:
        entities.extend(_json_entity(value))
    else:
        for v in lower.values():
            if isinstance(v, dict | list):
                _walk_json(v, entities, relations, keywords)


def _has_lists(obj: dict) -> bool:
    keys = {str(k).strip().lower() for k in obj}
    return bool(keys & set(_ENTITY_LISTS + _RELATION_LISTS + _KEYWORD_LISTS))


def _first(obj: dict[str, Any], keys: Iterable[str]) -> Any:
    """The first present, non-empty value among `keys`."""
    for key in keys:
        v = obj.get(key)
        if v not in (None, "", []):
            return v
    return None


def _json_entity(item: Any) -> list[EntityRecord]:
    """An entity from a JSON object (a cut-off object is dropped)."""
    if not isinstance(item, dict) or isinstance(item, Partial):
        return []
    obj = {str(k).strip().lower(): v for k, v in item.items()}
    name = clean_name(_first(obj, _NAME_KEYS))
    etype = clean_type(_first(obj, _TYPE_KEYS))
    confidence = as_number(obj.get("confidence"))
    if is_junk_name(name) or is_reserved(etype):
        return []
    return [
        EntityRecord(
            name=name,
            type=etype,
            description=clean_description(_first(obj, _DESC_KEYS)),
            confidence=None if confidence is None else clamp(confidence, 0.0, 1.0),
        )
    ]


def _json_relation(item: Any) -> list[RelationRecord]:
    """A relation from a JSON object (a cut-off object is dropped)."""
    if not isinstance(item, dict) or isinstance(item, Partial):
        return []
    obj = {str(k).strip().lower(): v for k, v in item.items()}
    source = clean_name(_first(obj, _SOURCE_KEYS))
    target = clean_name(_first(obj, _TARGET_KEYS))
    if is_junk_name(source) or is_junk_name(target) or name_key(source) == name_key(target):
        return []
    strength = as_number(_first(obj, _STRENGTH_KEYS))
    keywords = ", ".join(split_keywords(_first(obj, _KEYWORD_KEYS)))
    return [
        RelationRecord(
            source=source,
            target=target,
            keywords=keywords,
            description=clean_description(_first(obj, _DESC_KEYS)),
            strength=None if strength is None else clamp(strength, 0.0, 10.0),
        )
    ]
