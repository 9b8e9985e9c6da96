"""The one model client DocAtlas calls: chat, embeddings, model facts, over Ollama's API.

Every call has an explicit timeout, is retried with backoff on transient faults, and ends in a
user-facing error (see `errors.py`) when Ollama cannot help. Replies are cached by content.
The transport pieces live beside it: `ollama_http` (the API's requests and replies as dicts),
`transport` (address, proxies, sockets that can be cut),
`deadlines` (first token, whole reply), `breaker` (timeouts in a row stop a run) and
`failures` (what went wrong, as a kind and a sentence).
"""

from __future__ import annotations

import logging
import math
import random
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from typing import TypeVar

from docatlas.core.base.errors import Cancelled, LLMError
from docatlas.core.base.settings import OllamaSettings
from docatlas.core.llm import failures, transport
from docatlas.core.llm.breaker import Breaker
from docatlas.core.llm.cancel_watch import CancelWatch
from docatlas.core.llm.chat_lines import ResponseError, count_of, piece_of
from docatlas.core.llm.deadlines import Deadlines
from docatlas.core.llm.failures import IncompleteStream as _IncompleteStream
from docatlas.core.llm.failures import kind as _kind
from docatlas.core.llm.ollama_http import OllamaHTTP
from docatlas.core.llm.pool import HostPool, pool_for, single_address
from docatlas.core.llm.protocol import (
    LLMReply,
    ResponseCache,
    cache_key,
    full_name,
    model_rows,
    reply_options,
    strip_think,
)
from docatlas.core.llm.recent import RECENT
from docatlas.core.llm.repetition import RepetitionGuard
from docatlas.core.llm.steady_context import steady_context
from docatlas.core.llm.token_sink import TokenSink as _TokenSink
from docatlas.core.llm.transport import normalize_host

__all__ = ["OllamaLLM", "normalize_host"]

log = logging.getLogger("docatlas.llm")

FALLBACK_CONTEXT = 4096
MIN_CONTEXT = 2048
MESSAGE_OVERHEAD = 64
SAFETY = 1.1
STOPPED = "The run was stopped; the unfinished answer was discarded."
_OPEN, _CLOSE = "<think>", "</think>"
_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
T = TypeVar("T")


