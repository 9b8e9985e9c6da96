"""Loader benchmark: seconds and peak RSS to load a big workbook, CSV and mailbox.

Each case generates its file, then loads it in a fresh child process with
`docatlas.core.ingest.loaders.load_document` (for the mailbox, every message is loaded as the
ingest job would, one at a time) and reads the child's peak resident set size from the
kernel (`os.wait4` -> ru_maxrss). Sizes are printed with the figures:

- xlsx: one sheet of `--rows` rows x 3 columns (default 300,000; sampled to 20,000 kept);
- csv: the same rows as CSV;
- mbox: `--messages` messages of about 1 KB each (default 20,000).

    python bench/formats.py
    python bench/formats.py --rows 100000 --messages 5000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
CHILD = """
import sys
from pathlib import Path
from docatlas.core.ingest.loaders import load_document
document = load_document(Path(sys.argv[1]))
parts = sum(1 for _ in document.parts)
print(len(document.text), parts, len(document.warnings))
"""


def make_xlsx(path: Path, rows: int) -> None:
    import openpyxl

    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet("People")
    sheet.append(["Name", "City", "Amount"])
    for number in range(rows):
        sheet.append([f"Person {number}", "Porto", number])
    book.save(path)


def make_csv(path: Path, rows: int) -> None:
    with open(path, "w", encoding="utf-8") as out:
        out.write("Name,City,Amount\n")
        for number in range(rows):
            out.write(f"Person {number},Porto,{number}\n")


def make_mbox(path: Path, messages: int) -> None:
    from fixtures.make_formats import message

    with open(path, "wb") as out:
        for number in range(messages):
            body = f"Message {number}: Ada Lovelace wrote to Charles Babbage about the engine. " * 12
            out.write(b"From ada@analytical.example Mon Mar  2 10:15:00 2026\n")
            out.write(message(f"Note {number}", body).as_bytes() + b"\n")


def measure(path: Path) -> tuple[float, float, str]:
    """(seconds, peak RSS in MB, child's output) of loading `path` in a child process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "desktop")}
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path)], env=env, stdout=subprocess.PIPE, text=True)
    out = child.stdout.read() if child.stdout else ""
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    if status:
        raise SystemExit(f"loading {path.name} failed (status {status})")
    return seconds, usage.ru_maxrss / 1024, out.strip()


def main() -> None:
    """Generate, load and print one line per case."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--messages", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        cases = [("xlsx", f"{args.rows:,} rows", make_xlsx, args.rows),
                 ("csv", f"{args.rows:,} rows", make_csv, args.rows),
                 ("mbox", f"{args.messages:,} messages", make_mbox, args.messages)]
        for kind, size, make, amount in cases:
            path = Path(folder) / f"big.{kind}"
            make(path, amount)
            seconds, peak, out = measure(path)
            chars, parts, warnings = out.split()
            print(f"{kind:5} {size:>18}  {path.stat().st_size / (1 << 20):7.1f} MB  {seconds:7.1f} s  "
                  f"peak RSS {peak:6.0f} MB  text {int(chars):,} chars  parts {parts}  warnings {warnings}")


if __name__ == "__main__":
    main()
