"""The canvas's renderer: the latest requested image of the scene, drawn on a reader thread.

Each request is a `jobs.graph.render_job` run by the window's `TaskRunner` under this
renderer's key, so a newer request drops an older one still waiting; `rendered` arrives
in the GUI thread. A render under way stops at its next batch once it is *stale*: a
newer request was made, or the canvas called `abandon` because the view moved (the
frames of a pan or zoom must not wait on a render for the GIL). An abandoned render
delivers nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QSize, Signal
from PySide6.QtGui import QTransform

from docatlas.gui.graph.render import Rendered
from docatlas.gui.graph.scene import Scene
from docatlas.gui.jobs.graph import render_job
from docatlas.gui.tasks import TaskRunner


class Wanted:
    """The request number still wanted (0: none); the GUI thread sets it, renders read it between batches."""

    def __init__(self):
        self.request = 0

    def stale_check(self, request: int) -> Callable[[], bool]:
        """True from the moment `request` is no longer the one wanted."""
        return lambda: self.request != request


class Renderer(QObject):
    """Renders the latest requested image in the background; `rendered` arrives in the GUI thread."""

    rendered = Signal(object)  # Rendered

    def __init__(self, tasks: TaskRunner, parent: QObject | None = None):
        super().__init__(parent)
        self.tasks = tasks
        self.key = ("render", object())  # this renderer's requests, and no one else's
        self.wanted = Wanted()
        self.requests = 0  # how many renders were asked for
        self.abandoned = 0  # how many renders under way or waiting were made stale by `abandon`
        self._closed = False

    def request(self, scene: Scene, size: QSize, transform: QTransform, ratio: float = 1.0) -> int:
        """Ask for an image; returns the request number that `rendered` will carry."""
        if self._closed:
            return self.requests
        self.requests += 1
        self.wanted.request = self.requests
        job = render_job(scene, size, transform, ratio, self.requests, self.wanted.stale_check(self.requests))
        self.tasks.run("Drawing the graph", job, key=self.key, on_success=self._deliver)
        return self.requests

    def abandon(self) -> None:
        """The view moved: a render under way stops at its next batch, one waiting never draws."""
        if self.wanted.request and self.busy:
            self.abandoned += 1
        self.wanted.request = 0

    def _deliver(self, result: Rendered | None) -> None:
        if result is not None and not self._closed:
            self.rendered.emit(result)

    @property
    def busy(self) -> bool:
        """True while an image is being rendered or waits to be."""
        return self.tasks.busy(self.key)

    def shutdown(self, timeout_ms: int = 5000) -> bool:
        """Drop waiting requests, wait for the running one, and deliver nothing more."""
        self._closed = True
        self.wanted.request = 0
        return self.tasks.stop([self.key], timeout_ms)
