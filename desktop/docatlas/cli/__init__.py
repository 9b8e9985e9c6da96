"""`docatlas`: the same jobs as the window, headless.

User mistakes and failures end with one sentence on stderr and a non-zero exit; the
full detail of anything unexpected goes to the log file, never a traceback on screen.
The grammar is in `parser`, the commands in one module per group (`ingest`, `graph`,
`query`, `prompts`), the progress bar in `progress`.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from docatlas.cli.common import UserError
from docatlas.cli.graph import cmd_export, cmd_status, cmd_suggestions
from docatlas.cli.ingest import cmd_delete, cmd_ingest, cmd_rebuild
from docatlas.cli.parser import build_parser
from docatlas.cli.prompts import cmd_prompts
from docatlas.cli.query import cmd_query
from docatlas.core.base import paths
from docatlas.core.base.errors import DocAtlasError
from docatlas.core.base.settings import load_settings
from docatlas.core.storage.database import Store

__all__ = ["COMMANDS", "UserError", "build_parser", "main"]

log = logging.getLogger("docatlas.cli")

COMMANDS = {"ingest": cmd_ingest, "export": cmd_export, "delete": cmd_delete, "query": cmd_query,
            "status": cmd_status, "rebuild": cmd_rebuild, "suggestions": cmd_suggestions, "prompts": cmd_prompts}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `docatlas` command; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    log_file = paths.setup_logging()
    if args.command is None:
        return _open_window(args, parser)
    try:
        workspace = paths.data_dir(args.data_dir)
        settings = load_settings(paths.settings_path())
        for warning in settings.warnings:
            print(f"note: {warning}", file=sys.stderr)
        with Store(paths.database_path(workspace)) as store:
            return COMMANDS[args.command](args, store, settings)
    except KeyboardInterrupt:
        print("Stopped; finished work is kept. Run the same command again to continue.", file=sys.stderr)
        return 130
    except DocAtlasError as exc:
        log.warning("%s failed: %s", args.command, exc.message)
        print(exc.message, file=sys.stderr)
        return 1
    except Exception:  # the last guard: the user gets a sentence, the log gets the detail
        log.exception("unexpected error in %s", args.command)
        print(f"DocAtlas hit an unexpected error; the details are in {log_file}.", file=sys.stderr)
        return 1


def _open_window(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    try:
        from docatlas.gui.app import main as gui_main
    except ImportError:
        parser.print_help()
        return 0
    return gui_main(data_dir=args.data_dir)
