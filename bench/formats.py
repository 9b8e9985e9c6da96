"""Loader benchmark: seconds and peak RSS to load a big workbook, CSV and mailbox.

Each case generates its file, then loads it in a fresh child process with
`docatlas.core.ingest.loaders.load_document` (for the mailbox, every message is loaded as the
ingest job would, one at a time) and reads the child's peak resident set size from the
kernel (`os.wait4` -> ru_maxrss). Sizes are printed with the figures:

- xlsx: one sheet of `--rows` rows x 3 columns (default 300,000; sampled to 20,000 kept);
- csv: the same rows as CSV;
- mbox: `--messages` messages of about 1 KB each (default 20,000);
- pdf: `--pages` pages (default 1,000) of prose only, of a ruled table of 25 rows with prose,
  and of a table aligned by its text alone; each is loaded twice: as the loader did before it
  looked for tables (pypdf's text of every page, then `scans.pdf_pages`, which looks for
  scanned pages) and through `load_document`.

    python bench/formats.py
    python bench/formats.py --rows 100000 --messages 5000 --pages 300
    python bench/formats.py --only pdf --pages 1000
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
BEFORE_CHILD = """
import sys
from pathlib import Path
from pypdf import PdfReader
from docatlas.core.ingest.scans import pdf_pages
path = Path(sys.argv[1])
texts = [(page.extract_text() or "").strip() for page in PdfReader(path).pages]
steps = pdf_pages(path, texts)
try:
    while True:
        next(steps)
except StopIteration as done:
    pages = done.value
print(sum(len(text) for _, text, _ in pages), 0, 0)
"""
PROSE = ("Ada Lovelace wrote to Charles Babbage about the engine and its cards, and Mary Somerville "
         "read the letters at Cambridge.")


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


def make_pdf(path: Path, pages: int, kind: str) -> None:
    """`pages` pages of prose ("text"), or each with a table ("ruled" or "aligned") and prose."""
    from fixtures.make_pdf_tables import draw_lines, draw_table
    from reportlab.pdfgen.canvas import Canvas

    canvas = Canvas(str(path), pagesize=(612, 792))
    for number in range(pages):
        if kind == "text":
            draw_lines(canvas, 750, [f"{number} {PROSE[:80]}", PROSE[20:100]] * 24)
        else:
            draw_lines(canvas, 750, [PROSE[:90], PROSE[10:100]] * 3)
            rows = [["Name", "City", "Revenue"],
                    *([f"Supplier {number}-{row}", "Porto", str(row)] for row in range(24))]
            bottom = draw_table(canvas, 72, 650, rows, ruled=kind == "ruled")
            draw_lines(canvas, bottom - 20, [PROSE[:90]])
        canvas.showPage()
    canvas.save()


def measure(path: Path, child_code: str = CHILD) -> tuple[float, float, str]:
    """(seconds, peak RSS in MB, child's output) of loading `path` in a child process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "desktop")}
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", child_code, str(path)], env=env, stdout=subprocess.PIPE,
                             text=True)
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
    parser.add_argument("--pages", type=int, default=1_000)
    parser.add_argument("--only", choices=("xlsx", "csv", "mbox", "pdf"), help="run one case")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        cases = [("xlsx", f"{args.rows:,} rows", make_xlsx, args.rows),
                 ("csv", f"{args.rows:,} rows", make_csv, args.rows),
                 ("mbox", f"{args.messages:,} messages", make_mbox, args.messages)]
        for kind, size, make, amount in cases:
            if args.only not in (None, kind):
                continue
            path = Path(folder) / f"big.{kind}"
            make(path, amount)
            seconds, peak, out = measure(path)
            chars, parts, warnings = out.split()
            print(f"{kind:5} {size:>18}  {path.stat().st_size / (1 << 20):7.1f} MB  {seconds:7.1f} s  "
                  f"peak RSS {peak:6.0f} MB  text {int(chars):,} chars  parts {parts}  warnings {warnings}")
        if args.only in (None, "pdf"):
            for kind in ("text", "ruled", "aligned"):
                path = Path(folder) / f"{kind}.pdf"
                make_pdf(path, args.pages, kind)
                for way, code in (("before: no tables", BEFORE_CHILD), ("load_document", CHILD)):
                    seconds, peak, out = measure(path, code)
                    print(f"pdf {kind:7} {args.pages:,} pages  {path.stat().st_size / (1 << 20):5.1f} MB  "
                          f"{way:17}  {seconds:6.1f} s  {args.pages / seconds:6.1f} pages/s  "
                          f"peak RSS {peak:5.0f} MB  text {int(out.split()[0]):,} chars")


if __name__ == "__main__":
    main()
