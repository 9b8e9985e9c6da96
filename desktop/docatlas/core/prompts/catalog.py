"""Prompt profiles: templates loaded from `resources/prompts/<profile>/`, rendered and checked.

A profile is a folder with `profile.json` (delimiters, description), one text file per
prompt (`extract.txt`, `glean.txt`, `loop_check.txt`, `examples.txt`) and, for structured
output, `schema.json` (sent to Ollama as `format`). The profiles are `lightrag`, `compact`,
`graphrag`, `json` and `typing` (`"reply": "candidates"` in its profile.json: its prompt lists
the chunk's concept-layer names as `{candidate_names}` and `{candidate_pairs}`, and the reply
is read by `ingest.typing_reply` against a schema built for the chunk). Prompts used when
merging, whatever the profile (`summarize.txt`, `same_entity.txt`), live in
`resources/prompts/merge/`, and those used to answer questions in `resources/prompts/query/`.
Templates use `{placeholder}` names; anything else in braces (JSON examples) is left as written.

Every prompt DocAtlas sends has a `PromptSpec` in `catalog()`, keyed like its file
(`lightrag/extract`, `merge/summarize`, `query/answer`, and one `query/answer_<mode>` per
query mode, which falls back to `query/answer`). `check()` says what stops a text from
being used as that prompt, with line and column. The user's overrides live in the
workspace database (`docatlas.core.prompts.store`).
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from docatlas.core.base.resources import resource_dir
from docatlas.core.base.tokens import count_tokens, get_encoding

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")

# Placeholders each prompt must hold, and all that any prompt may use.
REQUIRED = {
    "extract": {"input_text"},
    "glean": set(),
    "loop_check": set(),
    "examples": set(),
    "summarize": {"descriptions"},
    "same_entity": {"first", "second"},
    "keywords": {"question"},
    "answer": {"context"},
    "community_report": {"entities", "relations"},
    "community_map": {"question", "reports"},
}
KNOWN = {
    "input_text", "entity_types", "tuple_delimiter", "record_delimiter",
    "completion_delimiter", "language", "examples", "candidate_names", "candidate_pairs",
    "entity_name", "descriptions", "max_words", "first", "second",
    "question", "history", "context", "response_type", "entities", "relations", "reports",
}
PROMPT_NAMES = ("extract", "glean", "loop_check", "examples")
MERGE_PROMPT_NAMES = ("summarize", "same_entity")
MERGE_FOLDER = "merge"


def prompts_root() -> Path:
    """The folder holding the bundled profiles."""
    return resource_dir("prompts")


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
    candidates: bool = False  # the prompt lists the chunk's candidate names; the reply types them
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
        candidates=meta.get("reply") == "candidates",
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


# -- the catalog: every prompt DocAtlas sends ---------------------------------------------

ANSWER_MODES = ("local", "global", "hybrid", "naive", "mix", "community")  # as retrieval.answer.MODES
_EXTRACTION_VALUES = frozenset({"entity_types", "tuple_delimiter", "record_delimiter", "completion_delimiter",
                                "language"})
# name -> (title, what it is for, placeholders it may use); required ones are REQUIRED[name].
_PROFILE_PROMPTS = {
    "extract": ("Extraction", "The first request for each chunk: the records to write for the passage.",
                _EXTRACTION_VALUES | {"examples", "input_text", "candidate_names", "candidate_pairs"}),
    "glean": ("Gleaning", "Asked after the first reply for the records it missed (gleaning rounds; one by default).",
              _EXTRACTION_VALUES | {"examples"}),
    "loop_check": ("Loop check", "A YES/NO question before each gleaning round (when loop check is on).",
                   _EXTRACTION_VALUES | {"examples"}),
    "examples": ("Examples", "Worked examples, put where the extraction prompt says {examples}.",
                 _EXTRACTION_VALUES),
}
_OTHER_PROMPTS = {
    "merge/summarize": ("Description summary", "Combines the descriptions of one entity or relation when "
                        "they grow long.", {"entity_name", "descriptions", "language", "max_words"}),
    "merge/same_entity": ("Same entity?", "Asks whether two entries name the same thing (merge suggestions).",
                          {"first", "second"}),
    "query/keywords": ("Question keywords", "Turns a question into search phrases.", {"question", "history"}),
    "query/answer": ("Answer (all modes)", "Answers a question from the material found; every mode uses it "
                     "unless that mode has its own.", {"context", "response_type", "history"}),
    "query/community_report": ("Community report", "Writes the report of one group of connected entities.",
                               {"entities", "relations", "language"}),
    "query/community_map": ("Community map", "Picks the points of a batch of reports that help answer a "
                            "question (community mode).", {"question", "reports"}),
}


@dataclass(frozen=True)
class PromptSpec:
    """One prompt DocAtlas sends: where its default lives and which placeholders it takes."""

    key: str  # "lightrag/extract", "merge/summarize", "query/answer_naive"
    group: str  # a profile name, "merge" or "query"
    name: str  # "extract", "summarize", "answer_naive"
    title: str
    purpose: str
    required: frozenset[str]
    allowed: frozenset[str]
    extraction: bool = False  # part of an extraction profile: changing it dates the graph
    falls_back_to: str | None = None  # used (with its default) while this one is not overridden

    def default_text(self) -> str:
        """The bundled text (for an answer mode: the bundled all-modes answer)."""
        return _bundled(self.group, self.name if self.falls_back_to is None else "answer")


@cache
def _bundled(folder: str, name: str) -> str:
    return (prompts_root() / folder / f"{name}.txt").read_text(encoding="utf-8")


@cache
def catalog() -> tuple[PromptSpec, ...]:
    """Every prompt DocAtlas sends, in the order the editor lists them."""
    specs = []
    for profile in available_profiles():
        for name, (title, purpose, allowed) in _PROFILE_PROMPTS.items():
            specs.append(PromptSpec(f"{profile}/{name}", profile, name, title, purpose,
                                    frozenset(REQUIRED[name]), frozenset(allowed), extraction=True))
    for key, (title, purpose, allowed) in _OTHER_PROMPTS.items():
        group, name = key.split("/")
        specs.append(PromptSpec(key, group, name, title, purpose, frozenset(REQUIRED[name]), frozenset(allowed)))
        if key == "query/answer":
            specs += [PromptSpec(f"query/answer_{mode}", group, f"answer_{mode}", f"Answer ({mode} mode)",
                                 f"Answers questions asked in {mode} mode; until you change it, the "
                                 "all-modes answer prompt is used.", frozenset(REQUIRED[name]),
                                 frozenset(allowed), falls_back_to=key) for mode in ANSWER_MODES]
    return tuple(specs)


def prompt_keys() -> list[str]:
    """The keys of every prompt, in catalog order."""
    return [s.key for s in catalog()]


def spec(key: str) -> PromptSpec:
    """The spec of one prompt; ValueError (a user sentence) for an unknown key."""
    for item in catalog():
        if item.key == key:
            return item
    close = difflib.get_close_matches(key, prompt_keys(), n=1)
    hint = f" Did you mean {close[0]}?" if close else " `docatlas prompts list` shows them all."
    raise ValueError(f"There is no prompt called {key!r}.{hint}")


def answer_key(mode: str) -> str:
    """The key of the answer prompt of a query mode."""
    return f"query/answer_{mode}" if mode in ANSWER_MODES else "query/answer"


def effective_text(key: str, overrides: dict[str, str] | None = None) -> str:
    """The text used for a prompt: the override, else its fallback's, else the bundled default."""
    overrides = overrides or {}
    if key in overrides:
        return overrides[key]
    item = spec(key)
    return effective_text(item.falls_back_to, overrides) if item.falls_back_to else item.default_text()


