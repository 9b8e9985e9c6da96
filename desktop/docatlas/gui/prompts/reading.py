"""The background reads of one tab: latest-only per kind, each result shown when it lands.

`read(what, read, shown)` runs `read(store)` on the window's runner (a connection of its own,
see `Workspace.read_job`), keyed by `what` so that a newer read of the same kind drops an older
one still waiting; `shown(result)` is called in the GUI thread for the newest only. Callbacks
given to `when_read` run once every read asked so far has landed (a write's "the tab shows it").
While `held()` (the tab is hidden) a read is not started: the newest of each kind waits for
`release()` (the tab is shown), so a hidden tab builds nothing on the GUI thread when a run ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from docatlas.core.storage.database import Store
from docatlas.gui.tasks import TaskFailure, TaskRunner
from docatlas.gui.workspace import READ_PROMPTS, Workspace


class LatestReads:
    """Reads for one widget on the runner; nothing is shown after `close`."""

    def __init__(self, tasks: TaskRunner, workspace: Workspace, on_failure: Callable[[TaskFailure], None],
                 held: Callable[[], bool] = lambda: False):
        self.tasks = tasks
        self.held = held
        self._waiting: dict[str, tuple[Callable[[Store], Any], Callable[[Any], None]]] = {}  # kind -> newest read
        self.workspace = workspace
        self.on_failure = on_failure
        self._token = object()  # this widget's read keys, and no other's
        self._asked: dict[str, int] = {}  # the newest read of each kind: an older one that lands is ignored
        self._pending: set[str] = set()
        self._when_read: list[Callable[[], None]] = []
        self._closed = False

    @property
    def reading(self) -> bool:
        """A read asked for has not landed yet (or waits for the tab to be shown)."""
        return bool(self._pending)

    def read(self, what: str, read: Callable[[Store], Any], shown: Callable[[Any], None]) -> None:
        """Run `read` on the runner, latest-only per `what`, and hand its result to `shown` here."""
        if not self.workspace.is_open or self._closed:
            return
        self._asked[what] = self._asked.get(what, 0) + 1
        self._pending.add(what)
        if self.held():
            self._waiting[what] = (read, shown)
            return
        self._start(what, read, shown)

    def release(self) -> None:
        """Start the reads that waited while the tab was hidden (the newest of each kind)."""
        waiting, self._waiting = self._waiting, {}
        for what, (read, shown) in waiting.items():
            self._start(what, read, shown)

    def _start(self, what: str, read: Callable[[Store], Any], shown: Callable[[Any], None]) -> None:
        asked = self._asked[what]

        def current() -> bool:
            if self._asked.get(what) != asked or self._closed:
                return False  # a newer read of the same kind is on its way
            self._pending.discard(what)
            return True

        def landed(result: object) -> None:
            if current():
                shown(result)
                self._landed()

        def failed(failure: TaskFailure) -> None:
            if current():
                self.on_failure(failure)
                self._landed()
        self.tasks.run(READ_PROMPTS, self.workspace.read_job(read), key=(what, self._token),
                       on_success=landed, on_failure=failed)

    def when_read(self, callback: Callable[[], None]) -> None:
        """Call `callback` once every read asked so far has landed (now, if none is waiting)."""
        self._when_read.append(callback)
        self._landed()

    def close(self) -> None:
        """Show nothing more (the widget is going away)."""
        self._closed = True
        self._when_read.clear()
        self._waiting.clear()

    def _landed(self) -> None:
        while not self._pending and self._when_read:
            self._when_read.pop(0)()
