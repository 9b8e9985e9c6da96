"""Ollama housekeeping for the window: is it reachable, which models are there, pull one.

Plain Python (no Qt), run by background tasks. Probing asks only the configured host;
pulling is the one action that lets Ollama download from the internet, and it happens only
when the user asks for it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx

from docatlas.core.base.errors import Cancelled, DocAtlasError, LLMError, OllamaUnreachable
from docatlas.core.base.settings import Settings
from docatlas.core.base.settings_hosts import HostSettingError, host_entries
from docatlas.core.llm.chat_lines import ResponseError, count_of
from docatlas.core.llm.ollama import OllamaLLM, normalize_host
from docatlas.core.llm.ollama_http import OllamaHTTP
from docatlas.core.llm.pool import single_address
from docatlas.core.llm.protocol import full_name
from docatlas.core.llm.transport import is_this_computer, new_client

log = logging.getLogger("docatlas.gui.ollama")

PROBE_CONNECT_S = 3.0
EMBED_HINTS = ("embed", "bert", "bge", "e5", "minilm", "gte")


@dataclass(frozen=True)
class ModelInfo:
    """One installed model, as the pickers show it."""

    name: str
    size: int
    family: str
    parameter_size: str
    embedding: bool  # an embedding model (cannot chat)


@dataclass(frozen=True)
class OllamaProbe:
    """What a check of the host found."""

    host: str  # normalised URL
    reachable: bool
    models: tuple[ModelInfo, ...] = ()
    error: str = ""  # one sentence when not reachable
    remote: bool = False
    missing: tuple[str, ...] = field(default=())  # configured models that are not installed
    hosts: tuple[OllamaProbe, ...] = ()  # several hosts: what each one's check found

    @property
    def ready(self) -> bool:
        """Reachable, with the configured chat and embedding models installed."""
        return self.reachable and not self.missing


@dataclass(frozen=True)
class PullStatus:
    """One step of a model download."""

    status: str
    completed: int = 0
    total: int = 0


def is_remote(host: str) -> bool:
    """True when the host (or one of several) is not this computer (documents would leave it)."""
    return not is_this_computer(host)  # an address that cannot be read is not sent anything


def remote_hosts(host: str) -> list[str]:
    """The hosts of the setting that are not this computer, as people write them."""
    try:
        entries = host_entries(host)
    except HostSettingError:
        return []
    return [host_label(e.address) for e in entries if not is_this_computer(e.address)]


def host_label(host: str) -> str:
    """The host as people write it: "127.0.0.1:11434" (several: joined by commas)."""
    try:
        entries = host_entries(host)
        if len(entries) > 1:
            return ", ".join(host_label(e.written()) for e in entries)
        count = f"*{entries[0].slots}" if entries and entries[0].slots else ""
        return normalize_host(single_address(host)).split("://", 1)[1] + count
    except (LLMError, HostSettingError):
        return host


def _looks_like_embedding(name: str, family: str) -> bool:
    text = f"{name} {family}".lower()
    return any(hint in text for hint in EMBED_HINTS)


def probe(settings: Settings) -> OllamaProbe:
    """Ask the host (each of several) for its models (one attempt, short connect timeout); never raises."""
    try:
        entries = host_entries(settings.ollama.host)
    except HostSettingError as exc:
        return OllamaProbe(settings.ollama.host, False, error=str(exc))
    if len(entries) > 1:
        return _pool_probe(settings, [probe(settings.with_overrides(ollama__host=e.address)) for e in entries])
    quick = settings.with_overrides(
        ollama__retries=0, ollama__connect_timeout_s=min(PROBE_CONNECT_S, settings.ollama.connect_timeout_s))
    remote = is_remote(settings.ollama.host)
    try:
        llm = OllamaLLM(quick.ollama)
    except LLMError as exc:
        return OllamaProbe(settings.ollama.host, False, error=exc.message, remote=remote)
    try:
        listed = llm.list_models()
        models = tuple(_model_info(llm.client, m) for m in listed)
    except DocAtlasError as exc:
        return OllamaProbe(llm.host, False, error=exc.message, remote=remote)
    except Exception as exc:  # a proxy page, garbage: say so, keep the detail in the log
        log.warning("probe of %s failed", llm.host, exc_info=exc)
        return OllamaProbe(llm.host, False, remote=remote,
                           error=f"The server at {llm.host} did not answer like Ollama; check the address.")
    finally:
        llm.close()
    installed = {full_name(m.name) for m in models}
    wanted = [settings.ollama.model, settings.ollama.embed_model]
    missing = tuple(n for n in wanted if n and full_name(n) not in installed)
    return OllamaProbe(llm.host, True, models, remote=remote, missing=missing)


def _pool_probe(settings: Settings, each: list[OllamaProbe]) -> OllamaProbe:
    """Several hosts' checks as one: reachable when one is; the models all answering hosts have."""
    answering = [p for p in each if p.reachable]
    label = ", ".join(p.host for p in each)
    remote = any(p.remote for p in each)
    if not answering:
        return OllamaProbe(label, False, error=" ".join(p.error for p in each), remote=remote, hosts=tuple(each))
    names = set.intersection(*({full_name(m.name) for m in p.models} for p in answering))
    models = tuple(m for m in answering[0].models if full_name(m.name) in names)
    missing = tuple(f"{name} on {host_label(p.host)}" for p in answering for name in p.missing)
    return OllamaProbe(label, True, models, remote=remote, missing=missing, hosts=tuple(each))


