"""Ending the `docatlas` process as soon as a command is done.

Python's own teardown frees every module and object one at a time: 0.1-0.2 s after a query
(the tokenizer's ranks, numpy, httpx), paid by every command though nothing is left to do then.
When a command has returned, its workspace is closed and its output written, so the process
ends at once: the atexit handlers (logging's last flush among them) run first, and the standard
streams are flushed. The usual exit is kept while a thread that is not a daemon still runs (it
may be writing) and when the window was opened (Qt tears its own objects down).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn


def finish(code: int | None) -> NoReturn:
    """Exit with `code`: at once when nothing is left running, else the usual way."""
    if must_tear_down():
        sys.exit(code)
    atexit._run_exitfuncs()  # what sys.exit would run; _exit below does not run them again
    os._exit(_flushed(code or 0))


def must_tear_down() -> bool:
    """Whether the process must end through Python's full teardown."""
    if "docatlas.gui.app" in sys.modules:
        return True
    current = threading.current_thread()
    return any(t is not current and t.is_alive() and not t.daemon for t in threading.enumerate())


def _flushed(code: int) -> int:
    """`code` once stdout and stderr are flushed; a reader that went away makes it the pipe's code."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError, AttributeError):  # closed pipe, closed or missing stream
        from docatlas.cli.guards import pipe_closed

        code = pipe_closed() if code == 0 else code
    try:
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass
    return code
