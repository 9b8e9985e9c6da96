"""OCR benchmark: character accuracy and pages per second on pages rendered from known text.

Known prose (A Christmas Carol from ../shared/corpus, else a built-in paragraph) is wrapped to
lines of about 70 characters, `--lines` lines a page, and rendered black on white with
Pillow's bundled font at `--font-px` px on a US Letter page at `--dpi` dpi (the defaults make
10.8 pt type at 200 dpi, an ordinary office scan). The pages are saved as an image-only PDF
and read through DocAtlas's own loader (`loaders.load_steps`: pdfium renders each page, the
PP-OCRv6 models in resources/ocr read it), so the time per page includes rendering.

`--engine rapidocr` reads the same pages with the library DocAtlas used before (rapidocr 3 on
OpenCV, the same two model files, the same page preparation and line assembly; not a
dependency: `pip install rapidocr` first): the comparison behind `core/ingest/ocr_steps.py`.

Character accuracy is 1 - (Levenshtein distance / characters of the truth), per page, on the
text with runs of whitespace made one space; "letters only" compares the text without any
whitespace (the recogniser sometimes drops a space between words).

    python bench/ocr.py              # 5 pages
    python bench/ocr.py --pages 10
    python bench/ocr.py --engine rapidocr
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "desktop"), str(ROOT / "tests")]
BOOK = ROOT.parent / "shared" / "corpus" / "books" / "a_christmas_carol.txt"
FALLBACK = ("Marley was dead, to begin with. There is no doubt whatever about that. The register of his "
            "burial was signed by the clergyman, the clerk, the undertaker, and the chief mourner. ") * 40


def distance(a: str, b: str) -> int:
    """Levenshtein distance, two rows at a time."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        current = [i]
        for j, other in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char != other)))
        previous = current
    return previous[-1]


def accuracy(read: str, truth: str) -> float:
    """1 - edit distance / length of the truth (0 when OCR is worse than nothing)."""
    return max(0.0, 1 - distance(read, truth) / max(1, len(truth)))


def pages_of_text(pages: int, lines: int) -> list[list[str]]:
    """`pages` pages of `lines` wrapped lines of known prose."""
    text = BOOK.read_text(encoding="utf-8-sig") if BOOK.is_file() else FALLBACK
    start = text.find("Marley was dead")
    words = " ".join(text[max(0, start):].split())
    wrapped = textwrap.wrap(words, 70)
    return [wrapped[i * lines:(i + 1) * lines] for i in range(pages)]


def use_rapidocr(ocr) -> str:
    """Make `ocr.recognize` read with rapidocr (on OpenCV) instead of `ocr_steps`, on the same
    model files, prepared pages and line assembly; the engine's name and version."""
    import importlib.metadata
    import logging

    os.environ["ORT_DISABLE_TELEMETRY"] = "1"
    try:
        from rapidocr import RapidOCR
    except ImportError:
        sys.exit("rapidocr is not installed: pip install rapidocr (it is not a DocAtlas dependency)")
    logging.getLogger("RapidOCR").disabled = True
    params = {f"{task}.model_path": str(path) for task, path in ocr.model_paths().items()}
    params.update({"Global.use_cls": False, "Global.log_level": "critical", "Det.limit_type": "max",
                   "Det.limit_side_len": 2000})
    engine = RapidOCR(params=params)

    def recognize(image):
        result = engine(ocr._prepared(image))
        if result.boxes is None or result.txts is None:
            return ocr.assemble([])
        return ocr.assemble(list(zip(result.boxes.tolist(), result.txts, result.scores, strict=True)))

    ocr.recognize = recognize
    version = importlib.metadata.version
    return f"rapidocr {version('rapidocr')} (OpenCV {version('opencv-python-headless')})"


def main() -> None:
    """Render, read, score and time; print what was measured."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=5)
    parser.add_argument("--lines", type=int, default=40)
    parser.add_argument("--dpi", type=int, default=200)
    parser.add_argument("--font-px", type=int, default=30)
    parser.add_argument("--engine", choices=("docatlas", "rapidocr"), default="docatlas")
    args = parser.parse_args()

    from docatlas.core.ingest import ocr

    engine = ocr.ENGINE
    if args.engine == "rapidocr":
        engine = use_rapidocr(ocr)
    from docatlas.core.ingest.loaders import load_steps
    from fixtures.make_scans import render_page

    size = (round(8.5 * args.dpi), round(11 * args.dpi))
    truth = pages_of_text(args.pages, args.lines)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "scan.pdf"
        images = [render_page(lines, size=size, top=args.dpi // 2, font_size=args.font_px) for lines in truth]
        images[0].save(path, "PDF", resolution=args.dpi, save_all=True, append_images=images[1:])
        del images
        started = time.perf_counter()
        ocr.recognize(render_page(["warm up"], size=(400, 100), top=20))  # loads the models once
        load_s = time.perf_counter() - started
        steps, times = load_steps(path), []
        started, cpu_started = time.perf_counter(), time.process_time()
        while True:
            try:
                next(steps)
                times.append(time.perf_counter() - started)
            except StopIteration as done:
                document = done.value
                break
    seconds, cpu = times[-1], time.process_time() - cpu_started
    print(f"engine {engine}; {os.cpu_count()} CPU cores; pages {args.pages} of {args.lines} lines "
          f"({sum(len(' '.join(t)) for t in truth):,} characters), US Letter at {args.dpi} dpi, "
          f"{args.font_px} px type ({args.font_px * 72 / args.dpi:.1f} pt)")
    print(f"model load + first call: {load_s:.2f} s; load average while reading "
          f"{os.getloadavg()[0]:.1f} (other processes share the cores: pages/s falls with it)")
    print(f"read {len(document.pages)} pages in {seconds:.1f} s: {len(document.pages) / seconds:.2f} pages/s "
          f"({seconds / len(document.pages):.2f} s a page, pdfium render included); CPU time "
          f"{cpu / len(document.pages):.1f} s a page (all threads; less affected by other processes)")
    exact, letters = [], []
    for page, lines in zip(document.pages, truth, strict=False):
        want = " ".join(" ".join(lines).split())
        got = " ".join(page.text.split())
        exact.append(accuracy(got, want))
        letters.append(accuracy(got.replace(" ", ""), want.replace(" ", "")))
        print(f"  page {page.number}: character accuracy {exact[-1]:.4f}, letters only {letters[-1]:.4f}, "
              f"OCR confidence {page.confidence:.4f}")
    print(f"mean character accuracy {sum(exact) / len(exact):.4f}; letters only {sum(letters) / len(letters):.4f}")


if __name__ == "__main__":
    main()
