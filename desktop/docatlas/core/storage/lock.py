"""One writer per workspace, across processes: a lock file beside the database.

The process that writes (an ingestion, a delete, a rebuild, ...) holds an OS lock on
`docatlas.sqlite.lock` for the whole job; the OS drops it when the process ends, however
it ends, so a killed run never leaves a stale lock. The file also says who holds it (pid
and job), so a second process can tell the user what it waits for. Readers (status,
query, export) never take it: SQLite's WAL lets them read during a run.

The lock is reentrant within one process: the window runs several jobs, and a CLI
command that holds it may call jobs that take it again.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TypeVar

from docatlas.core.base.errors import DocAtlasError

if TYPE_CHECKING:  # only its path is used: a quick check need not load the database layer
    from docatlas.core.storage.database import Store

if os.name == "nt":
    import msvcrt
else:
    import fcntl

POLL_S = 0.1  # how often a waiting process tries again
_WINDOWS_LOCK_OFFSET = 1 << 20  # the byte locked on Windows, far from the holder's note at 0

Job = TypeVar("Job", bound=Callable)


class WorkspaceBusy(DocAtlasError):
    """Another process is writing to the workspace; `advice` is what the user can do (the CLI adds --wait)."""

    def __init__(self, holder: Holder | None, advice: str = "wait for it to finish, then try again"):
        who = f" (pid {holder.pid}, {holder.what})" if holder else ""
        super().__init__(f"Another DocAtlas process{who} is writing to this workspace; {advice}.")
        self.holder = holder


@dataclass(frozen=True)
class Holder:
    """Who holds a workspace lock: a process id and the job it runs."""

    pid: int
    what: str


@dataclass
class _Held:
    """A lock this process holds: the open file and how many jobs hold it."""

    file: BinaryIO
    count: int


_held: dict[Path, _Held] = {}
_registry_lock = threading.Lock()


def lock_path(store: Store) -> Path:
    """The lock file of a workspace: the database's name with `.lock`."""
    return store.path.with_name(store.path.name + ".lock")


@contextmanager
def workspace_writer(store: Store, what: str = "write", wait: bool = False,
                     on_wait: Callable[[WorkspaceBusy], None] | None = None) -> Iterator[None]:
    """Hold the workspace's write lock inside the block.

    Raises `WorkspaceBusy` when another process holds it, unless `wait`: then it waits
    (calling `on_wait` once, e.g. to say so) until the other process is done.
    """
    path = lock_path(store).resolve()
    _acquire(path, what, wait, on_wait)
    try:
        yield
    finally:
        _release(path)


def writes_workspace(what: str) -> Callable[[Job], Job]:
    """Decorate a job whose first argument is the Store: it holds the workspace lock while it runs.

    A generator job holds it from its first step until it ends or is closed.
    """

    def decorate(job: Job) -> Job:
        if inspect.isgeneratorfunction(job):
            @functools.wraps(job)
            def steps(store: Store, *args, **kwargs):
                with workspace_writer(store, what):
                    return (yield from job(store, *args, **kwargs))  # a generator's return value passes through
            return steps  # type: ignore[return-value]

        @functools.wraps(job)
        def call(store: Store, *args, **kwargs):
            with workspace_writer(store, what):
                return job(store, *args, **kwargs)
        return call  # type: ignore[return-value]

    return decorate


def busy_elsewhere(database: Path) -> WorkspaceBusy | None:
    """A quick look, without opening the database: is another process writing to it now?

    The CLI asks this before it loads the rest of DocAtlas, so that a second writer is told
    at once; the real lock is still taken by the job itself.
    """
    path = database.with_name(database.name + ".lock").resolve()
    with _registry_lock:
        if path in _held:
            return None
    try:
        file = open(path, "rb")
    except OSError:  # no lock file yet: nobody has written here
        return None
    with file:
        if not _try_lock(file):
            return WorkspaceBusy(_read_holder(path))
        _unlock(file)
    return None


def jobs_here(store: Store) -> int:
    """How many jobs of this process hold the workspace's lock now (0: none; the lock is reentrant,
    so a job that must not share the workspace with a run of its own process asks this first)."""
    path = lock_path(store).resolve()
    with _registry_lock:
        held = _held.get(path)
        return held.count if held is not None else 0


def current_holder(store: Store) -> Holder | None:
    """Who holds the workspace's lock now, as its file says (None when nobody wrote one)."""
    return _read_holder(lock_path(store))


def _acquire(path: Path, what: str, wait: bool, on_wait: Callable[[WorkspaceBusy], None] | None) -> None:
    with _registry_lock:
        held = _held.get(path)
        if held is not None:
            held.count += 1
            return
    path.parent.mkdir(parents=True, exist_ok=True)
    file = open(path, "a+b")  # kept open while the lock is held
    told = False
    try:
        while not _try_lock(file):
            if not wait:
                raise WorkspaceBusy(_read_holder(path))
            if not told and on_wait is not None:
                on_wait(WorkspaceBusy(_read_holder(path)))
            told = True
            time.sleep(POLL_S)
    except BaseException:
        file.close()
        raise
    _write_holder(file, Holder(os.getpid(), what))
    with _registry_lock:
        _held[path] = _Held(file, 1)


def _release(path: Path) -> None:
    with _registry_lock:
        held = _held[path]
        held.count -= 1
        if held.count:
            return
        del _held[path]
    try:
        held.file.seek(0)
        held.file.truncate()
        held.file.flush()
    except OSError:
        pass  # the note is only a hint; the OS lock below is what counts
    _unlock(held.file)
    held.file.close()


def _try_lock(file: BinaryIO) -> bool:
    """Take the OS lock without waiting; False when another process has it."""
    try:
        if os.name == "nt":
            file.seek(_WINDOWS_LOCK_OFFSET)
            msvcrt.locking(file.fileno(), msvcrt.LK_NBLCK, 1)
        else:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _unlock(file: BinaryIO) -> None:
    if os.name == "nt":
        file.seek(_WINDOWS_LOCK_OFFSET)
        msvcrt.locking(file.fileno(), msvcrt.LK_UNLCK, 1)
    else:
        fcntl.flock(file.fileno(), fcntl.LOCK_UN)


def _write_holder(file: BinaryIO, holder: Holder) -> None:
    """Note who holds the lock (read by a second process for its message)."""
    try:
        file.seek(0)
        file.truncate()
        file.write(json.dumps({"pid": holder.pid, "what": holder.what}).encode("utf-8"))
        file.flush()
    except OSError:
        pass  # the message then names no pid; the lock itself is held


def _read_holder(path: Path) -> Holder | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Holder(int(data["pid"]), str(data["what"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
