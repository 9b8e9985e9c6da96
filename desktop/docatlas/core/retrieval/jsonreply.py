"""Tolerant reading of JSON that small models write: fences, prose around it, small slips."""

from __future__ import annotations

import json
import re

from docatlas.core.llm.protocol import strip_think

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def parse_json_object(text: str) -> dict | None:
    """The first JSON object in a reply, repaired where cheap; None when there is none."""
    text = strip_think(text or "")
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        start = candidate.find("{")
        while start != -1:
            found = _object_at(candidate, start)
            if found is not None:
                return found
            start = candidate.find("{", start + 1)
    return None


def _object_at(text: str, start: int) -> dict | None:
    decoder = json.JSONDecoder()
    try:
        value, _ = decoder.raw_decode(text, start)
        return value if isinstance(value, dict) else None
    except ValueError:
        pass
    end = text.rfind("}")
    if end <= start:
        return None
    snippet = _TRAILING_COMMA.sub(r"\1", text[start : end + 1])
    for attempt in (snippet, snippet.replace("'", '"')):
        try:
            value = json.loads(attempt)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def string_list(value: object) -> list[str]:
    """A list of non-empty strings from a list, a comma-separated string or nothing."""
    if isinstance(value, str):
        items: list[object] = re.split(r"[,;\n]", value)
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        return []
    out = []
    for item in items:
        if isinstance(item, dict):  # {"keyword": "..."} and the like
            item = next((v for v in item.values() if isinstance(v, str)), "")
        text = str(item).strip().strip("\"'").strip()
        if text:
            out.append(text)
    return list(dict.fromkeys(out))
