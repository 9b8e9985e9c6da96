"""What went wrong with a call to Ollama, as a kind (to retry or not) and as one user sentence.

A proxy's 502 with an empty body, a plain web server's HTML page, a stream of lines that
are not JSON: each gets a sentence that names the host and says what to check, never the
page itself.
"""

from __future__ import annotations

import json
import re

import httpx

from docatlas.core.base.errors import LLMError, ModelNotFound, OllamaTimeout, OllamaUnreachable
from docatlas.core.llm.chat_lines import NotAnObject, ResponseError
from docatlas.core.llm.deadlines import DeadlinePassed

GATEWAY = {502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout"}
MAX_REASON = 200
_HTML = re.compile(r"^\s*<(!doctype|html|head|body|\?xml|h1|title|p)\b", re.IGNORECASE)


class IncompleteStream(Exception):
    """The stream ended without the final `done` message."""


def kind(exc: BaseException) -> str:
    """Classify an exception: connect, timeout, stream, server (all retried) or fatal."""
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | ConnectionError):
        return "connect"
    if isinstance(exc, httpx.TimeoutException):
        return "timeout"
    if isinstance(exc, httpx.TransportError | IncompleteStream | json.JSONDecodeError | NotAnObject):
        return "stream"
    if isinstance(exc, ResponseError) and (exc.status_code >= 500 or exc.status_code < 0):
        return "server"
    return "fatal"


def user_error(exc: BaseException, host: str, model: str, timeout_s: float) -> LLMError:
    """Map any failure of a call to the user-facing error with one sentence."""
    found = kind(exc)
    if found == "connect":
        return OllamaUnreachable(
            f"Ollama is not reachable at {host}; start Ollama "
            "(run `ollama serve` or open the Ollama app) and try again."
        )
    if isinstance(exc, DeadlinePassed):
        return OllamaTimeout(exc.sentence)
    if found == "timeout":
        return OllamaTimeout(
            f"Ollama did not answer within {timeout_s:g} s; try a smaller "
            "model, fewer parallel calls, or a longer timeout."
        )
    if isinstance(exc, json.JSONDecodeError | NotAnObject):
        return not_ollama(host)
    if found == "stream":
        return LLMError(
            f"The connection to Ollama broke while {model} was answering ({exc}); "
            "check that Ollama is still running and try again."
        )
    if isinstance(exc, ResponseError):
        return _response_error(exc, host, model)
    return LLMError(f"Ollama could not answer with {model}: {exc}.")


def not_ollama(host: str) -> LLMError:
    """The sentence for a server that does not speak Ollama's API."""
    return OllamaUnreachable(
        f"The server at {host} did not answer like Ollama (it may be a web server or a proxy); "
        "check the Ollama address (OLLAMA_HOST or the setting) and that Ollama runs there."
    )


def not_found(model: str) -> ModelNotFound:
    """The sentence for a model that is not pulled."""
    return ModelNotFound(
        f"The model {model} is not installed in Ollama; run `ollama pull {model}` and try again."
    )


def _response_error(exc: ResponseError, host: str, model: str) -> LLMError:
    text = str(exc.error or "").strip()
    status = exc.status_code
    if status in GATEWAY and (not text or _HTML.match(text)):
        return LLMError(
            f"{host} answered {status} {GATEWAY[status]}: a proxy or gateway in front of Ollama "
            "could not reach it; check that Ollama is running behind it, then try again."
        )
    if _HTML.match(text):
        return not_ollama(host)
    text = " ".join(text.split()).rstrip(".")
    if status == 404 and "not found" in text and "model" in text:
        return not_found(model)
    if not text:
        text = f"HTTP {status} without a reason" if status > 0 else "no reason given"
    if len(text) > MAX_REASON:
        text = text[:MAX_REASON].rstrip() + "…"
    return LLMError(f"Ollama could not answer with {model}: {text}.")
