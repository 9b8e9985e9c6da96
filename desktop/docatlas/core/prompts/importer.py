"""Prompt files from elsewhere, read without running them: DocAtlas prompt sets (JSON), and
LightRAG or GraphRAG prompt modules (Python).

A Python file is parsed with `ast`; it is never imported or executed. Read at module
level: string assignments (`NAME = "..."` in any quotes, also `"a" "b"`, `"a" + "b"`,
`"...".strip()` and `"\\n".join([...])`), subscript assignments (`PROMPTS["key"] = ...`), dict literals
(`PROMPTS = {"key": ...}`, `PROMPTS.update({...})`) and lists of strings (examples). Up to
two leading lines that are not Python (a path or a title, as copied files often have)
are skipped. Functions, classes and f-strings are not read: their text only exists when
the code runs.

Each string is matched by name to a DocAtlas prompt, its placeholders are translated
(`{context_data}` -> `{context}`, `{query}` -> `{question}`, ...), and it is checked
exactly like a prompt typed in the editor. The report says what was mapped, what was
adjusted on the way, and what was left out and why.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from docatlas.core.prompts.catalog import SYNONYMS, available_profiles, check, load_profile, spec
from docatlas.core.prompts.store import read_set, save_many

if TYPE_CHECKING:
    from docatlas.core.storage.database import Store

MAX_HEADER_LINES = 2
Value = str | tuple[str, ...]

# Their name (lower case) -> DocAtlas prompt; "@" stands for the extraction profile.
TARGETS = {
    # LightRAG (lightrag/prompt.py and its variants)
    "entity_extraction": "@extract",
    "entity_extraction_system_prompt": "@extract",
    "entity_extraction_user_prompt": "@extract+",  # appended to the system prompt: DocAtlas sends one message
    "entity_extraction_examples": "@examples",
    "entity_continue_extraction": "@glean",
    "entity_continue_extraction_user_prompt": "@glean",
    "entity_if_loop_extraction": "@loop_check",
    "summarize_entity_descriptions": "merge/summarize",
    "keywords_extraction": "query/keywords",
    "rag_response": "query/answer",
    "naive_rag_response": "query/answer_naive",
    "mix_rag_response": "query/answer_mix",
    "community_report": "query/community_report",
    # GraphRAG (Microsoft GraphRAG, and the projects that copy its prompts)
    "graph_extraction_prompt": "@extract",
    "continue_prompt": "@glean",
    "loop_prompt": "@loop_check",
    "summarize_prompt": "merge/summarize",
    "community_report_prompt": "query/community_report",
    "local_search_system_prompt": "query/answer_local",
    "basic_search_system_prompt": "query/answer_naive",
    "reduce_system_prompt": "query/answer_community",
}
PARTS = {"keywords_extraction_examples": "query/keywords"}  # read into another prompt
SETTINGS_NAMES = {"default_language", "default_entity_types", "default_tuple_delimiter",
                  "default_record_delimiter", "default_completion_delimiter"}
REASONS = {
    "graph_field_sep": "it separates stored values; it is not a prompt",
    "fail_response": "DocAtlas's answer when nothing is found is fixed text, not a prompt",
    "similarity_check": "DocAtlas's answer cache matches questions exactly, without asking the model",
    "map_system_prompt": "DocAtlas's community map prompt asks for another JSON reply (point, score, reports)",
    "extract_claims_prompt": "DocAtlas does not extract claims",
    "kg_query_context": "DocAtlas assembles the material of an answer itself",
    "naive_query_context": "DocAtlas assembles the material of an answer itself",
}
# Placeholders without a DocAtlas counterpart, filled with fixed text.
LITERALS = {"vector_context": "(the document excerpts are part of the material above)",
            "max_report_length": "500", "max_length": "500", "description_type": "entity",
            "user_prompt": "", "language": "the language of the question"}
APPENDED = {"input_text": "Passage:\n{input_text}", "context": "Material:\n{context}",
            "question": "Question: {question}", "descriptions": "Notes:\n{descriptions}",
            "reports": "Reports:\n{reports}", "entities": "Entities:\n{entities}",
            "relations": "Relations:\n{relations}", "first": "First: {first}", "second": "Second: {second}"}
_NAME = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class Found:
    """A string the file defines at module level."""

    source: str  # how the file names it: PROMPTS["rag_response"] or GRAPH_EXTRACTION_PROMPT
    container: str  # the dict it is in ("" for a module-level constant)
    name: str
    value: Value
    line: int


@dataclass
class ImportReport:
    """What a file holds for DocAtlas: the prompts ready to save, and what was not taken."""

    path: str
    kind: str  # "DocAtlas prompt set", "LightRAG", "GraphRAG" or "Python"
    profile: str | None = None  # the extraction profile its extraction prompts went to
    prompts: dict[str, str] = field(default_factory=dict)  # key -> text; every one passes check()
    mapped: list[tuple[str, str]] = field(default_factory=list)  # (their name, key)
    notes: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (their name, why)
    sources: list[str] = field(default_factory=list)  # the dicts that held prompts

    def text(self) -> str:
        """The report as plain lines for a person."""
        name = Path(self.path).name
        head = f"{self.kind} prompt file {name}" if self.kind != "DocAtlas prompt set" else f"Prompt set {name}"
        lines = [head + (f" (extraction prompts for the {self.profile} profile)" if self.profile else "") + ":"]
        lines.append(f"Can import {len(self.prompts)}:" if self.prompts else "Nothing to import.")
        lines += [f"  {source} -> {key}" for source, key in self.mapped]
        if self.notes:
            lines.append("Adjusted or worth knowing:")
            lines += [f"  - {note}" for note in self.notes]
        if self.skipped:
            lines.append(f"Not imported ({len(self.skipped)}):")
            lines += [f"  - {source}: {why}" for source, why in self.skipped]
        return "\n".join(lines)


# -- reading files -------------------------------------------------------------------------

def read_prompt_file(path: Path, *, profile: str | None = None, source: str | None = None) -> ImportReport:
    """Read a prompt set or a Python prompt module; ValueError (one sentence) if it is neither.

    `profile` forces the extraction profile its extraction prompts go to (found from their
    format otherwise); `source` picks one dict (e.g. PROMPTS_BALANCED) when a file has several.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
        raise ValueError(f"{path.name} could not be read ({reason}); choose another file.") from exc
    if profile is not None and profile not in available_profiles():
        raise ValueError(f"There is no extraction profile called {profile!r}; choose one of: "
                         f"{', '.join(available_profiles())}.")
    if path.suffix.lower() == ".json" or text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path.name} is not valid JSON (line {exc.lineno}: {exc.msg}).") from exc
        return _from_set(str(path), data)
    found, notes = read_python(text, path.name)
    report = map_found(found, str(path), profile=profile, source=source)
    report.notes[:0] = notes
    return report


