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
    """Once per run (the CLI calls it once), on stderr: which Ollama hosts are other computers."""
    if not uses_ollama(args):
        return  # before importing transport: it loads the ollama client (0.5 s), which `status` never uses
    from docatlas.core.base.errors import LLMError
    from docatlas.core.base.settings_hosts import HostSettingError, host_entries
    from docatlas.core.llm.transport import is_this_computer, normalize_host

    try:
        addresses = [e.address for e in host_entries(settings.ollama.host)]
    except HostSettingError:
        addresses = [settings.ollama.host]
    remote = []
    for address in addresses:
        if not is_this_computer(address):
            try:
                remote.append(clean(normalize_host(address)))
            except LLMError:
                remote.append(clean(address))
    if len(remote) == 1:
        print(f"note: Ollama at {remote[0]} is not this computer; the text of your documents and "
              "questions is sent there.", file=sys.stderr)
    elif remote:
        print(f"note: the Ollama hosts {', '.join(remote[:-1])} and {remote[-1]} are not this computer; "
              "the text of your documents and questions is sent to them.", file=sys.stderr)


def hosts_given(args: argparse.Namespace, settings: Settings) -> Settings:
    """The settings with `--host` (repeatable) as the Ollama hosts; a bad one is one sentence."""
    given = getattr(args, "host", None)
    if not given:
        return settings
    from docatlas.cli.common import UserError
    from docatlas.core.base.settings_hosts import HostSettingError, host_entries

    text = ", ".join(h.strip() for h in given)
    try:
        host_entries(text)
    except HostSettingError as exc:
        raise UserError(clean(str(exc))) from None
    return settings.with_overrides(ollama__host=text)
