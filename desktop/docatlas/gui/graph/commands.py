"""Undoable edits: each command applies to the store on the explorer's edit thread, in order.

`redo` runs `apply(store, previous)` and keeps what it returns (an override id, a
`MergeRecord`); `undo` runs `revert(store, that)`. Both go through the host's serial
runner with a store connection of its own, so the GUI never waits on the database and
edits land in the order they were made. Because `apply` receives what the previous run
returned, an override is redone under its old id (its old place in the order).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from PySide6.QtGui import QUndoCommand

from docatlas.core.storage.database import Store

Apply = Callable[[Store, Any], Any]
Revert = Callable[[Store, Any], None]


class EditHost(Protocol):
    """Runs a store job on the edit thread and refreshes the view when it is done."""

    def run_edit(self, job: Callable[[Store], None], command: StoreEdit) -> None:
        """Queue `job`; report a failure against `command`."""
        ...


class StoreEdit(QUndoCommand):
    """One edit of the graph, undoable."""

    def __init__(self, host: EditHost, text: str, apply: Apply, revert: Revert):
        super().__init__(text)
        self.host, self.apply, self.revert = host, apply, revert
        self.token: Any = None  # set on the edit thread; read there by the next job only

    def redo(self) -> None:
        """Apply (again)."""
        def job(store: Store) -> None:
            self.token = self.apply(store, self.token)

        self.host.run_edit(job, self)

    def undo(self) -> None:
        """Take back (nothing, when applying failed)."""
        def job(store: Store) -> None:
            if self.token is not None:
                self.revert(store, self.token)

        self.host.run_edit(job, self)
