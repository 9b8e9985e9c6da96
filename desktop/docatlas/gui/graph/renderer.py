"""The canvas's renderer: the latest requested image of the scene, drawn on a reader thread.

Each request is a `jobs.graph.render_job` run by the window's `TaskRunner` under this
renderer's key, so a newer request drops an older one still waiting; `rendered` arrives
in the GUI thread.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QSize, Signal
from PySide6.QtGui import QTransform

from docatlas.gui.graph.render import Rendered
from docatlas.gui.graph.scene import Scene
from docatlas.gui.jobs.graph import render_job
from docatlas.gui.tasks import TaskRunner


class Renderer(QObject):
    """Renders the latest requested image in the background; `rendered` arrives in the GUI thread."""

    rendered = Signal(object)  # Rendered

    def __init__(self, tasks: TaskRunner, parent: QObject | None = None):
        super().__init__(parent)
        self.tasks = tasks
        self.key = ("render", object())  # this renderer's requests, and no one else's
        self._requests = 0
        self._closed = False

    def request(self, scene: Scene, size: QSize, transform: QTransform, ratio: float = 1.0) -> int:
        """Ask for an image; returns the request number that `rendered` will carry."""
        if self._closed:
            return self._requests
        self._requests += 1
        self.tasks.run("Drawing the graph", render_job(scene, size, transform, ratio, self._requests),
                       key=self.key, on_success=self._deliver)
        return self._requests

    def _deliver(self, result: Rendered) -> None:
        if not self._closed:
            self.rendered.emit(result)

    @property
    def busy(self) -> bool:
        """True while an image is being rendered or waits to be."""
        return self.tasks.busy(self.key)

    def shutdown(self, timeout_ms: int = 5000) -> bool:
        """Drop waiting requests, wait for the running one, and deliver nothing more."""
        self._closed = True
        return self.tasks.stop([self.key], timeout_ms)
