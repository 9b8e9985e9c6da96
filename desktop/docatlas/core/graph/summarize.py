"""Model-written summaries of merged descriptions: one call per entity, cached, deterministic.

When the distinct descriptions of an entity (or a relation) together run past
`summary_tokens`, the model is asked once for one description. The prompt lists the
descriptions sorted, so the same set always gives the same messages and the reply cache
answers every later re-derivation. Failures never stop a merge: the descriptions are
then joined, and a later re-merge tries again. After the first failure that is not a
plain cache miss, no more calls are made in this run.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from docatlas.core.base.errors import Cancelled, LLMError
from docatlas.core.base.settings import ExtractionSettings
from docatlas.core.base.tokens import count_tokens
from docatlas.core.llm.protocol import LLM
from docatlas.core.llm.replay import NotCached
from docatlas.core.prompts.catalog import merge_prompt, render

log = logging.getLogger("docatlas.summarize")

_LABEL = re.compile(r"^\s*\**\s*(?:description|summary)\s*\**\s*:\s*\**\s*", re.IGNORECASE)


def summary_messages(name: str, descriptions: Sequence[str], settings: ExtractionSettings,
                     template: str | None = None) -> list[dict]:
    """The one-turn conversation asking for a summary; the same set of texts gives the same messages."""
    notes = "\n".join(f"- {d.strip()}" for d in sorted({d.strip() for d in descriptions}, key=_order))
    values = {
        "entity_name": name,
        "descriptions": notes,
        "language": settings.language,
        "max_words": str(max(20, settings.summary_max_tokens * 3 // 4)),
    }
    return [{"role": "user", "content": render(template or merge_prompt("summarize"), values)}]


def clean_summary(text: str) -> str:
    """The reply without a leading "Description:" label, surrounding quotes or blank lines."""
    text = _LABEL.sub("", (text or "").strip()).strip()
    if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text


class ModelSummarizer:
    """A `Summarizer` that asks the model past the token threshold; thread-safe.

    `llm` may be a factory, called on the first summary only, so that a merge needing no
    summary never opens a client. Counters: `calls` (answered by the model), `cached`,
    `skipped` (joined instead: not cached in a cache-only run, stopped, or failed).
    """

    def __init__(self, llm: LLM | Callable[[], LLM], settings: ExtractionSettings, *,
                 template: str | None = None, cancel: threading.Event | None = None, parallel: int = 1):
        self._llm = llm if hasattr(llm, "chat") else None
        self._factory = None if self._llm is not None else llm
        self.settings = settings
        self.template = template
        self.cancel = cancel
        self.parallel = max(1, parallel)
        self.calls = 0
        self.cached = 0
        self.skipped = 0
        self._failed = False
        self._lock = threading.Lock()

    def needs_summary(self, descriptions: Sequence[str]) -> bool:
        """True when the joined descriptions run past the token threshold."""
        return len(descriptions) > 1 and count_tokens("\n".join(descriptions)) > self.settings.summary_tokens

    def __call__(self, name: str, descriptions: Sequence[str]) -> str | None:
        """A summary of `descriptions`, or None when they are short enough or no summary is at hand."""
        if not self.needs_summary(descriptions):
            return None
        if self._failed or (self.cancel is not None and self.cancel.is_set()):
            return self._skip()
        messages = summary_messages(name, descriptions, self.settings, self.template)
        try:
            reply = self._model().chat(messages, num_predict=self.settings.summary_max_tokens, cancel=self.cancel)
        except NotCached:
            return self._skip()
        except (LLMError, Cancelled) as exc:
            log.warning("summary of %s failed (%s); its descriptions are joined instead", name, exc)
            self._failed = True
            return self._skip()
        text = clean_summary(reply.text)
        with self._lock:
            if reply.cached:
                self.cached += 1
            else:
                self.calls += 1
        return text or None

    def _model(self) -> LLM:
        with self._lock:
            if self._llm is None:
                self._llm = self._factory()  # type: ignore[misc]
            return self._llm

    def _skip(self) -> None:
        with self._lock:
            self.skipped += 1
        return None


def summarise_all(requests: Sequence[tuple[str, tuple[str, ...]]],
                  summarize: Callable[[str, Sequence[str]], str | None], out: dict,
                  cancel: threading.Event | None = None) -> Iterator[int]:
    """Ask `summarize` about each (name, descriptions), `parallel` at once; yield the count done after each.

    Answers land in `out` under their request. Once `cancel` is set no new request starts;
    a call in flight when the caller stops listening ends on its own (its reply is cached)."""
    workers = max(1, int(getattr(summarize, "parallel", 1) or 1))
    if workers == 1:
        for done, request in enumerate(requests, 1):
            if cancel is not None and cancel.is_set():
                return
            out[request] = summarize(request[0], list(request[1]))
            yield done
        return
    queue = iter(requests)
    in_flight: dict[Future, tuple[str, tuple[str, ...]]] = {}
    done = 0
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="docatlas-merge")
    try:
        while True:
            while len(in_flight) < workers and not (cancel is not None and cancel.is_set()):
                request = next(queue, None)
                if request is None:
                    break
                in_flight[pool.submit(summarize, request[0], list(request[1]))] = request
            if not in_flight:
                return
            finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in finished:
                out[in_flight.pop(future)] = future.result()
                done += 1
                yield done
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _order(text: str) -> tuple[str, str]:
    return (text.casefold(), text)
