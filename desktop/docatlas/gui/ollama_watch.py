"""The one Ollama status of the window: what the last check of the configured host found.

`OllamaWatch` checks the host off the GUI thread (a probe job on the runner) every
`POLL_MS`, so the status bar and the set-up dialog, which both draw from it, turn red within
2 s of Ollama stopping and green again within 2 s of its return. A check still running is
never doubled. With several hosts the probe holds each host's check (`OllamaProbe.hosts`), so
the status bar and the dialog can name the hosts that do not answer and those that are not
this computer (`admin.remote_hosts`).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from docatlas.core.base.settings import Settings
from docatlas.core.llm.admin import OllamaProbe
from docatlas.gui.jobs import probe_job
from docatlas.gui.tasks import BackgroundTask, TaskRunner
from docatlas.gui.workspace import READ_OLLAMA

POLL_MS = 1500
CHECKING_OLLAMA = READ_OLLAMA  # a read: closing does not wait for it


class OllamaWatch(QObject):
    """Holds the latest `OllamaProbe` of the configured host; `changed` when it changes."""

    changed = Signal(object)  # OllamaProbe, or None while the first check of a host runs

    def __init__(self, tasks: TaskRunner, settings: Callable[[], Settings], parent: QObject | None = None):
        super().__init__(parent)
        self.tasks = tasks
        self.settings = settings
        self.probe: OllamaProbe | None = None
        self.task: BackgroundTask | None = None
        self.checks = 0  # finished checks (tests wait on it)
        self._timer = QTimer(self, interval=POLL_MS, timeout=self.check)

    def start(self) -> None:
        """Check now and then every POLL_MS."""
        self.check()
        self._timer.start()

    def stop(self) -> None:
        """Stop checking (the window closes)."""
        self._timer.stop()

    def check(self) -> None:
        """Check the host in the background (unless a check is running)."""
        if self.task is None:
            self.task = self.tasks.run(CHECKING_OLLAMA, probe_job(self.settings()), key="ollama-watch",
                                       on_success=self.set_probe, on_finished=self._finished)

    def forget(self) -> None:
        """The settings changed: the old result says nothing about the new host."""
        self.probe = None
        self.changed.emit(None)

    def set_probe(self, probe: OllamaProbe) -> None:
        """Take a check's result (ours, or the dialog's of the same host)."""
        before = self.probe
        self.probe = probe
        if before != probe:
            self.changed.emit(probe)

    def _finished(self) -> None:
        self.task = None
        self.checks += 1
