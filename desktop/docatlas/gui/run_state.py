"""The one source of truth about the ingestion run, for every place that shows it.

`IngestionController.run_state()` returns a `RunState`; the stage label, the progress bar,
the status bar, the table rows and the window title are all drawn from it, so they never
disagree (a progress tick that lands after Pause cannot bring back "Extracting · ETA").
A host of the pool that stopped answering is named in the stage text while the others carry
its calls ("gpu1:11434 is not answering; its calls moved to the other hosts"); when none
answers the phase is "retrying".

Phases: idle, running, retrying, pausing, paused, cancelling, stopped (chunks left), done,
failed. No Qt here.
"""

from __future__ import annotations

from dataclasses import dataclass

from docatlas.core.base.progress import HostLoad, Progress

PHASES = ("idle", "running", "retrying", "pausing", "paused", "cancelling", "stopped", "done", "failed")
ACTIVE = frozenset(("running", "retrying", "pausing", "paused", "cancelling"))
RETRY_STAGE = "retrying"  # a Progress with this stage says a model call is being retried


@dataclass(frozen=True)
class RunState:
    """What the run is doing, in the words and numbers every view shows."""

    phase: str = "idle"
    text: str = "Idle"  # the stage label
    done: int = 0
    total: int = 0
    eta: float | None = None  # only while running
    summary: str = ""  # how the last run ended (done, stopped, failed), one sentence
    failures: tuple[tuple[str, str], ...] = ()  # (document, reason) of this run, shown apart
    left: int = 0  # chunks still pending when stopped
    growing: bool = False  # files are still read: `total` is what is known so far

    @property
    def active(self) -> bool:
        """A run is in progress (maybe paused or stopping)."""
        return self.phase in ACTIVE

    @property
    def percent(self) -> int | None:
        """How far the run is, for the window title; None when nothing is counted."""
        if not self.active or self.total <= 0 or self.growing:
            return None
        return max(0, min(100, round(100 * self.done / self.total)))

    def window_title(self, workspace: str) -> str:
        """"42% — ws1 — DocAtlas" while a run goes on, else "ws1 — DocAtlas" (the name once)."""
        prefix = f"{self.percent}% — " if self.percent is not None else ""
        pause = "paused — " if self.phase == "paused" else ""
        return f"{prefix}{pause}{workspace} — DocAtlas"


def chunks_left(p: Progress | None) -> int:
    """Chunks of the run not extracted yet."""
    if p is None:
        return 0
    return max(0, p.chunks_total - p.chunks_done - p.chunks_failed)


def describe_step(item: Progress) -> tuple[str, int, int, float | None]:
    """(What is happening, done, total, ETA in seconds) for a progress item."""
    if item.stage == "embed":
        return ("Embedding for search: " + item.message, item.step_done, item.step_total, None)
    if item.stage == "communities":
        return ("Summarising topics: " + item.message, item.step_done, item.step_total, None)
    if item.stage == "load" and item.step_total:  # a scan, OCR'd page by page
        return (item.message, item.step_done, item.step_total, None)
    if item.stage == "load":
        name = f" {item.document}" if item.document else ""
        return (f"Reading documents{name}", item.documents_done, item.documents_total, None)
    if item.stage == "extract":
        done = item.chunks_done + item.chunks_failed
        if item.still_reading:  # the total grows as files are read: say what is known so far
            return (f"Extracting entities and relations: {done} of at least {item.chunks_total} chunks "
                    f"(still reading files: {item.documents_done} of {item.documents_total} read)",
                    done, item.chunks_total, None)
        return ("Extracting entities and relations", done, item.chunks_total, item.eta)
    if item.stage == "merge":
        return ("Merging the graph", item.chunks_total, item.chunks_total, None)
    return (item.message or item.stage.capitalize(), 1, 1, None)


def running_state(phase: str, last: Progress | None, retry: Progress | None) -> RunState:
    """The state while a run goes on: `last` is its latest progress, `retry` a retry notice."""
    text, done, total, eta = describe_step(last) if last is not None else ("Starting", 0, 0, None)
    failures = last.failures if last is not None else ()
    growing = last is not None and last.still_reading and last.stage == "extract"
    position = f" at {done}/{total}{'+' if growing else ''}" if total else ""
    if phase == "pausing":
        return RunState(phase, f"Pausing{position}: the calls in flight finish, no new ones start",
                        done, total, None, failures=failures, growing=growing)
    if phase == "paused":
        return RunState(phase, f"Paused{position} — Resume continues", done, total, None, failures=failures,
                        growing=growing)
    if phase == "cancelling":
        return RunState(phase, f"Stopping{position}: the calls in flight finish; finished work is kept",
                        done, total, None, failures=failures, growing=growing)
    if retry is not None:
        return RunState("retrying", retry.message, done, total, None, failures=failures, growing=growing)
    hosts = last.hosts if last is not None else ()
    aside = hosts_aside_text(hosts)
    if aside and all(h.state != "ok" for h in hosts):
        return RunState("retrying", aside, done, total, None, failures=failures, growing=growing)
    if aside:
        text = f"{text} — {aside}"
    return RunState("running", text, done, total, eta, failures=failures, growing=growing)


def host_name(load: HostLoad) -> str:
    """A host as the window names it: its address without the scheme ("gpu1:11434")."""
    return load.host.split("://", 1)[-1]


def hosts_aside_text(hosts: tuple[HostLoad, ...] | list[HostLoad]) -> str:
    """One sentence (no full stop) on the pool's hosts that are set aside, "" when none is.

    "gpu1:11434 is not answering; its calls moved to the other hosts", or, when no host
    answers, "No Ollama host is answering (gpu1:11434, gpu2:11434); trying them again".
    """
    aside = [host_name(h) for h in hosts if h.state != "ok"]
    if not aside:
        return ""
    names = ", ".join(aside[:-1]) + (" and " if len(aside) > 1 else "") + aside[-1]
    if len(aside) == len(hosts):
        return f"No Ollama host is answering ({', '.join(aside)}); trying them again"
    if len(aside) == 1:
        return f"{names} is not answering; its calls moved to the other host{'s' if len(hosts) > 2 else ''}"
    return f"{names} are not answering; their calls moved to the other host{'s' if len(hosts) - len(aside) > 1 else ''}"


def stopped_state(left: int, summary: str = "", failures: tuple = ()) -> RunState:
    """A run stopped (or an earlier one left chunks pending)."""
    return RunState("stopped", f"Stopped: {left} chunks left — Resume", summary=summary, failures=failures,
                    left=left)


def retry_progress(attempt: int, attempts: int) -> Progress:
    """The Progress a job reports while Ollama calls are retried."""
    return Progress(stage=RETRY_STAGE, message=f"Ollama is not answering; retrying, {attempt} of {attempts}",
                    step_done=attempt, step_total=attempts)
