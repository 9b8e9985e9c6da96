"""Typed, frozen settings: Ollama connection, chunking, extraction, query.

Settings are read from `settings.json` in the config dir (written by the GUI), then
overridden by the environment (`OLLAMA_HOST`) and by CLI flags via `dataclasses.replace`.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

DEFAULT_HOST = "127.0.0.1:11434"
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


@dataclass(frozen=True)
class ChunkSettings:
    """Token windows."""

    chunk_tokens: int = 1200
    overlap_tokens: int = 100


@dataclass(frozen=True)
class ExtractionSettings:
    """What to ask the model for."""

    profile: str = "lightrag"
    entity_types: tuple[str, ...] = DEFAULT_ENTITY_TYPES
    language: str = "English"
    gleaning: int = 1
    loop_check: bool = False  # ask YES/NO before each gleaning round; NO ends the rounds
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


@dataclass(frozen=True)
class Settings:
    """All settings of one DocAtlas installation."""

    ollama: OllamaSettings = field(default_factory=OllamaSettings)
    chunking: ChunkSettings = field(default_factory=ChunkSettings)
    extraction: ExtractionSettings = field(default_factory=ExtractionSettings)
    query: QuerySettings = field(default_factory=QuerySettings)

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
}


def ollama_host_from_env(configured: str) -> str:
    """`OLLAMA_HOST` wins over the configured host, as the ollama client reads it."""
    return os.environ.get("OLLAMA_HOST") or configured or DEFAULT_HOST


def load_settings(path: Path | None) -> Settings:
    """Read settings.json (missing or unreadable keys fall back to defaults); apply OLLAMA_HOST."""
    data: dict = {}
    if path is not None and path.exists():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
    sections = {}
    for name, cls in _SECTION_TYPES.items():
        raw = data.get(name) if isinstance(data.get(name), dict) else {}
        known = {f.name for f in fields(cls)}
        values = {k: (tuple(v) if isinstance(v, list) else v) for k, v in raw.items() if k in known}
        try:
            sections[name] = cls(**values)
        except TypeError:
            sections[name] = cls()
    settings = Settings(**sections)
    host = ollama_host_from_env(settings.ollama.host)
    return settings.with_overrides(ollama__host=host)


def save_settings(settings: Settings, path: Path) -> None:
    """Write settings.json atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(settings), indent=2), encoding="utf-8")
    os.replace(tmp, path)
