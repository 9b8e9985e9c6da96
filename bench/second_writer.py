"""Second-writer benchmark: how soon a second `docatlas ingest` on a busy workspace says so.

A helper process holds the workspace lock (as a running ingestion does); then the real
command `python -m docatlas --data-dir WS ingest FOLDER` is started `--runs` times and timed
from start to exit, which includes Python's own start-up. The architecture issue asks for
the sentence within 2 s.

    python bench/second_writer.py --runs 10
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOLD = ("import sys, time; sys.path.insert(0, sys.argv[1]); from pathlib import Path\n"
        "from docatlas.core.storage.database import Store\n"
        "from docatlas.core.storage.lock import workspace_writer\n"
        "with Store(Path(sys.argv[2])) as store, workspace_writer(store, 'ingest'):\n"
        "    print('held', flush=True); sys.stdin.read()\n")


def main() -> None:
    """Hold the lock in one process, time the refusals of another."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "desktop")}
    with tempfile.TemporaryDirectory() as tmp:
        ws, docs = Path(tmp) / "ws", Path(tmp) / "docs"
        docs.mkdir()
        (docs / "a.txt").write_text("Ada Lovelace worked with Charles Babbage.\n", encoding="utf-8")
        holder = subprocess.Popen([sys.executable, "-c", HOLD, str(ROOT / "desktop"), str(ws / "docatlas.sqlite")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        seconds, codes = [], set()
        try:
            for _ in range(args.runs):
                started = time.perf_counter()
                done = subprocess.run([sys.executable, "-m", "docatlas", "--data-dir", str(ws), "ingest", str(docs)],
                                      capture_output=True, text=True, env=env, timeout=120)
                seconds.append(time.perf_counter() - started)
                codes.add(done.returncode)
        finally:
            holder.communicate("")
    print(f"second ingest refused, {args.runs} runs, exit codes {sorted(codes)}: "
          f"median {statistics.median(seconds):.2f} s, max {max(seconds):.2f} s (target <= 2 s)")


if __name__ == "__main__":
    main()
