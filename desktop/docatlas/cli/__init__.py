"""`docatlas`: the same jobs as the window, headless.

User mistakes and failures end with one sentence on stderr and a non-zero exit; the
full detail of anything unexpected goes to the log file, never a traceback on screen.
The grammar is in `parser`, the commands in one module per group (`ingest`, `graph`,
`query`, `prompts`), the progress bar in `progress`, what is shared in `common`, Ctrl-C,
broken pipes and unusable folders in `guards`. A command may have a `check_<name>(args)`
beside it: it runs before the workspace is opened, so a command that fails on its
arguments creates nothing.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from docatlas.core.base import paths

__all__ = ["COMMANDS", "main", "run"]

log = logging.getLogger("docatlas.cli")

# command -> (module, function), imported when the command runs: a refusal is quick.
COMMANDS = {"ingest": ("ingest", "cmd_ingest"), "delete": ("ingest", "cmd_delete"),
            "rebuild": ("ingest", "cmd_rebuild"), "export": ("graph", "cmd_export"),
            "status": ("graph", "cmd_status"), "suggestions": ("graph", "cmd_suggestions"),
            "query": ("query", "cmd_query"), "prompts": ("prompts", "cmd_prompts"),
            "ungrounded": ("review", "cmd_ungrounded")}
COMMANDS["evaluate"] = ("evaluate", "cmd_evaluate")
COMMANDS["sync"] = ("sync", "cmd_sync")
# Commands that always write: a second one is turned away before the rest of DocAtlas loads.
# The others that can write (suggestions/ungrounded --accept, prompts set/reset/import/reextract)
# take the lock when they write (`common.writing`, the jobs) and say the same sentence then.
ALWAYS_WRITE = ("ingest", "delete", "rebuild", "sync")
READ_ONLY_WITH = {"sync": "--list"}  # the option that makes one of them only read


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `docatlas` command; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    busy = _busy_elsewhere(argv)
    if busy is not None:
        print(busy, file=sys.stderr)
        return 1
    from docatlas.cli import guards
    from docatlas.cli.parser import build_parser

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        log_file = paths.setup_logging()
    except OSError as exc:
        print(guards.unusable_folder("log", exc, "set DOCATLAS_LOG_DIR to a folder you may write to"),
              file=sys.stderr)
        return 1
    if args.command is None:
        return _open_window(args, parser)
    from docatlas.core.base.errors import DocAtlasError

    try:
        with guards.second_interrupt_exits():
            return _run(args)
    except KeyboardInterrupt:
        guards.stop_calls()
        print("Stopped; finished work is kept. Run the same command again to continue.", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return guards.pipe_closed()
    except DocAtlasError as exc:
        log.warning("%s failed: %s", args.command, exc.message)
        print(guards.clean(exc.message), file=sys.stderr)
        return 1
    except sqlite3.Error as exc:  # a read outside Store.query: the store's own sentence for it
        from docatlas.core.storage.database import friendly_error

        log.warning("%s failed: %s", args.command, exc)
        print(friendly_error(exc).message, file=sys.stderr)
        return 1
    except Exception:  # the last guard: the user gets a sentence, the log gets the detail
        log.exception("unexpected error in %s", args.command)
        print(f"DocAtlas hit an unexpected error; the details are in {log_file}.", file=sys.stderr)
        return 1


def run() -> NoReturn:
    """The `docatlas` command as installed: `main`, then the process ends at once (`finish`)."""
    from docatlas.cli.finish import finish

    finish(main())


def _run(args: argparse.Namespace) -> int:
    """Open the workspace and run one command in it."""
    from docatlas.cli.common import UserError
    from docatlas.cli.guards import clean, hosts_given, note_remote_host, unusable_folder
    from docatlas.core.base.settings import load_settings
    from docatlas.core.storage.database import Store

    module, name = COMMANDS[args.command]
    commands = importlib.import_module(f"docatlas.cli.{module}")
    command = getattr(commands, name)
    check = getattr(commands, name.replace("cmd_", "check_", 1), None)
    if check is not None:
        check(args)  # before anything is created
    try:
        workspace = paths.data_dir(args.data_dir)
    except OSError as exc:
        raise UserError(unusable_folder("workspace", exc, "choose one you may write to with --data-dir")) from exc
    try:
        settings = load_settings(paths.settings_path())
    except OSError as exc:
        hint = "set DOCATLAS_CONFIG_DIR to a folder you may write to"
        raise UserError(unusable_folder("settings", exc, hint)) from exc
    for warning in settings.warnings:
        print(f"note: {clean(warning)}", file=sys.stderr)  # values from settings.json, shown safely
    settings = hosts_given(args, settings)  # --host, repeated: this run's pool of Ollama hosts
    note_remote_host(args, settings)
    with Store(paths.database_path(workspace)) as store:
        return command(args, store, settings)


def _busy_elsewhere(argv: list[str]) -> str | None:
    """The sentence for a writing command while another process writes the workspace, else None."""
    early = argparse.ArgumentParser(add_help=False)
    early.add_argument("--data-dir")
    early.add_argument("--wait", action="store_true")
    early.add_argument("command", nargs="?")
    known, _ = early.parse_known_args(argv)
    if known.command not in ALWAYS_WRITE or known.wait or "-h" in argv or "--help" in argv:
        return None
    if READ_ONLY_WITH.get(known.command) in argv:
        return None
    from docatlas.core.storage.lock import busy_elsewhere

    chosen = known.data_dir or os.environ.get("DOCATLAS_DATA_DIR")
    workspace = Path(chosen).expanduser() if chosen else paths.data_dir()
    busy = busy_elsewhere(paths.database_path(workspace))
    if busy is None:
        return None
    from docatlas.core.storage.lock import WorkspaceBusy

    return WorkspaceBusy(busy.holder, "wait for it to finish or run again with --wait").message


def _open_window(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    try:
        from docatlas.gui.app import main as gui_main
    except ImportError:
        parser.print_help()
        return 0
    return gui_main(data_dir=args.data_dir)
