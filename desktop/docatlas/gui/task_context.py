"""What a background job sees and how it ends: `TaskContext`, `TaskFailure`, `writes_workspace`. No Qt here."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from docatlas.core.base.errors import Cancelled, DocAtlasError

log = logging.getLogger("docatlas.gui.tasks")

UNEXPECTED = "{what} failed unexpectedly; the details are in the log (Help > Open Log File)."


class TaskContext:
    """What a running job may use: the cancel flag and a thread-safe progress reporter."""

    def __init__(self, cancel: threading.Event, report: Callable[[object], None]):
        self.cancel = cancel
        self.report = report


Job = Callable[[TaskContext], Any]


def writes_workspace(job: Job) -> Job:
    """Mark `job` as one that writes the workspace: the runner puts it on the writer thread."""
    job.writes_workspace = True  # type: ignore[attr-defined]
    return job


def is_writer(job: Job) -> bool:
    """True for a job marked by `writes_workspace`."""
    return bool(getattr(job, "writes_workspace", False))


@dataclass(frozen=True)
class TaskFailure:
    """Why a task ended without a result: one sentence for the user, and the exception."""

    message: str
    error: BaseException
    cancelled: bool = False


def failure_of(what: str, error: BaseException) -> TaskFailure:
    """Turn an exception into a TaskFailure; unexpected ones are logged with their traceback."""
    if isinstance(error, Cancelled):
        return TaskFailure(error.message, error, cancelled=True)
    if isinstance(error, DocAtlasError):
        log.warning("%s: %s", what, error.message)
        return TaskFailure(error.message, error)
    log.error("%s failed unexpectedly", what, exc_info=error)
    return TaskFailure(UNEXPECTED.format(what=what), error)
