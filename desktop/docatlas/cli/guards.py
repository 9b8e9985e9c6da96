"""What keeps the command line calm: Ctrl-C twice, a closed pipe, unusable folders, remote Ollama.

Each ends in one sentence and a non-zero exit, never a traceback; `clean` is the one filter
for text that came from a model or a document before it reaches the terminal.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from docatlas.core.base.settings import Settings
from docatlas.core.base.text import for_terminal

clean = for_terminal
PIPE_EXIT = 141  # 128 + SIGPIPE, as a shell reports a pipe closed under a writer


@contextmanager
def second_interrupt_exits() -> Iterator[None]:
    """The first Ctrl-C stops the command as usual; a second one ends the process at once.

    After the first, the handler stays in place while the command winds down (and the
    interpreter exits), so an impatient second Ctrl-C never prints a traceback.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed = 0

    def on_interrupt(signum: int, frame: object) -> None:
        nonlocal pressed
        pressed += 1
        if pressed == 1:
            raise KeyboardInterrupt
        os.write(2, b"\nStopped at once; finished work is kept.\n")
        os._exit(130)

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield
    finally:
        if pressed == 0:
            signal.signal(signal.SIGINT, previous)


def stop_calls() -> None:
    """Cut every Ollama connection in flight so the process can end now."""
    from docatlas.core.llm.transport import stop_everything

    stop_everything()


def pipe_closed() -> int:
    """The reader of our output went away (`status --json | head -1`): end quietly, non-zero."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush must not fail again
    except (OSError, ValueError):
        pass
    try:
        print("The output was closed before DocAtlas finished writing it; the rest was dropped.",
              file=sys.stderr)
    except OSError:
        pass
    return PIPE_EXIT


def unusable_folder(what: str, exc: OSError, hint: str) -> str:
    """One sentence for a folder DocAtlas cannot create or write."""
    where = f" {exc.filename}" if exc.filename else ""
    reason = exc.strerror or str(exc)
    return f"DocAtlas cannot use the {what} folder{where} ({reason}); {hint}."


def uses_ollama(args: argparse.Namespace) -> bool:
    """True for the commands that send text to the Ollama host."""
    if args.command in ("ingest", "query"):
        return True
    if args.command == "rebuild":
        return bool(getattr(args, "summarize", False))
    return args.command == "prompts" and getattr(args, "verb", "") == "reextract"


def note_remote_host(args: argparse.Namespace, settings: Settings) -> None:
    """Once per run (the CLI calls it once), on stderr: the Ollama host is another computer."""
    if not uses_ollama(args):
        return  # before importing transport: it loads the ollama client (0.5 s), which `status` never uses
    from docatlas.core.base.errors import LLMError
    from docatlas.core.llm.transport import is_this_computer, normalize_host

    host = settings.ollama.host
    if not uses_ollama(args) or is_this_computer(host):
        return
    try:
        shown = normalize_host(host)
    except LLMError:
        shown = host
    print(f"note: Ollama at {clean(shown)} is not this computer; the text of your documents and "
          "questions is sent there.", file=sys.stderr)
