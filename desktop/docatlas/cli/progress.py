"""The progress display of a run: a one-line bar on a terminal, plain lines elsewhere.

On a terminal the line is redrawn in place and never wider than the terminal (a wider line
would wrap, and every redraw would add a line); elsewhere (a pipe, a log file) one plain
line is written per stage change.

With several Ollama hosts (a pool) each host gets a line of its own under the bar: its calls
per minute, calls, calls in flight of its slots and its state, and "another computer" for a
host that is not this one. Elsewhere a host's line is written when its state changes and
once at the end.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from docatlas.core.base.progress import HostLoad, Progress
from docatlas.core.base.settings import Settings
from docatlas.core.base.text import for_terminal
from docatlas.core.jobs.ingest import index
from docatlas.core.storage.database import Store


def run_with_progress(store: Store, paths: Sequence[Path], settings: Settings) -> Progress | None:
    """Run the ingestion pipeline with a progress bar on stderr; the last event, if any.

    Ctrl-C closes the generator, which stops the calls in flight; finished work is kept.
    """
    bar = ProgressLine(sys.stderr)
    last: Progress | None = None
    run = index(store, paths, settings)
    try:
        for last in run:
            bar.show(last)
    finally:
        run.close()
        bar.finish()
    return last


class ProgressLine:
    """A one-line progress bar on a terminal; plain lines per document elsewhere."""

    def __init__(self, stream, columns: int | None = None):
        self.stream = stream
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.columns = columns
        self._last_stage = ""
        self._hosts: tuple[HostLoad, ...] = ()  # the last hosts shown
        self._host_lines = 0  # lines drawn under the bar (a terminal)

    def show(self, p: Progress) -> None:
        """Draw the current state."""
        if self.tty:
            width = self._width()
            text = "\r" + self.line(p, width) + "\x1b[K"  # then clear the rest
            for load in p.hosts:  # one line a host under the bar, then back up to the bar
                text += "\n" + host_line(load)[:width] + "\x1b[K"
            if p.hosts:
                text += f"\x1b[{len(p.hosts)}A\r"
            self._host_lines = len(p.hosts)
            self.stream.write(text)
            self.stream.flush()
        else:
            if p.stage != self._last_stage:
                message = for_terminal(p.message).replace("\n", " ")
                self.stream.write(f"{p.stage}: {message}\n" if message else f"{p.stage}\n")
            before = {h.host: h.state for h in self._hosts}
            for load in p.hosts:
                if before.get(load.host, "ok") != load.state:
                    self.stream.write(host_line(load).strip() + "\n")
            self.stream.flush()
        self._hosts = p.hosts or self._hosts
        self._last_stage = p.stage

    @staticmethod
    def line(p: Progress, width: int) -> str:
        """The bar's text for `width` columns: the bar shrinks first, then the end is cut."""
        total = max(1, p.chunks_total)
        done = p.chunks_done + p.chunks_failed
        eta = f" ETA {_duration(p.eta)}" if p.eta else ""
        known = f"{p.chunks_total}+" if p.still_reading else f"{p.chunks_total}"  # more chunks to come
        words = (f" {p.stage:<7} docs {p.documents_done}/{p.documents_total} chunks {done}/{known}"
                 f" calls {p.calls}{eta}")
        if p.still_reading and p.stage == "extract":
            words += " (still reading files)"
        if p.stage == "load" and p.step_total:  # a scan being OCR'd, page by page
            words += f" OCR page {p.step_done}/{p.step_total}"
        room = min(30, width - len(words) - 2)
        if room < 5:
            return words.strip()[:width]
        filled = int(room * done / total) if p.stage in ("extract", "merge", "done") else 0
        return f"[{'#' * filled}{'.' * (room - filled)}]{words}"[:width]

    def _width(self) -> int:
        columns = self.columns or shutil.get_terminal_size((80, 24)).columns
        return max(10, columns - 1)  # the last column would make some terminals wrap

    def finish(self) -> None:
        """End the bar's line (below the hosts' lines); elsewhere each host's line once."""
        if self.tty:
            self.stream.write("\n" * (self._host_lines + 1))
        else:
            for load in self._hosts:
                self.stream.write(host_line(load).strip() + "\n")
        self.stream.flush()


def host_line(load: HostLoad) -> str:
    """One host's line: "  gpu1:11434, another computer: 11.8 calls/min, 120 calls, 3/3 in flight, ok"."""
    name = for_terminal(load.host.split("://", 1)[-1])
    where = ", another computer" if load.remote else ""
    failed = f", {load.failures} failed" if load.failures else ""
    return (f"  {name}{where}: {load.calls_per_minute:.1f} calls/min, {load.calls} calls{failed}, "
            f"{load.in_flight}/{load.slots} in flight, {load.state}")


def _duration(seconds: float | None) -> str:
    seconds = int(seconds or 0)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"

