"""Parser bench: run `parse_reply` over every corpus reply and compare with the hand counts.

Usage (from the repo root):  python bench/parser_corpus.py [--repeat N] [--quiet]

Prints, per source folder, each reply's recovered entities/relations against the hand
count in tests/core/corpus_counts.py and its parse time (median of N runs), then the
folder subtotals and the grand total. Exits 1 when any count differs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
FOLDERS = ("raw_outputs", "peer_cases/graphrag", "peer_cases/nano_graphrag_mock_cache")

sys.path.insert(0, str(ROOT / "desktop"))
sys.path.insert(0, str(ROOT / "tests" / "core"))

from corpus_counts import HAND_COUNTS
from docatlas.core.ingest.parse import parse_reply


def _replies() -> list[str]:
    """Every reply file of the corpus, as a path relative to it."""
    found = []
    for folder in FOLDERS:
        for path in sorted((CORPUS / folder).glob("*.txt")):
            if not path.name.endswith(".input_prompt.txt"):
                found.append(str(path.relative_to(CORPUS)))
    return found


def _time_parse(text: str, repeat: int) -> tuple[object, float]:
    """The parse result and the median parse time in milliseconds."""
    times = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = parse_reply(text)
        times.append((time.perf_counter() - start) * 1000)
    return result, statistics.median(times)


def main() -> int:
    """Run the bench; return the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="parses per reply for timing")
    parser.add_argument("--quiet", action="store_true", help="print only folder totals")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"corpus not found at {CORPUS}")
        return 2

    totals: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0.0, 0.0])
    mismatches = []
    current = None
    for rel in _replies():
        folder = str(Path(rel).parent)
        if folder != current and not args.quiet:
            print(f"\n{folder}/")
            print(f"  {'reply':<60} {'entities':>11} {'relations':>11} {'status':>8} {'ms':>7}")
            current = folder
        text = (CORPUS / rel).read_text(encoding="utf-8")
        result, ms = _time_parse(text, args.repeat)
        got = (len(result.entities), len(result.relations))
        hand = HAND_COUNTS.get(rel)
        flag = "" if hand == got else "  <-- differs" if hand else "  <-- no hand count"
        if hand != got:
            mismatches.append(rel)
        hand = hand or (0, 0)
        if not args.quiet:
            name = Path(rel).name[:60]
            print(
                f"  {name:<60} {got[0]:>4} / {hand[0]:<4} {got[1]:>4} / {hand[1]:<4}"
                f" {result.status:>8} {ms:>7.3f}{flag}"
            )
        t = totals[folder]
        t[0] += 1
        t[1] += got[0]
        t[2] += hand[0]
        t[3] += got[1]
        t[4] += hand[1]
        t[5] += ms
        t[6] = max(t[6], ms)

    print(f"\n{'folder':<40} {'replies':>7} {'entities got/hand':>18} {'relations got/hand':>19}"
          f" {'mean ms':>8} {'max ms':>7}")
    grand = [0, 0, 0, 0, 0, 0.0, 0.0]
    for folder, t in totals.items():
        print(f"{folder:<40} {t[0]:>7} {t[1]:>9} / {t[2]:<6} {t[3]:>10} / {t[4]:<6}"
              f" {t[5] / t[0]:>8.3f} {t[6]:>7.3f}")
        grand = [a + b for a, b in zip(grand[:6], t[:6], strict=True)] + [max(grand[6], t[6])]
    print(f"{'TOTAL':<40} {grand[0]:>7} {grand[1]:>9} / {grand[2]:<6} {grand[3]:>10} / "
          f"{grand[4]:<6} {grand[5] / max(grand[0], 1):>8.3f} {grand[6]:>7.3f}")
    recovered, expected = grand[1] + grand[3], grand[2] + grand[4]
    print(f"\nrecords recovered {recovered} of {expected} hand-counted; "
          f"{len(mismatches)} repl{'y' if len(mismatches) == 1 else 'ies'} differ")
    for rel in mismatches:
        print(f"  differs: {rel}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