class OllamaLLM:
    """LLM backed by a local (or LAN) Ollama; thread-safe, one shared HTTP client.

    When the host setting names several hosts, every call goes through a `pool.HostPool` of
    single-host clients (`self.pool`); the reply cache stays here, keyed without the host.
    """

    def __init__(
        self,
        settings: OllamaSettings,
        cache: ResponseCache | None = None,
        model: str | None = None,
    ):
        self.settings = settings
        self.cache = cache
        self.model = model or settings.model
        from docatlas.core.base.tokens import TokenRatios  # tiktoken loads on first use, not at import

        self.ratios = TokenRatios()  # the model's tokens per one of ours, learned from its replies
        self.pool: HostPool[OllamaLLM] | None = pool_for(settings, self._member)
        self.host = self.pool.label if self.pool else normalize_host(single_address(settings.host))
        self.sockets = transport.CallSockets()
        self.deadlines = Deadlines(self.sockets)
        self.breaker = Breaker(self.host)
        # a slow first token must not delay a stop; a connection opened just after the cut is cut too
        self.cancel_watch = CancelWatch(self._replace_client, recut=self.sockets.cut_all)
        self.client = self.pool.hosts[0].member.client if self.pool else self._new_client()
        self._calls = 0
        self.cache_hits = 0
        self._lock = threading.Lock()
        self._contexts: dict[str, int] = {}
        self._no_think: set[str] = set()
        # told (retry number, retries allowed) before each retry, from the calling thread
        self.on_retry: Callable[[int, int], None] | None = None

    # -- public API -----------------------------------------------------------------------
    def chat(
        self,
        messages: list[dict],
        *,
        format: dict | str | None = None,
        num_predict: int | None = None,
        cancel: threading.Event | None = None,
        on_token: Callable[[str], None] | None = None,
        slot: AbstractContextManager | None = None,
    ) -> LLMReply:
        """Ask the model; streamed, cancellable, cached, retried. Raises LLMError/Cancelled.

        `on_token` gets the raw pieces as they arrive; after a retry it gets only what goes
        beyond what it already had, so a reader never sees the answer twice. `slot` (the
        caller's limit on calls in flight) is held around the model call alone: the cache
        look-up, the prompt's token count and storing the reply happen outside it.
        """
        started = time.monotonic()
        model = self.model
        predict = num_predict or self.settings.num_predict
        options = reply_options(self.settings, predict)
        key = cache_key(model, options, messages, format)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            with self._lock:
                self.cache_hits += 1
            log.debug("cache hit for %s (%s)", model, key[:12])
            return LLMReply(hit, 0, 0, True, time.monotonic() - started)
        _raise_if_cancelled(cancel)
        sink = _TokenSink(on_token) if on_token is not None else None
        held = slot if slot is not None else nullcontext()
        if self.pool is not None:  # a host that fails hands the call to another; the sink sends only what is new
            with held:
                if slot is not None and self.cache is not None and (hit := RECENT.get(self.cache, key)) is not None:
                    return LLMReply(hit, 0, 0, True, time.monotonic() - started)  # landed while this one waited
                reply = self.pool.run(lambda member: member.chat(
                    messages, format=format, num_predict=predict, cancel=cancel,
                    on_token=sink and sink.restarted()), cancel)
            if reply.text and self.cache is not None and reply.done_reason == "stop":
                self.cache.put(key, model, reply.text)
                RECENT.put(self.cache, key, reply.text)
            return replace(reply, seconds=time.monotonic() - started)
        ours = _prompt_tokens(messages)  # counted once: the context asked for, and the learned ratio
        wanted, cap = self._context_for(ours, len(messages), predict, model), self._cap(model)

        def attempt() -> tuple[str, int, int, str]:
            # Taken as the call is sent (its slot held): a call prepared earlier never asks for less
            # than one sent before it, which would make Ollama reload the model.
            options["num_ctx"] = steady_context(self.host, model, wanted, cap)
            if sink is not None:
                sink.restart()
            return self._stream(model, messages, options, format, cancel, sink)

        with self.cancel_watch.watching(cancel), held:  # a set cancel cuts the connections at once
            if slot is not None and self.cache is not None and (hit := RECENT.get(self.cache, key)) is not None:
                # the same call's reply landed while this one waited for its slot (a question read the chunk)
                with self._lock:
                    self.cache_hits += 1
                return LLMReply(hit, 0, 0, True, time.monotonic() - started)
            text, prompt_tokens, completion_tokens, done_reason = self._retrying(attempt, model, cancel)
        text = strip_think(text)
        self.ratios.observe(model, ours, prompt_tokens)
        if text and self.cache is not None and done_reason == "stop":  # a cut reply is never final
            self.cache.put(key, model, text)
            RECENT.put(self.cache, key, text)
        return LLMReply(text, prompt_tokens, completion_tokens, False, time.monotonic() - started, done_reason)

    def check(self) -> None:
        """Raise OllamaUnreachable or ModelNotFound (one user sentence) unless ready to run."""
        if self.pool is not None:
            self.pool.check(self.model)  # every host must offer the model; one that does not answer waits
            return
        names = {m["name"] for m in self._list(retry=False)}
        if full_name(self.model) not in {full_name(n) for n in names}:
            raise _not_found(self.model)

    def list_models(self) -> list[dict]:
        """Installed models: name, size (bytes), family, parameter_size; sorted by name (a pool: on every host)."""
        if self.pool is not None:
            return self.pool.common_models()
        return self._list(retry=True)

    def context_length(self, model: str | None = None) -> int:
        """The model's trained context (from /api/show), cached; 4096 if Ollama does not say."""
        name = model or self.model
        with self._lock:
            if name in self._contexts:
                return self._contexts[name]
        if self.pool is not None:
            return self.pool.run(lambda member: member.context_length(name))
        shown = self._retrying(lambda: self._one_reply(lambda: self.client.show(name)), name, None)
        info = shown.get("model_info")
        info = info if isinstance(info, dict) else {}
        arch = info.get("general.architecture")
        value = info.get(f"{arch}.context_length") if arch else None
        if value is None:
            value = next((v for k, v in info.items() if k.endswith(".context_length")), None)
        length = _positive_int(value) or FALLBACK_CONTEXT
        with self._lock:
            self._contexts[name] = length
        return length

    def num_ctx(self, messages: list[dict], num_predict: int, model: str | None = None) -> int:
        """Context to ask for: prompt estimate + reply room, in 1024s, within the caps."""
        return self._context_for(_prompt_tokens(messages), len(messages), num_predict, model)

    def _context_for(self, ours: int, messages: int, num_predict: int, model: str | None) -> int:
        """`num_ctx` for a prompt of `ours` tokens (our count) in `messages` messages."""
        name = model or self.model
        prompt = math.ceil((ours + MESSAGE_OVERHEAD * messages) * self.ratios.factor(name, SAFETY))
        cap = self._cap(name)
        if prompt > cap:
            raise LLMError(
                f"The prompt needs about {prompt} tokens but {name} can use at most {cap}; "
                "use smaller chunks or a model with a longer context."
            )
        room = num_predict if num_predict > 0 else self.settings.num_predict  # -1: unlimited
        wanted = max(MIN_CONTEXT, math.ceil((prompt + room) / 1024) * 1024)
        return min(wanted, cap)

    def reserve_context(self, messages: list[dict], more_tokens: int, num_predict: int) -> None:
        """Ask every later call for at least what `messages` with `more_tokens` added will need.

        A question's keyword call then asks the context its answer will, so Ollama loads the
        model once for both (`steady_context`); a prompt too long for the model is left to the
        call itself to refuse."""
        if self.pool is not None:
            for host in self.pool.hosts:
                host.member.reserve_context(messages, more_tokens, num_predict)
            return
        try:
            wanted = self._context_for(_prompt_tokens(messages) + more_tokens, len(messages), num_predict, self.model)
        except LLMError:
            return
        steady_context(self.host, self.model, wanted, self._cap(self.model))

    def _cap(self, model: str) -> int:
        """The most context `model` may be asked for: its trained length, capped by the setting."""
        return min(self.context_length(model), self.settings.max_context)

    def embed(self, texts: list[str], model: str | None = None) -> list[list[float]]:
        """One embedding per text, with the embedding model unless another is given."""
        if not texts:
            return []
        name = model or self.settings.embed_model
        if self.pool is not None:
            return self.pool.run(lambda member: member.embed(texts, name))
        return self._retrying(lambda: self._one_reply(lambda: self.client.embed(model=name, input=texts)),
                              name, None)

    def close(self) -> None:
        """Close the HTTP connections."""
        if self.pool is not None:
            for host in self.pool.hosts:
                host.member.close()
            return
        self.client.close()

    @property
    def calls(self) -> int:
        """Model calls made (over every host of a pool)."""
        return self._calls if self.pool is None else sum(h.member.calls for h in self.pool.hosts)

    def host_loads(self) -> tuple:
        """Each host's `HostLoad` (calls per minute, state); one host reports none."""
        return self.pool.loads() if self.pool is not None else ()

    # -- internals ------------------------------------------------------------------------
    def _list(self, *, retry: bool) -> list[dict]:
        def call() -> list[dict]:
            return model_rows(self._one_reply(self.client.tags))

        if retry:
            return self._retrying(call, self.model, None)
        try:
            return call()
        except Exception as exc:
            if _kind(exc) == "fatal" and not isinstance(exc, ResponseError):
                raise
            raise self._user_error(exc, self.model) from exc

    def _stream(
        self,
        model: str,
        messages: list[dict],
        options: dict,
        format: dict | str | None,
        cancel: threading.Event | None,
        on_token: Callable[[str], None] | None,
    ) -> tuple[str, int, int, str]:
        """One streamed chat call; returns (text, prompt tokens, completion tokens, done reason)."""
        with self._lock:
            think = None if model in self._no_think else False
        try:
            return self._consume(model, messages, options, format, think, cancel, on_token)
        except ResponseError as exc:
            if exc.status_code != 400 or "does not support thinking" not in str(exc.error):
                raise
            log.info("%s rejects the think flag; asking without it", model)
            with self._lock:
                self._no_think.add(model)
            return self._consume(model, messages, options, format, None, cancel, on_token)

    def _consume(
        self,
        model: str,
        messages: list[dict],
        options: dict,
        format: dict | str | None,
        think: bool | None,
        cancel: threading.Event | None,
        on_token: Callable[[str], None] | None,
    ) -> tuple[str, int, int, str]:
        with self._lock:
            self._calls += 1
        log.debug("chat %s num_ctx=%s", model, options.get("num_ctx"))
        stream: Iterator[dict] = self.deadlines.guard(self.client.chat(
            model=model,
            messages=messages,
            think=think,
            format=format,
            options=options,
        ), self.settings.timeout_s, int(options.get("num_predict") or self.settings.num_predict))
        pieces: list[str] = []
        guard = RepetitionGuard()  # a looping reply is stopped here, not at the reply limit
        try:
            for part in stream:  # each streamed line as a dict (chat_lines)
                if cancel is not None and cancel.is_set():
                    raise Cancelled(STOPPED)
                piece = piece_of(part)
                if piece:
                    pieces.append(piece)
                    if on_token is not None:
                        on_token(piece)
                    if guard.feed(piece):
                        return guard.kept_text(), 0, len(pieces), "repeat"
                if part.get("done"):
                    return ("".join(pieces), count_of(part, "prompt_eval_count"), count_of(part, "eval_count"),
                            str(part.get("done_reason") or "stop"))
        finally:
            stream.close()
        raise _IncompleteStream("the answer stopped before it was complete")

    def _replace_client(self) -> None:
        """Cut every connection (a read blocked on one returns) and serve later calls with a fresh client.

        Runs when a call's cancel is set: every call in flight shares the run's cancel event.
        """
        self.sockets.cut_all()  # a read blocked on a socket returns only when it is shut down
        with self._lock:
            old, self.client = self.client, self._new_client()
        old.close()

    def _member(self, settings: OllamaSettings) -> OllamaLLM:
        """One host's client for the pool: its own sockets, deadlines and breaker; the pool retries."""
        member = OllamaLLM(settings, model=self.model)
        member.ratios = self.ratios  # one learned token ratio per model, whichever host answered
        return member

    def _new_client(self) -> OllamaHTTP:
        # no proxy from the environment ever sees the text sent to Ollama (transport.py)
        return transport.new_client(self.settings, self.host, self.sockets)

    def _retrying(self, call: Callable[[], T], model: str, cancel: threading.Event | None) -> T:
        """Run `call`, retrying transient faults with exponential backoff and jitter."""
        attempts = max(1, self.settings.retries + 1)
        for attempt in range(attempts):
            try:
                self._before_call(cancel)
                result = call()
                self.breaker.answered()
                return result
            except (Cancelled, LLMError):
                raise
            except Exception as exc:
                self._before_call(cancel)  # the connection was cut because the user stopped
                kind = _kind(exc)
                if kind == "timeout":
                    self.breaker.timed_out()  # raises CircuitOpen after too many in a row
                if kind == "fatal" and not isinstance(exc, ResponseError):
                    raise  # not Ollama's doing (a callback, a bad argument): keep it as it is
                if kind == "fatal" or attempt == attempts - 1:
                    raise self._user_error(exc, model) from exc
                delay = self.settings.backoff_s * 2**attempt * (1 + random.uniform(0, 0.1))
                log.warning(
                    "Ollama %s error (%s); retry %d/%d in %.2f s",
                    kind,
                    exc,
                    attempt + 1,
                    attempts - 1,
                    delay,
                )
                if self.on_retry is not None:
                    self.on_retry(attempt + 1, attempts - 1)
                if cancel is not None:
                    cancel.wait(delay)
                    _raise_if_cancelled(cancel)
                else:
                    time.sleep(delay)
        raise AssertionError("unreachable")

    def _one_reply(self, fn: Callable[[], T]) -> T:
        """A call with one JSON reply, which must be complete within the timeout."""
        return self.deadlines.call(fn, self.settings.timeout_s)

    def _before_call(self, cancel: threading.Event | None) -> None:
        """Raise Cancelled when the run or the process stops, CircuitOpen while the breaker is open."""
        if transport.stopping():
            raise Cancelled(STOPPED)
        _raise_if_cancelled(cancel)
        self.breaker.check()

    def _user_error(self, exc: BaseException, model: str) -> LLMError:
        """Map any failure to the user-facing error with one sentence."""
        return failures.user_error(exc, self.host, model, self.settings.timeout_s)


_not_found = failures.not_found


def _prompt_tokens(messages: list[dict]) -> int:
    """The messages' tokens by our tokenizer."""
    from docatlas.core.base.tokens import count_tokens  # tiktoken loads on first use, not at import

    return sum(count_tokens(str(m.get("content") or "")) for m in messages)


def _positive_int(value: object) -> int:
    """A count Ollama reported (a number or its text), or 0 when it is not a positive number."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return 0
    try:
        number = int(value)
    except (ValueError, OverflowError):
        return 0
    return max(number, 0)


def _raise_if_cancelled(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled(STOPPED)