# -- checking a text before it is used ------------------------------------------------------

PLACEHOLDER_LIKE = re.compile(  # what a placeholder looks like, known or not
    r"\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\s+[A-Za-z0-9_]+)*)\s*\}")
# Placeholders other tools use, and what DocAtlas calls them.
SYNONYMS = {
    "context_data": "context", "content_data": "context", "kg_context": "context", "report_data": "context",
    "query": "question", "description_list": "descriptions", "description_name": "entity_name",
    "summary_length": "max_words", "max_length": "max_words", "text": "input_text", "input": "input_text",
}


_FILLS = {
    "input_text": "DocAtlas puts the passage to read there", "descriptions": "the descriptions to combine go there",
    "first": "the first entry goes there", "second": "the second entry goes there",
    "question": "the question goes there", "context": "the material found for the question goes there",
    "entities": "the group's entities go there", "relations": "the group's relations go there",
    "reports": "the reports to read go there",
}


@dataclass(frozen=True)
class Problem:
    """Why a text cannot be saved as a prompt: one sentence, and where (1-based; None: anywhere)."""

    message: str
    line: int | None = None
    column: int | None = None
    length: int = 1  # characters to mark from (line, column)


def check(key: str, text: str) -> list[Problem]:
    """Everything that stops `text` from being used as the prompt `key`; empty when it is fine."""
    item = spec(key)
    problems: list[Problem] = []
    if not text.strip():
        return [Problem("This prompt is empty; write one, or reset it to the default.")]
    problems += brace_problems(text)
    used: set[str] = set()
    for line_no, line in enumerate(text.split("\n"), 1):
        for match in PLACEHOLDER_LIKE.finditer(line):
            name = match.group(1)
            if name in item.allowed:
                used.add(name)
                continue
            column = match.start() + 1
            problems.append(Problem(f"Line {line_no}, column {column}: {match.group(0)} is not a placeholder "
                                    f"of this prompt{_hint(name, item)}.", line_no, column, len(match.group(0))))
    problems.sort(key=lambda p: (p.line or 0, p.column or 0))
    for name in sorted(item.required - used):
        problems.append(Problem(f"This prompt must contain {{{name}}}: {_FILLS.get(name, 'DocAtlas fills it in')}."))
    return problems


