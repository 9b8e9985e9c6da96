"""What the command modules share: the user-mistake error and the workspace's write lock."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from docatlas.core.base.errors import DocAtlasError
from docatlas.core.storage.database import Store
from docatlas.core.storage.lock import WorkspaceBusy, workspace_writer


class UserError(DocAtlasError):
    """A mistake in what the user asked for."""


@contextmanager
def writing(args: argparse.Namespace, store: Store, what: str) -> Iterator[None]:
    """Hold the workspace's write lock for a whole command; with `--wait`, wait for another writer."""

    def say_waiting(busy: WorkspaceBusy) -> None:
        print(WorkspaceBusy(busy.holder, "waiting for it to finish").message, file=sys.stderr, flush=True)

    with ExitStack() as held:
        try:
            held.enter_context(workspace_writer(store, what, wait=getattr(args, "wait", False),
                                                on_wait=say_waiting))
        except WorkspaceBusy as busy:
            raise WorkspaceBusy(busy.holder, "wait for it to finish or run again with --wait") from None
        yield
