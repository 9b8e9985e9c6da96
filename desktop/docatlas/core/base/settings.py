"""Typed, frozen settings: Ollama connection, chunking, extraction, query.

Settings are read from `settings.json` in the config dir (written by the GUI) and checked
(`checks`), then overridden by the environment (`OLLAMA_HOST`, never saved back) and by
CLI flags via `dataclasses.replace`.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

from docatlas.core.base.settings_checks import checked_section
from docatlas.core.base.settings_hosts import host_problem, total_slots

log = logging.getLogger("docatlas.settings")

DEFAULT_HOST = "127.0.0.1:11434"
_FILE = "settings.json"
DEFAULT_ENTITY_TYPES = ("person", "organization", "location", "event", "concept", "technology")


@dataclass(frozen=True)
class OllamaSettings:
    """How to reach Ollama and which models to use."""

    host: str = DEFAULT_HOST
    model: str = "qwen2.5:7b"
    embed_model: str = "nomic-embed-text"
    timeout_s: float = 300.0  # per call; the client has none by default
    connect_timeout_s: float = 5.0
    retries: int = 3
    backoff_s: float = 1.0
    parallel: int = 2
    max_context: int = 32768  # never ask for more than this, whatever the model allows
    num_predict: int = 2048  # room reserved for the reply
    temperature: float = 0.0
    proxy: str = ""  # an HTTP proxy for Ollama; the environment's proxies are never used for it

    @property
    def total_parallel(self) -> int:
        """Calls in flight over every host of `host` (`gpu1:11434*3, b:11434`: 3 + `parallel`)."""
        return total_slots(self.host, self.parallel)


@dataclass(frozen=True)
class ChunkSettings:
    """Token windows."""

    chunk_tokens: int = 1200
    overlap_tokens: int = 100


@dataclass(frozen=True)
class ExtractionSettings:
    """What to ask the model for."""

    profile: str = "lean"  # the fewest reply tokens for the same graph (bench/tokens.py)
    entity_types: tuple[str, ...] = DEFAULT_ENTITY_TYPES
    language: str = "English"
    gleaning: int = 1
    loop_check: bool = False  # ask YES/NO before each gleaning round; NO ends the rounds
    # a gleaning round only while at least this many of the chunk's concept-layer names are not
    # yet extracted (0: always; bench/tokens.py measured it)
    glean_min_missing: int = 1
    summary_tokens: int = 500  # joined descriptions longer than this are summarised by the model
    summary_max_tokens: int = 300  # room for one summary reply


@dataclass(frozen=True)
class QuerySettings:
    """How questions are answered: mode, context budgets in tokens, history, communities."""

    mode: str = "mix"  # local, global, hybrid, naive, mix or community
    top_k: int = 40  # entities (local) and relations (global) looked up per question
    chunk_top_k: int = 10  # chunks found by similarity (naive, mix)
    entity_budget: int = 1500  # tokens of entity lines in the context
    relation_budget: int = 1500  # tokens of relation lines
    chunk_budget: int = 3000  # tokens of document excerpts
    answer_tokens: int = 1024  # room kept for the reply
    history_turns: int = 3
    history_budget: int = 1000  # tokens of earlier turns
    response_type: str = "a few short paragraphs"
    min_similarity: float = 0.2  # cosine below this is no match
    embed_batch: int = 32
    # Reports cost one model call per community (minutes each on a laptop), so ingestion
    # writes them only when asked; `community` questions fall back to `global` until then.
    community_reports: bool = False
    community_min_size: int = 3
    community_max_reports: int = 200  # the largest communities get reports first
    community_top_k: int = 8  # reports read per community (map/reduce) question
    report_budget: int = 3000  # prompt tokens for one report's entities and relations
    # model calls a question may spend reading the chunks it needs that the model has not read yet
    # (`jobs.budgeted`; 0: off); the chat offers off, 10, 50 and 200, `query --budget N` any number
    read_budget: int = 0


@dataclass(frozen=True)
class SyncSettings:
    """Linked folders: what to do with documents whose files are gone, and how the window follows them."""

    gone_files: str = "ask"  # ask, remove (take them out of the graph) or keep
    watch: bool = True  # the window follows linked folders while it is open
    poll_s: float = 10.0  # the window also looks every this many seconds (edits in place)


@dataclass(frozen=True)
class Settings:
    """All settings of one DocAtlas installation.

    `warnings` says which values of settings.json were wrong and what was used instead;
    `environment` lists the values that came from the environment (`EnvironmentValue`),
    which `save_settings` never writes; `unusable_host` keeps the host text of settings.json
    that could not be used (`UnusableHost`), which `save_settings` writes back unless the
    host was changed. None of them takes part in comparisons.
    """

    ollama: OllamaSettings = field(default_factory=OllamaSettings)
    chunking: ChunkSettings = field(default_factory=ChunkSettings)
    extraction: ExtractionSettings = field(default_factory=ExtractionSettings)
    query: QuerySettings = field(default_factory=QuerySettings)
    sync: SyncSettings = field(default_factory=SyncSettings)
    warnings: tuple[str, ...] = field(default=(), compare=False, repr=False)
    environment: tuple[EnvironmentValue, ...] = field(default=(), compare=False, repr=False)
    unusable_host: UnusableHost | None = field(default=None, compare=False, repr=False)

    def with_overrides(self, **flat: object) -> Settings:
        """Return a copy with `section__name=value` (or a unique bare `name`) replaced.

        None values are ignored, so CLI flags that were not given change nothing.
        """
        result = self
        for key, value in flat.items():
            if value is None:
                continue
            section_name, _, attr = key.rpartition("__")
            section_name = section_name or _section_of(attr)
            section = getattr(result, section_name)
            result = replace(result, **{section_name: replace(section, **{attr: value})})
        return result


@dataclass(frozen=True)
class EnvironmentValue:
    """A setting the environment gave (e.g. OLLAMA_HOST), and the value the file itself holds."""

    section: str
    name: str
    value: object
    file_value: object


@dataclass(frozen=True)
class UnusableHost:
    """The host setting of settings.json that has a bad entry: the user's text, the sentence
    naming the entry, and the host used in its place for now."""

    text: str
    reason: str
    used: str = DEFAULT_HOST

    def sentence(self) -> str:
        """One sentence: which entry is bad, and which host is used until it is fixed."""
        return f"{self.reason.rstrip('.')}; until it is fixed DocAtlas uses {self.used}."


def _section_of(attr: str) -> str:
    matches = [name for name, cls in _SECTION_TYPES.items() if attr in {f.name for f in fields(cls)}]
    if len(matches) != 1:
        raise KeyError(f"unknown or ambiguous setting {attr!r}")
    return matches[0]


_SECTION_TYPES: dict[str, type] = {
    "ollama": OllamaSettings,
    "chunking": ChunkSettings,
    "extraction": ExtractionSettings,
    "query": QuerySettings,
    "sync": SyncSettings,
}


def load_settings(path: Path | None, profile_default: str | None = None) -> Settings:
    """Read settings.json, check every value, then lay the environment (OLLAMA_HOST) over it.

    `profile_default` is the extraction profile when the file names none (the window passes
    "auto"; the CLI keeps the built-in default unless `--profile` says otherwise).

    A missing file gives the defaults. A wrong value gets the default and one sentence in
    `Settings.warnings` (also logged); a value from the environment is marked so that
    `save_settings` keeps the file's own value.
    """
    data, warnings = _read_file(path)
    sections = {}
    for name, cls in _SECTION_TYPES.items():
        raw = data.get(name, {})
        if not isinstance(raw, dict):
            warnings.append(f'{_FILE}: "{name}" must be an object of settings; using the defaults for all of it.')
            raw = {}
        if name == "extraction" and profile_default and "profile" not in raw:
            raw = {**raw, "profile": profile_default}
        values, problems = checked_section(cls, raw)
        warnings.extend(problems)
        sections[name] = cls(**values)
    settings = Settings(**sections)
    unusable = _unusable_host(data.get("ollama"), settings.ollama.host)
    environment = []
    host = os.environ.get("OLLAMA_HOST", "").strip()
    if host and host != settings.ollama.host:
        environment.append(EnvironmentValue("ollama", "host", host, settings.ollama.host))
        settings = settings.with_overrides(ollama__host=host)
    for warning in warnings:
        log.warning("%s", warning)
    return replace(settings, warnings=tuple(warnings), environment=tuple(environment), unusable_host=unusable)


def _unusable_host(raw: object, used: str) -> UnusableHost | None:
    """The file's host text when it has a bad entry (it was replaced by `used`), else None."""
    text = raw.get("host") if isinstance(raw, dict) else None
    if not isinstance(text, str) or not text.strip():
        return None
    reason = host_problem(text)
    return UnusableHost(text.strip(), reason, used) if reason else None


def save_settings(settings: Settings, path: Path) -> None:
    """Write settings.json atomically; a value that came from the environment is not written.

    For such a value the file keeps its own (unless the user changed the setting to
    something else, which is then theirs and saved). A host text that could not be used is
    written back as the user wrote it, unless the host was changed (`unusable_host`: a
    caller that showed it and let the user edit it drops it first).
    """
    data = {name: asdict(getattr(settings, name)) for name in _SECTION_TYPES}
    for env in settings.environment:
        if data[env.section][env.name] == env.value:
            data[env.section][env.name] = env.file_value
    kept = settings.unusable_host
    if kept is not None and data["ollama"]["host"] == kept.used:  # the user's text, not the stand-in
        data["ollama"]["host"] = kept.text
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
    os.replace(tmp, path)


def _read_file(path: Path | None) -> tuple[dict, list[str]]:
    if path is None or not path.exists():
        return {}, []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "it is not valid JSON"
        return {}, [f"{_FILE} could not be read ({reason}); using the default settings."]
    if not isinstance(data, dict):
        return {}, [f"{_FILE} does not hold an object of settings; using the default settings."]
    return data, []