def brace_problems(text: str) -> list[Problem]:
    """Braces that open and never close, or close and never opened, with their place."""
    problems: list[Problem] = []
    opened: list[tuple[int, int]] = []
    for line_no, line in enumerate(text.split("\n"), 1):
        for column, char in enumerate(line, 1):
            if char == "{":
                opened.append((line_no, column))
            elif char == "}":
                if opened:
                    opened.pop()
                else:
                    problems.append(Problem(f"Line {line_no}, column {column}: this }} closes no {{.",
                                            line_no, column))
    problems += [Problem(f"Line {line_no}, column {column}: this {{ is never closed.", line_no, column)
                 for line_no, column in opened]
    return sorted(problems, key=lambda p: (p.line or 0, p.column or 0))


def _hint(name: str, item: PromptSpec) -> str:
    allowed = ", ".join(f"{{{n}}}" for n in sorted(item.allowed))
    better = SYNONYMS.get(name) or SYNONYMS.get(name.lower()) or name.lower().replace(" ", "_")
    if better != name and better in item.allowed:
        return f"; write {{{better}}} instead"
    close = difflib.get_close_matches(name, sorted(item.allowed), n=1)
    if close:
        return f" (did you mean {{{close[0]}}}?)"
    return f"; it can use {allowed}"


def describe_problems(problems: list[Problem]) -> str:
    """The problems as one paragraph (the first one first)."""
    return " ".join(p.message for p in problems)


def token_count(text: str) -> int:
    """Tokens of a text being edited (uncached: every keystroke is a new text)."""
    return len(get_encoding().encode(text, disallowed_special=()))