def import_file(store: Store, path: Path, *, profile: str | None = None,
                source: str | None = None) -> tuple[ImportReport, list[str]]:
    """Read a prompt file and save what it holds (a new version of each changed prompt)."""
    report = read_prompt_file(path, profile=profile, source=source)
    saved, refused = save_many(store, report.prompts, f"Imported from {Path(path).name}")
    report.skipped += refused
    return report, saved


def _from_set(path: str, data: object) -> ImportReport:
    report = ImportReport(path, "DocAtlas prompt set")
    for key, text in read_set(data).items():
        try:
            spec(key)
        except ValueError as exc:
            report.skipped.append((key, str(exc)))
            continue
        problems = check(key, text)
        if problems:
            report.skipped.append((key, problems[0].message))
        else:
            report.prompts[key] = text
            report.mapped.append((key, key))
    return report


# -- reading Python without running it -----------------------------------------------------

def read_python(text: str, filename: str = "the file") -> tuple[list[Found], list[str]]:
    """The module-level strings of a Python file, and notes on what could not be read."""
    tree, header = _parse(text, filename)
    notes = [f"Line {n} ({line!r}) is not Python and was skipped." for n, line in header]
    env: dict[str, Value] = {}
    dicts: dict[str, dict[str, Value]] = {}
    found: dict[str, Found] = {}
    unread: list[str] = []

    def keep(container: str, name: str, value: Value | None, node: ast.AST, line: int) -> None:
        source = f'{container}["{name}"]' if container else name
        if value is None:
            if isinstance(node, ast.JoinedStr):
                unread.append(f"{source} (an f-string)")
            return
        if container:
            dicts.setdefault(container, {})[name] = value
        else:
            env[name] = value
        found.pop(source, None)  # a later assignment wins, in file order
        found[source] = Found(source, container, name, value, line)

    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and isinstance(node.value, ast.Dict):
                    dicts.setdefault(target.id, {})
                    for key, item in _dict_items(node.value):
                        keep(target.id, key, _value(item, env, dicts), item, item.lineno)
                elif isinstance(target, ast.Name):
                    keep("", target.id, _value(node.value, env, dicts), node.value, node.lineno)
                elif (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
                      and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str)):
                    keep(target.value.id, target.slice.value, _value(node.value, env, dicts), node.value, node.lineno)
        elif isinstance(node, ast.Expr) and _is_update(node.value):
            call = node.value
            assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            owner = call.func.value
            assert isinstance(owner, ast.Name) and isinstance(call.args[0], ast.Dict)
            for key, item in _dict_items(call.args[0]):
                keep(owner.id, key, _value(item, env, dicts), item, item.lineno)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            unread.append(f"{node.name} (code)")
    if unread:
        notes.append("Not read, because their text only exists when the code runs: " + ", ".join(unread) + ".")
    return list(found.values()), notes


