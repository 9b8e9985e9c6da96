"""Checks for the values of settings.json: each one's type and range, and the sentence when it is wrong.

The type comes from the setting's default (a whole number, a number, yes/no, a text or a
list of names); the ranges are below. A wrong value is replaced by the default, and the
user reads one sentence naming the key and the value used, e.g.
`settings.json: "parallel" must be a whole number from 1 to 16; using 2.`
"""

from __future__ import annotations

import json
import math
from dataclasses import MISSING, Field, fields

from docatlas.core.base.settings_hosts import HostSettingError, host_entries

BIG = 1_000_000_000  # no practical upper limit

RANGES: dict[str, tuple[float, float]] = {
    "timeout_s": (0.1, 86_400), "connect_timeout_s": (0.1, 3600), "retries": (0, 10), "backoff_s": (0, 600),
    "parallel": (1, 16), "max_context": (512, 1_048_576), "num_predict": (1, 1_048_576), "temperature": (0, 2),
    "chunk_tokens": (50, 1_000_000), "overlap_tokens": (0, 500_000),
    "gleaning": (0, 10), "summary_tokens": (1, BIG), "summary_max_tokens": (1, BIG),
    "top_k": (1, 10_000), "chunk_top_k": (1, 10_000), "entity_budget": (0, BIG), "relation_budget": (0, BIG),
    "chunk_budget": (0, BIG), "answer_tokens": (1, BIG), "history_turns": (0, 1000), "history_budget": (0, BIG),
    "min_similarity": (-1, 1), "embed_batch": (1, 4096), "community_min_size": (1, BIG),
    "community_max_reports": (0, BIG), "community_top_k": (1, 10_000), "report_budget": (1, BIG),
    "poll_s": (1, 86_400),
}
CHOICES: dict[str, tuple[str, ...]] = {
    "mode": ("local", "global", "hybrid", "naive", "mix", "community"),
    "gone_files": ("ask", "remove", "keep"),
}
OPTIONAL_TEXT = ("proxy",)  # texts that may be empty
FILE = "settings.json"


def checked_section(cls: type, raw: dict) -> tuple[dict, list[str]]:
    """The values of `raw` that fit the dataclass `cls`, and a sentence for each one that did not.

    Unknown keys are ignored (a newer DocAtlas may have written them); a wrong value is left
    out, so the dataclass's default is used.
    """
    values: dict = {}
    problems: list[str] = []
    for item in fields(cls):
        if item.name not in raw:
            continue
        default = _default(item)
        value, problem = check_value(item.name, raw[item.name], default)
        if problem is None:
            values[item.name] = value
        else:
            problems.append(f'{FILE}: "{item.name}" {problem}; using {_shown(default)}.')
    return values, problems


def check_value(name: str, value: object, default: object) -> tuple[object, str | None]:
    """`value` converted to the type of `default`, or what it must be (None when it fits)."""
    if isinstance(default, bool):
        return (value, None) if isinstance(value, bool) else (None, "must be true or false")
    if isinstance(default, int):
        return _number(name, value, whole=True)
    if isinstance(default, float):
        return _number(name, value, whole=False)
    if isinstance(default, str):
        return _text(name, value)
    if isinstance(default, tuple):
        if isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
            return tuple(v.strip() for v in value), None
        return None, 'must be a list of names, e.g. ["person", "organization"]'
    return value, None


def _number(name: str, value: object, whole: bool) -> tuple[object, str | None]:
    low, high = RANGES.get(name, (-math.inf, math.inf))
    kind = "a whole number" if whole else "a number"
    span = f" from {_shown(low)} to {_shown(high)}" if high < BIG else (
        f" of at least {_shown(low)}" if low > -math.inf else "")
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if ok and whole:
        ok = float(value).is_integer()
    if not ok or not low <= value <= high:  # type: ignore[operator]
        return None, f"must be {kind}{span}"
    return (int(value) if whole else float(value)), None  # type: ignore[arg-type]


def _text(name: str, value: object) -> tuple[object, str | None]:
    choices = CHOICES.get(name)
    if choices is not None:
        if value in choices:
            return value, None
        return None, "must be one of " + ", ".join(f'"{c}"' for c in choices)
    if name == "host" and isinstance(value, str) and value.strip():
        try:
            host_entries(value)
        except HostSettingError as exc:  # e.g. "gpu1:11434*x": the sentence names the entry
            return None, "is not usable (" + str(exc).rstrip(".") + ")"
    if isinstance(value, str) and (value.strip() or name in OPTIONAL_TEXT):
        return value.strip(), None
    return None, "must be a non-empty text"


def _default(item: Field) -> object:
    if item.default is not MISSING:
        return item.default
    return item.default_factory()  # type: ignore[misc]


def _shown(value: object) -> str:
    """A value as the user would write it in settings.json."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, tuple):
        return json.dumps(list(value))
    return json.dumps(value)
