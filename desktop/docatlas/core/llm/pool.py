"""Several Ollama hosts as one: each call goes to a host with a free slot, a failing host waits.

The host setting `http://gpu1:11434*3, 127.0.0.1:11434` gives each host its own client (a
single-host `OllamaLLM` made by the caller, with its own sockets, deadlines and breaker) and
its number of calls in flight. `HostPool.run` takes a free slot on the host with the most
room, runs the call there, and on a fault of the host (not reachable, timed out, broken
stream, server error, model missing) sets that host aside and gives the call to another.
A call fails only once every host has failed it `retries + 1` times; the reply cache sits
above the pool (keyed without the host), so nothing is asked twice for the same answer.

A host set aside is tried again after its cool-down (`backoff_s`, doubling with each
failure in a row, at most `COOL_DOWN_S`), with one call at first; an answer gives it all
its slots back.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from typing import Generic, Protocol, TypeVar

from docatlas.core.base.errors import Cancelled, LLMError, ModelNotFound, OllamaTimeout, OllamaUnreachable
from docatlas.core.base.progress import HostLoad
from docatlas.core.base.settings import OllamaSettings
from docatlas.core.base.settings_hosts import HostSettingError, host_entries
from docatlas.core.llm import transport
from docatlas.core.llm.failures import kind as fault_kind
from docatlas.core.llm.protocol import full_name

log = logging.getLogger("docatlas.llm.pool")

COOL_DOWN_S = 60.0
RATE_WINDOW_S = 60.0  # calls per minute are counted over this last stretch
STOPPED = "The run was stopped; the unfinished answer was discarded."
T = TypeVar("T")


class Member(Protocol):
    """What the pool needs of one host's client (a single-host `OllamaLLM`)."""

    def list_models(self) -> list[dict]:
        """The host's models."""
        ...


M = TypeVar("M", bound=Member)


def pool_for(settings: OllamaSettings, make_member: Callable[[OllamaSettings], M]) -> HostPool[M] | None:
    """The pool for a host setting that names several hosts (None for one host).

    Each host gets `make_member(settings for that host alone)`, with no retries of its own:
    the pool retries on the next host.
    """
    entries = _entries(settings.host)
    if len(entries) < 2:
        return None
    hosts = []
    for entry in entries:
        url = transport.normalize_host(entry.address)  # a bad address: one sentence naming it
        member = make_member(replace(settings, host=url, retries=0))
        hosts.append(PoolHost(entry.address, url, entry.slots or settings.parallel, member))
    return HostPool(hosts, settings.retries, settings.backoff_s)


def single_address(text: str) -> str:
    """The address of a host setting with one host, without its `*N` ("" for the default)."""
    entries = _entries(text)
    return entries[0].address if entries else ""


def _entries(text: str) -> tuple:
    try:
        return host_entries(text)
    except HostSettingError as exc:
        raise LLMError(str(exc)) from None


class PoolHost(Generic[M]):
    """One host of the pool: its client, slots, and how it has done in this process."""

    def __init__(self, address: str, url: str, slots: int, member: M):
        self.address = address  # as the user wrote it
        self.url = url  # normalised: http://host:port
        self.slots = max(1, slots)
        self.member = member
        self.remote = not transport.is_this_computer(url)
        self.in_flight = 0
        self.calls = 0  # answered calls
        self.failures = 0
        self.failures_in_row = 0
        self.aside_until: float | None = None  # set aside until this monotonic time
        self.trial = False  # back from aside: one call until it answers
        self.last_error = ""
        self.answered_at: deque[float] = deque()

    def usable(self, now: float) -> bool:
        """Not set aside (or its cool-down is over)."""
        return self.aside_until is None or self.aside_until <= now

    def room(self, now: float) -> int:
        """Slots free now (a host on trial has one at most)."""
        if not self.usable(now):
            return 0
        return (1 if self.trial or self.aside_until is not None else self.slots) - self.in_flight

    def load(self, now: float) -> HostLoad:
        """This host's figures for the progress display."""
        while self.answered_at and now - self.answered_at[0] > RATE_WINDOW_S:
            self.answered_at.popleft()
        recent = len(self.answered_at)
        span = min(RATE_WINDOW_S, max(1.0, now - self.answered_at[0])) if recent else RATE_WINDOW_S
        return HostLoad(host=self.url, remote=self.remote, slots=self.slots, in_flight=self.in_flight,
                        calls=self.calls, failures=self.failures, calls_per_minute=recent * 60.0 / span,
                        state="ok" if self.usable(now) and self.aside_until is None else "set aside")


