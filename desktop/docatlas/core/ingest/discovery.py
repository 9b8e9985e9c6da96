"""Walking what the user gave: folders become the supported files inside them.

The walk never aborts. A link that loops or leads nowhere, a folder or file that cannot be
read, each becomes a listed failure with one sentence; file names that are not valid
UTF-8 are kept as they are (the store keeps their bytes) and shown with `\\xNN` escapes.
Symbolic links to folders are not followed inside a folder, so a link loop cannot recur.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from docatlas.core.base.paths import shown_name


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


def _folder_failure(error: OSError) -> tuple[Path, str]:
    folder = Path(error.filename) if error.filename else Path("?")
    reason = error.strerror or type(error).__name__
    return folder, (f"The folder {shown_name(folder)} could not be read ({reason}); check that you "
                    "may open it and add it again.")


def discover(paths: Iterable[Path], suffixes: frozenset[str],
             unsupported: object) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Expand folders (recursively, sorted, hidden entries skipped) into files with `suffixes`.

    Returns (files, skipped): skipped holds given files that cannot be read (unsupported,
    missing), unreadable folders and broken or looping links, each with a one-sentence
    reason; `unsupported(path)` gives the sentence for a file of another type. Files of
    other types found inside folders are ignored silently. Each file appears once.
    """
    files: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    seen: set[str] = set()

    def add(path: Path) -> None:
        problem = _link_problem(path)
        if problem:
            skipped.append((path, problem))
            return
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            files.append(path)

    for given in paths:
        given = Path(given)
        problem = _link_problem(given)
        if problem:
            skipped.append((given, problem))
        elif given.is_dir():
            found: list[Path] = []
            for root, dirnames, filenames in os.walk(given, onerror=lambda e: skipped.append(_folder_failure(e))):
                dirnames[:] = sorted(d for d in dirnames if not _is_hidden(d))
                found.extend(Path(root) / name for name in filenames
                             if not _is_hidden(name) and Path(name).suffix.lower() in suffixes)
            for path in sorted(found):
                add(path)
        elif given.is_file():
            if given.suffix.lower() in suffixes:
                add(given)
            else:
                skipped.append((given, unsupported(given)))  # type: ignore[operator]
        else:
            reason = f"{shown_name(given)} could not be found; check the path and add it again."
            skipped.append((given, reason))
    return files, skipped