def _parse(text: str, filename: str) -> tuple[ast.Module, list[tuple[int, str]]]:
    """Parse, skipping up to MAX_HEADER_LINES leading lines that are not Python (kept as blank lines)."""
    lines = text.split("\n")
    header: list[tuple[int, str]] = []
    while True:
        try:
            return ast.parse("\n".join(lines), filename=filename), header
        except SyntaxError as exc:
            first = next((i for i, line in enumerate(lines) if line.strip()), None)
            if first is None or exc.lineno != first + 1 or len(header) >= MAX_HEADER_LINES:
                raise ValueError(_not_python(text, filename, exc)) from None
            header.append((first + 1, lines[first].strip()))
            lines[first] = ""


def _not_python(text: str, filename: str, exc: SyntaxError) -> str:
    looks = ""
    if re.search(r"^\s*(pub\s+)?(const|static)\s+\w+\s*:\s*&", text, re.M) or re.search(r"^\s*use \w+::", text, re.M):
        looks = "; it looks like Rust source"
    elif re.search(r"^\s*export\s+(const|function|default|class)\b", text, re.M):
        looks = "; it looks like TypeScript or JavaScript source"
    return (f"{filename} is not a Python prompt module (line {exc.lineno}: {exc.msg}){looks}; DocAtlas imports "
            "LightRAG or GraphRAG Python prompt files and its own JSON prompt sets.")


def _dict_items(node: ast.Dict) -> list[tuple[str, ast.expr]]:
    return [(k.value, v) for k, v in zip(node.keys, node.values)
            if isinstance(k, ast.Constant) and isinstance(k.value, str)]


def _is_update(node: ast.expr) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update"
            and isinstance(node.func.value, ast.Name) and len(node.args) == 1 and isinstance(node.args[0], ast.Dict))


