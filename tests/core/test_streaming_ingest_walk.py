"""Streaming the walk: a folder is listed once, on the loader thread, while its first files are read.

Real parts: real folders and links, a real SQLite file, the fake Ollama over HTTP. Nothing is
timed: laziness is shown by changing the folder after the first entry was taken, and by a walk
that holds after its first entry until the test lets it go on.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from docatlas.core.ingest.loaders import discover, walk
from docatlas.core.jobs.feed import Feed
from docatlas.core.jobs.ingest import index
from fixtures import ingest_fixtures
from helpers import long_document, settings_for

ROOT = Path(__file__).resolve().parents[2]


model = ingest_fixtures.model
store = ingest_fixtures.store


def letters(folder: Path, names: list[str]) -> Path:
    """Write a short letter at each of `names` (relative to `folder`)."""
    for number, name in enumerate(names):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"Letter {number}.\n\n" + long_document(6), encoding="utf-8")
    return folder


def test_the_walk_gives_files_by_path_once_each_with_their_real_path(tmp_path):
    folder = letters(tmp_path / "docs", ["c.txt", "a.txt", "b/x.md", "b/y.txt", "B2/z.txt", ".hidden/h.txt"])
    (folder / "notes.bmp").write_bytes(b"not read")
    (folder / "link.txt").symlink_to(folder / "a.txt")  # the same file again: ingested once
    (folder / "b" / "up.md").symlink_to(folder, target_is_directory=True)  # a folder link is not followed
    (folder / "gone.txt").symlink_to(folder / "nowhere.txt")
    aside = letters(tmp_path / "aside", ["real.txt"])
    (folder / "elsewhere.txt").symlink_to(aside / "real.txt")

    found = list(walk([folder, folder / "a.txt", folder / "b"]))

    files = [f for f in found if f.problem is None]
    assert [f.path.relative_to(folder).as_posix() for f in files] == [
        "B2/z.txt", "a.txt", "b/x.md", "b/y.txt", "c.txt", "elsewhere.txt"]
    assert all(f.resolved == os.path.realpath(f.path) for f in files)
    assert files[-1].resolved == os.path.realpath(aside / "real.txt")
    assert [(f.path.name, "does not exist" in f.problem) for f in found if f.problem] == [("gone.txt", True)]
    # the list form is the same walk
    listed, skipped = discover([folder, folder / "a.txt", folder / "b"])
    assert listed == [f.path for f in files] and [p for p, _ in skipped] == [folder / "gone.txt"]


def test_the_walk_lists_a_folder_only_when_it_gets_there(tmp_path):
    folder = letters(tmp_path / "docs", ["a/1.txt", "b/2.txt"])
    entries = walk([folder])
    assert next(entries).path == folder / "a" / "1.txt"
    (folder / "b" / "3.txt").write_text("Ada wrote to Alan.", encoding="utf-8")  # after the walk began
    assert [f.path.name for f in entries] == ["2.txt", "3.txt"]


def test_the_loader_reads_the_first_file_while_the_walk_still_goes_on(model, store, tmp_path):
    folder = letters(tmp_path / "docs", [f"letter{n}.txt" for n in range(3)])
    go_on = threading.Event()
    walked: list[str] = []

    def held_walk():
        for number, found in enumerate(walk([folder])):
            if number == 1:
                assert go_on.wait(60)  # the rest of the folder is "still being listed"
            walked.append(found.path.name)
            yield found

    wake = threading.Event()
    feed = Feed(store, held_walk(), settings_for(model), threading.Event(), wake).start()
    try:
        first = None
        while first is None:
            assert wake.wait(60)
            wake.clear()
            first = feed.next()
        assert first.path.name == "letter0.txt" and first.chunks  # read and cut
        assert walked == ["letter0.txt"] and not feed.finished and feed.found == 1
        go_on.set()
        rest = []
        while not feed.done:
            item = feed.next()
            if item is None:
                wake.wait(5)
                wake.clear()
            else:
                rest.append(item.path.name)
        assert rest == ["letter1.txt", "letter2.txt"] and feed.found == 3
    finally:
        go_on.set()
        feed.stop()


def test_the_totals_grow_with_the_walk_and_count_its_failures(model, store, tmp_path):
    folder = letters(tmp_path / "docs", [f"d{n}/letter.txt" for n in range(6)])
    (folder / "d3" / "loop.txt").symlink_to(folder / "d3" / "loop.txt")
    events = list(index(store, [folder], settings_for(model, parallel=2)))
    last = events[-1]
    assert last.stage == "done"
    totals = [p.documents_total for p in events]
    assert totals == sorted(totals) and totals[-1] == 7  # six letters and one broken link, as found
    assert (last.documents_done, last.documents_failed) == (7, 1)
    assert [reason for _, reason in last.failures] == ["loop.txt is a link that leads back to itself; "
                                                       "fix or remove the link."]
    assert all(p.still_reading for p in events if p.stage == "load")
    assert len(store.documents()) == 6 and store.counts()["chunks_pending"] == 0


def test_a_file_given_twice_or_linked_is_stored_once_and_skipped_when_unchanged(model, store, tmp_path):
    folder = letters(tmp_path / "docs", ["a.txt", "b.txt"])
    (folder / "again.txt").symlink_to(folder / "a.txt")
    first = list(index(store, [folder, folder / "a.txt"], settings_for(model)))[-1]
    assert (first.documents_total, first.documents_skipped) == (2, 0) and len(store.documents()) == 2
    chats = len([r for r in model.requests if r["path"] == "/api/chat"])
    again = list(index(store, [folder], settings_for(model)))[-1]
    assert (again.documents_total, again.documents_skipped, again.chunks_done) == (2, 2, 0)
    assert len([r for r in model.requests if r["path"] == "/api/chat"]) == chats  # no work redone


def test_the_ingest_command_loads_no_model_or_format_library_before_it_runs(tmp_path):
    """What `docatlas ingest` imports before reading: the model client, numpy, networkx and the
    document libraries load later (while the first file is read, or for the first file of their type)."""
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); import docatlas.cli.ingest\n"
             "heavy = ('ollama', 'httpx', 'pydantic', 'numpy', 'networkx', 'tiktoken', 'pypdf', 'pypdfium2', "
             "'docx', 'mailbox', 'zipfile')\n"
             "print(sorted(m for m in heavy if m in sys.modules))\n")
    loaded = subprocess.run([sys.executable, "-c", probe, str(ROOT / "desktop")], capture_output=True, text=True,
                            timeout=120)
    assert loaded.stdout.strip() == "[]", loaded.stderr