def _model_info(client: OllamaHTTP, listed: dict) -> ModelInfo:
    name = listed["name"]
    embedding = _looks_like_embedding(name, listed["family"])
    try:
        caps = client.show(name).get("capabilities")
        if isinstance(caps, list) and caps:
            embedding = "embedding" in caps and "completion" not in caps
    except Exception as exc:  # older Ollama: no capabilities; keep the guess
        log.debug("show %s failed: %s", name, exc)
    return ModelInfo(name, listed["size"], listed["family"], listed["parameter_size"], embedding)


def pull_model(settings: Settings, name: str, cancel: threading.Event) -> Iterator[PullStatus]:
    """Have Ollama (every host of several, one after the other) download `name`, yielding its progress.

    Raises LLMError or Cancelled.
    """
    name = name.strip()
    if not name:
        raise LLMError("Type the name of the model to pull, for example qwen2.5:7b.")
    try:
        entries = host_entries(settings.ollama.host)
    except HostSettingError as exc:
        raise LLMError(str(exc)) from None
    for entry in entries or (None,):
        one = settings if entry is None else settings.with_overrides(ollama__host=entry.address)
        yield from _pull_one(one, name, cancel)


def _pull_one(settings: Settings, name: str, cancel: threading.Event) -> Iterator[PullStatus]:
    host = normalize_host(settings.ollama.host)
    client = new_client(settings.ollama, host, read_timeout=None)  # never through the environment's proxy
    log.info("pulling %s through %s", name, host)
    try:
        stream = client.pull(name)
        try:
            for part in stream:
                if cancel.is_set():
                    raise Cancelled(f"The download of {name} was stopped; pull it again to continue.")
                yield PullStatus(str(part.get("status") or ""), count_of(part, "completed"), count_of(part, "total"))
        finally:
            stream.close()
    except (Cancelled, LLMError):
        raise
    except ResponseError as exc:
        raise LLMError(f"Ollama could not pull {name}: {str(exc.error).strip().rstrip('.')}; "
                       "check the name at ollama.com/library.") from exc
    except (httpx.ConnectError, httpx.ConnectTimeout, ConnectionError) as exc:
        raise OllamaUnreachable(f"Ollama is not reachable at {host}; start Ollama and try again.") from exc
    except httpx.HTTPError as exc:
        raise LLMError(f"The download of {name} broke off ({exc}); pull it again to continue.") from exc
    except ValueError as exc:  # a line that is not Ollama's JSON
        raise LLMError(f"The server at {host} did not answer like Ollama while pulling {name}; "
                       "check the Ollama address.") from exc
    finally:
        client.close()