def _value(node: ast.expr, env: dict[str, Value], dicts: dict[str, dict[str, Value]]) -> Value | None:
    """The string (or list of strings) an expression stands for, when it needs no code to run."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _value(node.left, env, dicts), _value(node.right, env, dicts)
        return left + right if isinstance(left, str) and isinstance(right, str) else None
    if isinstance(node, ast.List | ast.Tuple):
        items = [_value(item, env, dicts) for item in node.elts]
        return tuple(items) if all(isinstance(i, str) for i in items) else None  # type: ignore[arg-type]
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Constant):
        return dicts.get(node.value.id, {}).get(str(node.slice.value))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.keywords:
        owner = _value(node.func.value, env, dicts)
        args = [_value(a, env, dicts) for a in node.args]
        method = node.func.attr
        if isinstance(owner, str) and method in ("strip", "lstrip", "rstrip") and len(args) <= 1 \
                and all(isinstance(a, str) for a in args):
            return getattr(owner, method)(*args)
        if isinstance(owner, str) and method == "join" and len(args) == 1 and isinstance(args[0], tuple):
            return owner.join(args[0])
    return None


# -- mapping to DocAtlas prompts ----------------------------------------------------------

def map_found(found: list[Found], path: str, *, profile: str | None = None,
              source: str | None = None) -> ImportReport:
    """Turn the strings of a file into DocAtlas prompts, with the report of what was done."""
    names = {f.name.lower() for f in found}
    kind = ("LightRAG" if names & {"entity_extraction", "entity_extraction_system_prompt", "rag_response"}
            else "GraphRAG" if names & {"graph_extraction_prompt", "community_report_prompt", "continue_prompt"}
            else "Python")
    report = ImportReport(path, kind)
    groups: dict[str, list[Found]] = {}
    for item in found:
        groups.setdefault(item.container, []).append(item)
    report.sources = [c for c, items in groups.items() if c and any(i.name.lower() in TARGETS for i in items)]
    if source is not None:
        chosen = {c: items for c, items in groups.items() if c == source}
        chosen = chosen or {"": [i for i in groups.get("", []) if i.name == source]}
        if not any(chosen.values()):
            held = ", ".join(report.sources or [i.name for i in groups.get("", [])]) or "no prompts"
            raise ValueError(f"{Path(path).name} has no {source}; it holds: {held}.")
        groups = chosen
    for container, items in groups.items():
        _map_group(report, container, items, profile)
    return report


def _map_group(report: ImportReport, container: str, items: list[Found], forced: str | None) -> None:
    """Map one dict (or the module's constants); its notes are kept only if it gave a prompt."""
    notes_before, taken_before = list(report.notes), len(report.prompts)
    _map_items(report, container, items, forced)
    if len(report.prompts) == taken_before:
        added = report.notes[len(notes_before):]
        report.notes[:] = notes_before + [n for n in added if " is a setting in DocAtlas" in n]


def _map_items(report: ImportReport, container: str, items: list[Found], forced: str | None) -> None:
    by_name = {i.name.lower(): i for i in items}
    wanted: dict[str, tuple[str, list[str]]] = {}  # target -> (text, sources)
    for item in items:
        name = item.name.lower()
        target = TARGETS.get(name)
        if target is None:
            _explain(report, item, name)
            continue
        text = "\n".join(item.value) if isinstance(item.value, tuple) else item.value
        if target == "@extract+":
            if "@extract" not in wanted:
                report.skipped.append((item.source, "the second half of an extraction prompt is only imported "
                                                    "with its first half (entity_extraction_system_prompt)"))
                continue
            first, sources = wanted["@extract"]
            wanted["@extract"] = (first.rstrip() + "\n\n" + text.strip() + "\n", [*sources, item.source])
            report.notes.append(f"{sources[0]} and {item.source} were joined into one extraction prompt "
                                "(DocAtlas sends it as one message).")
            continue
        wanted[target] = (text, [item.source])
    profile = forced or _detect_profile(wanted)
    if any(t.startswith("@") for t in wanted):
        report.profile = report.profile or profile
        how = "as asked" if forced else "from the format their records take"
        report.notes.append(f"Extraction prompts{_of(container)} go to the {profile} profile ({how}).")
        _compare_delimiters(report, container, by_name, profile)
    examples = by_name.get("keywords_extraction_examples")
    for target, (text, sources) in wanted.items():
        key = profile + "/" + target[1:] if target.startswith("@") else target
        label = " + ".join(sources)
        if key in report.prompts:
            first = next(s for s, k in report.mapped if k == key)
            report.skipped.append((label, f"{first} already gave {key}; import with the source "
                                          f"{container or sources[0]} to use this one instead"))
            continue
        extra = "\n".join(examples.value) if examples and isinstance(examples.value, tuple) else \
            (examples.value if examples else "")
        result, adjustments, reason = translate(key, text, {"examples": str(extra)} if key == "query/keywords" else {})
        if result is None:
            report.skipped.append((label, reason))
            continue
        report.prompts[key] = result
        report.mapped.append((label, key))
        if adjustments:
            report.notes.append(f"{label} -> {key}: " + "; ".join(adjustments) + ".")


def _of(container: str) -> str:
    return f" of {container}" if container else ""


def _explain(report: ImportReport, item: Found, name: str) -> None:
    if name in SETTINGS_NAMES:
        shown = ", ".join(item.value) if isinstance(item.value, tuple) else item.value
        if name in ("default_language", "default_entity_types"):
            report.notes.append(f"{item.source} ({shown}) is a setting in DocAtlas (Settings, or "
                                "`ingest --language/--entity-types`), not a prompt; it was not changed.")
        return
    if name in PARTS:
        return
    report.skipped.append((item.source, REASONS.get(name, "it is not a prompt DocAtlas sends")))


def _detect_profile(wanted: dict[str, tuple[str, list[str]]]) -> str:
    sample = "\n".join(wanted.get(t, ("", []))[0] for t in ("@extract", "@examples"))
    if re.search(r'"entities"\s*:', sample) and "json" in sample.lower() and "{tuple_delimiter}" not in sample:
        return "json"
    if re.search(r"^\s*(entity|relation)\{tuple_delimiter\}", sample, re.M):
        return "compact"
    if "content_keywords" in sample or "relationship_keywords" in sample:
        return "lightrag"
    if '"relationship"' in sample:
        return "graphrag"
    return "lightrag"


def _compare_delimiters(report: ImportReport, container: str, by_name: dict[str, Found], profile: str) -> None:
    ours = load_profile(profile)
    for name, mine in (("default_tuple_delimiter", ours.tuple_delimiter),
                       ("default_record_delimiter", ours.record_delimiter),
                       ("default_completion_delimiter", ours.completion_delimiter)):
        theirs = by_name.get(name)
        if theirs is not None and isinstance(theirs.value, str) and theirs.value != mine:
            report.notes.append(f"{theirs.source} is {theirs.value!r} but the {profile} profile fills "
                                f"{{{name[8:]}}} with {mine!r} (DocAtlas reads either in replies).")


def translate(key: str, text: str, parts: dict[str, str] | None = None) -> tuple[str | None, list[str], str]:
    """Their template as DocAtlas prompt `key`: (text or None, adjustments made, why it cannot be used)."""
    item = spec(key)
    parts = parts or {}
    notes: list[str] = []
    if "{{" in text or "}}" in text:
        text = text.replace("{{", "{").replace("}}", "}")
        notes.append("{{ and }} became { and } (DocAtlas templates need no escaping)")
    unknown: list[str] = []
    changes: dict[str, str] = {}

    def swap(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in item.allowed:
            return match.group(0)
        replacement = _replacement(key, name, item.allowed, parts)
        if replacement is None:
            unknown.append(name)
            return match.group(0)
        changes[name] = replacement
        return replacement

    text = _NAME.sub(swap, text)
    for name, replacement in changes.items():
        notes.append(f"{{{name}}} became {_shown(replacement)}")
    if unknown:
        names = ", ".join(f"{{{n}}}" for n in dict.fromkeys(unknown))
        return None, notes, f"{names} has no counterpart in DocAtlas's {key} prompt"
    used = set(_NAME.findall(text))
    for name in sorted(item.required - used):
        text = text.rstrip() + "\n\n" + APPENDED[name] + "\n"
        notes.append(f"added {{{name}}} at the end, where DocAtlas puts it")
    problems = check(key, text)
    if problems:
        return None, notes, problems[0].message
    return text, notes, ""


def _replacement(key: str, name: str, allowed: frozenset[str], parts: dict[str, str]) -> str | None:
    if key == "query/community_report" and name == "input_text":
        return "Entities:\n{entities}\n\nRelations:\n{relations}"
    if name in parts:
        return parts[name]
    renamed = SYNONYMS.get(name)
    if renamed in allowed:
        return "{" + str(renamed) + "}"
    return LITERALS.get(name)


def _shown(replacement: str) -> str:
    if not replacement:
        return "nothing"
    if re.fullmatch(r"\{[a-z_]+\}", replacement):
        return replacement
    return "its text" if len(replacement) > 60 else repr(replacement)

