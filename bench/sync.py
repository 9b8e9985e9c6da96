"""Sync benchmark: how long one look at a linked folder takes (`jobs.sync.plan_sync`, stat only).

The window runs this look on a reader after every change it is told of and every
`sync.poll_s` seconds, so its cost at the sizes users have is what matters. The bench writes
`--files` small .txt files in folders of 500, stores a document (one chunk) for each with
`put_document` and its stamp, as ingestion does, then times:

- an unchanged folder (every file stat'ed, nothing to do);
- the same after one file added, one edited in place and one removed (the plan it finds is checked);
- `watched_folders` (the walk that lists what the window watches).

    python bench/sync.py                   # 20,000 files
    python bench/sync.py --files 100000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "desktop"))

from docatlas.core.jobs.sync import plan_sync, watched_folders
from docatlas.core.storage import sources
from docatlas.core.storage.database import NewChunk, Store

PER_FOLDER = 500


def build(root: Path, store: Store, files: int) -> Path:
    """`files` documents in folders of PER_FOLDER, each stored with its stamp; the linked folder."""
    linked = root / "linked"
    for number in range(files):
        folder = linked / f"part{number // PER_FOLDER:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"note{number:06d}.txt"
        path.write_text(f"Note {number}: Ada Byron wrote to Alan Turing.", encoding="utf-8")
    sources.add_source(store, str(linked.resolve()))
    with store.transaction():
        pass
    for path in sorted(linked.rglob("*.txt")):
        resolved = str(path.resolve())
        store.put_document(path=resolved, title=path.stem, kind="txt", content_hash="x", size=path.stat().st_size,
                           chunks=[NewChunk(path.read_text(encoding="utf-8"), 12, None, None)])
        status = path.stat()
        sources.put_stamps(store, {resolved: (status.st_mtime_ns, status.st_size)})
    return linked


def timed(work, repeat: int = 3) -> tuple[float, object]:
    """The best of `repeat` wall times, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - started)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with Store(root / "ws" / "docatlas.sqlite") as store:
            started = time.perf_counter()
            linked = build(root, store, args.files)
            print(f"built {args.files:,} files and documents in {time.perf_counter() - started:.1f} s")
            seconds, plan = timed(lambda: plan_sync(store))
            assert plan.is_empty(), plan
            print(f"look, unchanged:        {seconds * 1000:8.1f} ms for {args.files:,} files "
                  f"({seconds / args.files * 1e6:.1f} us a file)")
            first = linked / "part0000"
            (first / "added.txt").write_text("Grace Hopper met Donald Knuth.", encoding="utf-8")
            (first / "note000001.txt").write_text("Edited: Barbara Liskov.", encoding="utf-8")
            (first / "note000002.txt").unlink()
            seconds, plan = timed(lambda: plan_sync(store))
            assert (len(plan.new), len(plan.changed), len(plan.gone)) == (1, 1, 1), plan
            print(f"look, 1 new/1 edited/1 gone: {seconds * 1000:8.1f} ms (found 1 new, 1 changed, 1 gone)")
            seconds, folders = timed(lambda: watched_folders(store, 2000))
            print(f"watched folders:        {seconds * 1000:8.1f} ms ({len(folders)} folders)")


if __name__ == "__main__":
    main()
