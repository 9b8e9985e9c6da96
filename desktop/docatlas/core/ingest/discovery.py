"""Walking what the user gave: folders become the supported files inside them.

The walk never aborts. A link that loops or leads nowhere, a folder or file that cannot be
read, each becomes a listed failure with one sentence; file names that are not valid
UTF-8 are kept as they are (the store keeps their bytes) and shown with `\\xNN` escapes.
Symbolic links to folders are not followed inside a folder, so a link loop cannot recur.

`walk` is a generator: it lists one folder at a time, in the order `discover` returns (by
path, part by part), so an ingest starts on the first file while the rest of the folder is
still being listed. Each file's resolved path (the store's key) comes from its folder's,
so only a given path and a link cost a `realpath`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from docatlas.core.base.paths import shown_name


@dataclass(frozen=True)
class Found:
    """One entry of a walk: a file to read (`resolved` is its real path) or a listed failure."""

    path: Path
    resolved: str = ""
    problem: str | None = None  # the sentence, when it cannot be read at all


def _is_hidden(name: str) -> bool:
    return name.startswith(".")


def _link_problem(path: Path) -> str | None:
    """The sentence for a link that loops or leads nowhere, else None."""
    if not path.is_symlink():
        return None
    try:
        path.resolve(strict=True)
    except RuntimeError:  # Python < 3.13 reports a loop this way
        return f"{shown_name(path)} is a link that leads back to itself; fix or remove the link."
    except OSError as exc:
        if exc.errno == 40:  # ELOOP
            return f"{shown_name(path)} is a link that leads back to itself; fix or remove the link."
        return f"{shown_name(path)} is a link to a file that does not exist; fix or remove the link."
    return None


def _folder_failure(error: OSError, folder: Path) -> Found:
    folder = Path(error.filename) if error.filename else folder
    reason = error.strerror or type(error).__name__
    return Found(folder, problem=(f"The folder {shown_name(folder)} could not be read ({reason}); check that "
                                  "you may open it and add it again."))


def _linked(path: Path) -> Found:
    """A link to a file: its target's real path, or the sentence for a broken or looping link."""
    problem = _link_problem(path)
    return Found(path, problem=problem) if problem else Found(path, os.path.realpath(path))


def _folder(folder: Path, real: str, suffixes: frozenset[str]) -> Iterator[Found]:
    """The supported files under `folder` (whose real path is `real`), in path order, hidden entries skipped."""
    try:
        with os.scandir(folder) as listing:
            entries = sorted((e for e in listing if not _is_hidden(e.name)), key=lambda e: e.name)
    except OSError as exc:
        yield _folder_failure(exc, folder)
        return
    for entry in entries:
        path = folder / entry.name
        try:
            if entry.is_dir(follow_symlinks=False):
                yield from _folder(path, os.path.join(real, entry.name), suffixes)
            elif os.path.splitext(entry.name)[1].lower() not in suffixes:
                continue
            elif entry.is_symlink():
                if not os.path.isdir(path):  # a link to a folder is not followed
                    yield _linked(path)
            else:
                yield Found(path, os.path.join(real, entry.name))
        except OSError as exc:  # the entry vanished or cannot be looked at
            yield _folder_failure(exc, path)


def walk(paths: Iterable[Path], suffixes: frozenset[str], unsupported: Callable[[Path], str]) -> Iterator[Found]:
    """Expand folders (recursively, by path, hidden entries skipped) into files with `suffixes`, lazily.

    Yields a `Found` for each file (once, however many times it is given or linked) and for
    each given file that cannot be read (unsupported, missing), unreadable folder and broken
    or looping link, with a one-sentence reason; `unsupported(path)` gives the sentence for
    a given file of another type. Files of other types inside folders are ignored silently.
    """
    seen: set[str] = set()
    for given in paths:
        given = Path(given)
        problem = _link_problem(given)
        if problem:
            entries: Iterable[Found] = (Found(given, problem=problem),)
        elif given.is_dir():
            entries = _folder(given, os.path.realpath(given), suffixes)
        elif not given.is_file():
            entries = (Found(given, problem=f"{shown_name(given)} could not be found; check the path and add it "
                                            "again."),)
        elif given.suffix.lower() in suffixes:
            entries = (Found(given, os.path.realpath(given)),)
        else:
            entries = (Found(given, problem=unsupported(given)),)
        for found in entries:
            if found.problem is None:
                if found.resolved in seen:
                    continue
                seen.add(found.resolved)
            yield found


def discover(paths: Iterable[Path], suffixes: frozenset[str],
             unsupported: Callable[[Path], str]) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The whole `walk` as lists: (files, skipped), each skipped entry with its one-sentence reason."""
    files: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    for found in walk(paths, suffixes, unsupported):
        if found.problem is None:
            files.append(found.path)
        else:
            skipped.append((found.path, found.problem))
    return files, skipped