class HostPool(Generic[M]):
    """Hands calls to hosts by their free slots; thread-safe."""

    def __init__(self, hosts: list[PoolHost[M]], retries: int, backoff_s: float, cool_down_s: float = COOL_DOWN_S):
        self.hosts = hosts
        self.tries_per_host = max(1, retries + 1)
        self.backoff_s = max(0.01, backoff_s)
        self.cool_down_s = cool_down_s
        self._cond = threading.Condition()

    def run(self, work: Callable[[M], T], cancel: threading.Event | None = None) -> T:
        """`work(member)` on a host with a free slot; on a host's fault, on another one."""
        failed: dict[int, int] = {}  # host index -> times this call failed there
        while True:
            index = self._acquire(cancel, failed)
            host = self.hosts[index]
            try:
                result = work(host.member)
            except LLMError as exc:
                if not host_fault(exc):
                    self._release(host, None)
                    raise  # the request itself (a prompt too long, a bad format): any host says the same
                self._release(host, exc)
                failed[index] = failed.get(index, 0) + 1
                if all(failed.get(i, 0) >= self.tries_per_host for i in range(len(self.hosts))):
                    raise
                log.warning("Ollama host %s failed (%s); the call goes to another host", host.url, exc.message)
                continue
            except BaseException:
                self._release(host, None)
                raise
            self._release(host, True)
            return result

    @property
    def label(self) -> str:
        """The hosts, as one text for messages ("http://a:11434, http://b:11434")."""
        return ", ".join(h.url for h in self.hosts)

    def check(self, model: str) -> None:
        """Every host must offer `model` (ModelNotFound naming the first that does not).

        A host that does not answer is set aside, to be tried again later; when none
        answers, its error is raised (one sentence).
        """
        errors: list[LLMError] = []
        for host in self.hosts:
            try:
                names = {full_name(m["name"]) for m in host.member.list_models()}
            except ModelNotFound:
                raise
            except LLMError as exc:
                log.warning("Ollama host %s did not answer the start-up check: %s", host.url, exc.message)
                self.set_aside(host, exc)
                errors.append(exc)
                continue
            if full_name(model) not in names:
                raise ModelNotFound(
                    f"The model {model} is not installed on the Ollama host {shown_host(host)}; run "
                    f"`ollama pull {model}` there, or take that host out of the Ollama host setting.")
        if len(errors) == len(self.hosts):
            raise errors[0]

    def common_models(self) -> list[dict]:
        """The models every answering host offers (a chosen model must be on all of them)."""
        common: dict[str, dict] | None = None
        errors: list[LLMError] = []
        for host in self.hosts:
            try:
                listed = {full_name(m["name"]): m for m in host.member.list_models()}
            except LLMError as exc:
                errors.append(exc)
                continue
            common = listed if common is None else {k: v for k, v in common.items() if k in listed}
        if common is None:
            raise errors[0]
        return sorted(common.values(), key=lambda m: m["name"])

    def loads(self) -> tuple[HostLoad, ...]:
        """Every host's load now."""
        now = time.monotonic()
        with self._cond:
            return tuple(h.load(now) for h in self.hosts)

    def set_aside(self, host: PoolHost[M], error: LLMError) -> None:
        """Take `host` out of use for its cool-down (e.g. it did not answer the start-up check)."""
        with self._cond:
            self._fail(host, error)

    def _acquire(self, cancel: threading.Event | None, failed: dict[int, int]) -> int:
        with self._cond:
            while True:
                if transport.stopping() or (cancel is not None and cancel.is_set()):
                    raise Cancelled(STOPPED)
                now = time.monotonic()
                open_hosts = [i for i, h in enumerate(self.hosts) if failed.get(i, 0) < self.tries_per_host]
                free = [i for i in open_hosts if self.hosts[i].room(now) > 0]
                if free:  # a host whose cool-down is over first (is it back?), then the most room for its slots
                    best = max(free, key=lambda i: (self.hosts[i].trial, self.hosts[i].room(now) / self.hosts[i].slots,
                                                    -failed.get(i, 0)))
                    self.hosts[best].in_flight += 1
                    return best
                waits = [self.hosts[i].aside_until - now for i in open_hosts
                         if self.hosts[i].aside_until is not None and self.hosts[i].aside_until > now]
                self._cond.wait(min([0.1, *waits]) if waits else 0.1)

    def _release(self, host: PoolHost[M], outcome: bool | LLMError | None) -> None:
        with self._cond:
            host.in_flight -= 1
            if outcome is True:
                host.calls += 1
                now = time.monotonic()
                host.answered_at.append(now)
                while now - host.answered_at[0] > RATE_WINDOW_S:  # kept to the last minute: memory stays flat
                    host.answered_at.popleft()
                if host.aside_until is not None or host.trial:
                    log.info("Ollama host %s answers again", host.url)
                host.failures_in_row = 0
                host.aside_until = None
                host.trial = False
            elif isinstance(outcome, LLMError):
                self._fail(host, outcome)
            self._cond.notify_all()

    def _fail(self, host: PoolHost[M], error: LLMError) -> None:
        host.failures += 1
        host.failures_in_row += 1
        host.last_error = error.message
        delay = min(self.cool_down_s, self.backoff_s * 2 ** (host.failures_in_row - 1))
        host.aside_until = time.monotonic() + delay * (1 + random.uniform(0, 0.1))
        host.trial = True
        self._cond.notify_all()


def host_fault(exc: LLMError) -> bool:
    """True when the host, not the request, failed: another host may well answer."""
    if isinstance(exc, OllamaUnreachable | OllamaTimeout | ModelNotFound):
        return True
    cause = exc.__cause__
    return cause is not None and fault_kind(cause) in ("connect", "timeout", "stream", "server")


def shown_host(host: PoolHost) -> str:
    """A host as a message names it: "gpu1:11434 (another computer)" or "127.0.0.1:11434"."""
    name = host.url.split("://", 1)[-1]
    return f"{name} (another computer)" if host.remote else name
