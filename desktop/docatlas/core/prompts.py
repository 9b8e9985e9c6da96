"""Prompt profiles: templates loaded from `resources/prompts/<profile>/`, rendered and checked.

A profile is a folder with `profile.json` (delimiters, description), one text file per
prompt (`extract.txt`, `glean.txt`, `loop_check.txt`, `examples.txt`) and, for structured
output, `schema.json` (sent to Ollama as `format`). The profiles are `lightrag`, `compact`,
`graphrag` and `json`. Prompts used when merging, whatever the profile (`summarize.txt`,
`same_entity.txt`), live in `resources/prompts/merge/`. Templates use `{placeholder}`
names; anything else in braces (JSON examples) is left as written.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from docatlas.core.chunking import count_tokens

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")

# Placeholders each prompt must hold, and all that any prompt may use.
REQUIRED = {
    "extract": {"input_text"},
    "glean": set(),
    "loop_check": set(),
    "examples": set(),
    "summarize": {"descriptions"},
    "same_entity": {"first", "second"},
}
KNOWN = {
    "input_text", "entity_types", "tuple_delimiter", "record_delimiter",
    "completion_delimiter", "language", "examples",
    "entity_name", "descriptions", "max_words", "first", "second",
}
PROMPT_NAMES = ("extract", "glean", "loop_check", "examples")
MERGE_PROMPT_NAMES = ("summarize", "same_entity")
MERGE_FOLDER = "merge"


def prompts_root() -> Path:
    """The folder holding the bundled profiles."""
    return Path(str(resources.files("docatlas") / "resources" / "prompts"))


def available_profiles() -> list[str]:
    """Names of the bundled profiles."""
    return sorted(p.name for p in prompts_root().iterdir() if (p / "profile.json").is_file())


@dataclass(frozen=True)
class Profile:
    """One extraction profile: its prompts and the delimiters they speak."""

    name: str
    prompts: dict[str, str]
    tuple_delimiter: str = "<|>"
    record_delimiter: str = "##"
    completion_delimiter: str = "<|COMPLETE|>"
    json_schema: dict | None = None
    description: str = ""
    defaults: dict[str, str] = field(default_factory=dict)

    def values(self, *, entity_types: tuple[str, ...], language: str) -> dict[str, str]:
        """Placeholder values shared by every prompt of this profile (all but the text)."""
        base = {
            "entity_types": ", ".join(entity_types),
            "tuple_delimiter": self.tuple_delimiter,
            "record_delimiter": self.record_delimiter,
            "completion_delimiter": self.completion_delimiter,
            "language": language,
        }
        base["examples"] = render(self.prompts.get("examples", ""), base)
        return base


def load_profile(name: str, overrides: dict[str, str] | None = None) -> Profile:
    """Load a bundled profile; `overrides` (prompt name -> text) replace its defaults."""
    folder = prompts_root() / name
    if not (folder / "profile.json").is_file():
        known = ", ".join(available_profiles())
        raise ValueError(f"There is no extraction profile called {name!r}; choose one of: {known}.")
    meta = json.loads((folder / "profile.json").read_text(encoding="utf-8"))
    defaults = {
        p: (folder / f"{p}.txt").read_text(encoding="utf-8")
        for p in PROMPT_NAMES
        if (folder / f"{p}.txt").is_file()
    }
    prompts = {**defaults, **(overrides or {})}
    schema_file = folder / "schema.json"
    return Profile(
        name=name,
        prompts=prompts,
        tuple_delimiter=meta.get("tuple_delimiter", "<|>"),
        record_delimiter=meta.get("record_delimiter", "##"),
        completion_delimiter=meta.get("completion_delimiter", "<|COMPLETE|>"),
        json_schema=json.loads(schema_file.read_text(encoding="utf-8")) if schema_file.is_file() else None,
        description=meta.get("description", ""),
        defaults=defaults,
    )


def merge_prompt(name: str, overrides: dict[str, str] | None = None) -> str:
    """A merge prompt (`summarize` or `same_entity`): the user's override, else the bundled text."""
    if name not in MERGE_PROMPT_NAMES:
        raise ValueError(f"There is no merge prompt called {name!r}; choose one of: {', '.join(MERGE_PROMPT_NAMES)}.")
    if overrides and name in overrides:
        return overrides[name]
    return (prompts_root() / MERGE_FOLDER / f"{name}.txt").read_text(encoding="utf-8")


def render(template: str, values: dict[str, str]) -> str:
    """Fill `{name}` placeholders that `values` knows; leave every other brace alone."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def placeholders(template: str) -> list[str]:
    """Placeholder names used in a template, in order of first use."""
    return list(dict.fromkeys(_PLACEHOLDER.findall(template)))


def validate(prompt_name: str, template: str) -> list[str]:
    """Problems that stop a template from being used, each as one sentence; empty if none."""
    problems = []
    used = set(placeholders(template))
    for missing in sorted(REQUIRED.get(prompt_name, set()) - used):
        problems.append(f"The {prompt_name} prompt must contain {{{missing}}}.")
    for unknown in sorted(used - KNOWN):
        problems.append(f"{{{unknown}}} is not a placeholder DocAtlas knows.")
    return problems


def prompt_tokens(template: str, values: dict[str, str]) -> int:
    """Tokens of the rendered template."""
    return count_tokens(render(template, values))
