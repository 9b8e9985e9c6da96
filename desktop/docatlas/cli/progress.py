"""The progress display of a run: a one-line bar on a terminal, plain lines elsewhere."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from docatlas.core.base.progress import Progress
from docatlas.core.base.settings import Settings
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

    def __init__(self, stream):
        self.stream = stream
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self._last_stage = ""

    def show(self, p: Progress) -> None:
        """Draw the current state."""
        if self.tty:
            total = max(1, p.chunks_total)
            done = p.chunks_done + p.chunks_failed
            filled = int(30 * done / total) if p.stage in ("extract", "merge", "done") else 0
            eta = f" ETA {_duration(p.eta)}" if p.eta else ""
            text = (f"\r[{'#' * filled}{'.' * (30 - filled)}] {p.stage:<7} docs {p.documents_done}/"
                    f"{p.documents_total} chunks {done}/{p.chunks_total} calls {p.calls}{eta}")
            self.stream.write(text.ljust(100)[:100])
            self.stream.flush()
        elif p.stage != self._last_stage:
            self.stream.write(f"{p.stage}: {p.message}\n" if p.message else f"{p.stage}\n")
        self._last_stage = p.stage

    def finish(self) -> None:
        """End the bar's line."""
        if self.tty:
            self.stream.write("\n")


def _duration(seconds: float | None) -> str:
    seconds = int(seconds or 0)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"

