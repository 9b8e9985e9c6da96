"""`docatlas sync`: the linked folders brought in line with the graph, headless.

New and changed files are ingested; documents whose files are gone are removed with
`--remove-gone`, kept with `--keep-gone`, else as the `sync.gone_files` setting says
("ask" asks on a terminal and keeps them elsewhere). Folders given are linked first.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path

from docatlas.cli.common import UserError, remember_models, workspace_models, writing
from docatlas.cli.guards import clean
from docatlas.cli.ingest import _print_failures, _print_warnings
from docatlas.cli.progress import ProgressLine
from docatlas.core.base.progress import Progress
from docatlas.core.base.settings import Settings
from docatlas.core.jobs.sync import SyncReport, describe, plan_sync, sync
from docatlas.core.storage import sources
from docatlas.core.storage.database import Store

SHOWN_GONE = 5  # gone files named when asking


def check_sync(args: argparse.Namespace) -> None:
    """Refuse a folder that does not exist or is not a folder, before anything is created."""
    for folder in args.folders:
        if not folder.is_dir():
            what = "is not a folder" if folder.exists() else "does not exist"
            raise UserError(f"{clean(folder)} {what}; give a folder to link and try again.")


def cmd_sync(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """Link the given folders, then ingest what is new or changed in the linked folders."""
    if args.list:
        return _list(store)
    if args.unlink is not None:
        return _unlink(args, store)
    settings = workspace_models(args, store, settings)
    with writing(args, store, "sync"):
        chosen = [str(f.resolve()) for f in args.folders]
        for folder in chosen:
            sources.add_source(store, folder)
        if not sources.list_sources(store):
            raise UserError("No folder is linked to this workspace; run `docatlas sync FOLDER` to link one.")
        folders = chosen or None
        remove = _remove_gone(args, settings, store, folders)
        if args.folders:
            remember_models(store, settings)
        report = _run(store, settings, remove, folders)
    last = report.last
    if last is not None:
        _print_failures(store, last)
        _print_warnings(store, last)
    counts = store.counts()
    print(f"{describe(report)} Graph: {counts['entities']} entities, {counts['relations']} relations.")
    failed = last is not None and (last.documents_failed or last.chunks_failed)
    return 1 if failed else 0


def _remove_gone(args: argparse.Namespace, settings: Settings, store: Store, folders: list[str] | None) -> bool:
    """Whether documents whose files are gone leave the graph: the flag, the setting, or the user's answer."""
    if args.gone is not None:
        return args.gone == "remove"
    choice = settings.sync.gone_files
    if choice != "ask":
        return choice == "remove"
    gone = plan_sync(store, folders).gone
    if not gone or not sys.stdin.isatty():
        return False
    names = ", ".join(clean(Path(g.path).name) for g in gone[:SHOWN_GONE]) + (" ..." if len(gone) > SHOWN_GONE else "")
    print(f"{len(gone)} file{'s are' if len(gone) != 1 else ' is'} gone from the linked folders ({names}).",
          file=sys.stderr)
    answer = input("Remove them from the graph? [y/N] ").strip().lower()
    return answer in ("y", "yes")


def _run(store: Store, settings: Settings, remove: bool, folders: list[str] | None) -> SyncReport:
    """Run the sync with the progress line; its report."""
    bar = ProgressLine(sys.stderr)
    run = sync(store, settings, remove_gone=remove, folders=folders)
    last: Progress | None = None
    try:
        while True:
            last = next(run)
            bar.show(last)
    except StopIteration as end:
        return end.value
    finally:
        run.close()
        bar.finish()


def _list(store: Store) -> int:
    linked = sources.list_sources(store)
    if not linked:
        print("No folder is linked to this workspace; run `docatlas sync FOLDER` to link one.")
    for source in linked:
        when = datetime.fromtimestamp(source.synced_at).strftime("%Y-%m-%d %H:%M") if source.synced_at else "never"
        print(f"{clean(source.path)}  (synced {when})")
    return 0


def _unlink(args: argparse.Namespace, store: Store) -> int:
    folder = str(args.unlink.resolve())
    with writing(args, store, "sync"):
        if not sources.remove_source(store, folder):
            raise UserError(f"{clean(folder)} is not a linked folder; `docatlas sync --list` lists them.")
    print(f"Unlinked {clean(folder)}; its documents stay in the graph (delete them with `docatlas delete`).")
    return 0
