"""Near-duplicate fingerprints of a chunk's text: MinHash over word shingles, cut in LSH bands.

A chunk's words (case folded) are taken five at a time (`SHINGLE` words a shingle, each
hashed from CRC-32s of its words); `PERMUTATIONS` seeded mixes of those hashes keep their
minimum each (the MinHash signature: two texts agree on a place with probability equal to
their shingles' Jaccard similarity). The signature is cut in `BANDS` bands of `ROWS`
places, each hashed to one 64-bit number: two chunks that share a band are candidates, and
a candidate is a copy only when the exact Jaccard similarity of the two shingle sets is at
least `THRESHOLD`, or when at least `COVER` of its shingles are in one candidate and that
candidate's neighbour together (`coverage`: a forwarded document cut one paragraph later
straddles two original chunks). With 16 bands of 4, a pair at 0.8 shares a band all but
always, one at 0.67 (a chunk shifted by a fifth) 97% of the time, one at 0.5 64% and one at
0.3 12% (the exact checks throw those out).

Stable across processes (no salted `hash`); numpy is imported on the first fingerprint, so
a process that stores nothing never loads it. Why not datasketch: its `MinHash` hashes every
shingle with SHA-1 in Python, its LSH index lives in memory (rebuilt from every stored
signature at each start, RSS growing with the workspace) and it needs SciPy; here the bands
are rows of an indexed SQLite table (`storage.duplicates`), so a look-up is a few index
seeks and nothing is held between documents (`bench/near_duplicates.py` compares them).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Any

SHINGLE = 5  # words a shingle
PERMUTATIONS = 64
BANDS, ROWS = 16, 4
THRESHOLD = 0.8  # exact Jaccard similarity of the shingle sets for a copy
COVER = 0.9  # or: the share of its shingles in two neighbouring originals together
MIN_WORDS = 20  # a shorter chunk gets no fingerprint: its call is cheap and a match would be chance
_WORD = re.compile(r"\w+")
_MASK = (1 << 64) - 1
_state: dict[str, Any] = {}


@dataclass(frozen=True)
class Fingerprint:
    """A chunk's shingle hashes (sorted, distinct) and its band hashes (signed 64-bit, for SQLite)."""

    shingles: Any  # numpy uint64 array
    bands: tuple[int, ...]


def _np():
    """numpy and the seeds, made once per process."""
    if not _state:
        import numpy as np

        # Fixed numbers, made here (numpy's generators may change their streams between versions):
        # the bands stored by one version must match the next one's.
        numbers = [_splitmix(20260529 + i) for i in range(PERMUTATIONS + SHINGLE)]
        _state["np"] = np
        _state["seeds"] = np.array(numbers[:PERMUTATIONS], dtype=np.uint64).reshape(PERMUTATIONS, 1)
        _state["weights"] = np.array([n | 1 for n in numbers[PERMUTATIONS:]], dtype=np.uint64)
    return _state["np"]


def _splitmix(x: int) -> int:
    """splitmix64 of one number, in plain Python (the same finaliser as `_mix`)."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def _mix(np, x):
    """splitmix64's finaliser, elementwise (uint64 arithmetic wraps)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def shingles(text: str):
    """The distinct hashes of the text's `SHINGLE`-word shingles (sorted), or None under `MIN_WORDS`."""
    words = _WORD.findall(text.casefold())
    if len(words) < MIN_WORDS:
        return None
    np = _np()
    hashed = np.fromiter((zlib.crc32(w.encode("utf-8")) for w in words), dtype=np.uint64, count=len(words))
    count = len(words) - SHINGLE + 1
    with np.errstate(over="ignore"):
        combined = np.zeros(count, dtype=np.uint64)
        for place, weight in enumerate(_state["weights"]):
            combined += hashed[place:place + count] * weight
        return np.unique(_mix(np, combined))


def fingerprint(text: str) -> Fingerprint | None:
    """The chunk's fingerprint, or None for a chunk too short to have one."""
    return fingerprint_of(shingles(text))


def fingerprint_of(found) -> Fingerprint | None:
    """The fingerprint of a text's `shingles` (None for None)."""
    if found is None:
        return None
    np = _np()
    with np.errstate(over="ignore"):
        signature = _mix(np, found[None, :] ^ _state["seeds"]).min(axis=1)  # (PERMUTATIONS,)
        rows = signature[:BANDS * ROWS].reshape(BANDS, ROWS)
        folded = np.zeros(BANDS, dtype=np.uint64)
        for place in range(ROWS):
            folded = _mix(np, folded ^ rows[:, place])
    bands = tuple(int(b) - (1 << 64) if b >> 63 else int(b) for b in (int(v) & _MASK for v in folded))
    return Fingerprint(found, bands)


def coverage(chunk, *others) -> float:
    """The share of `chunk`'s shingle hashes found in any of `others` (sorted arrays)."""
    np = _np()
    if chunk is None or not len(chunk):
        return 0.0
    found = np.zeros(len(chunk), dtype=bool)
    for other in others:
        if other is not None and len(other):
            found |= np.isin(chunk, other, assume_unique=True)
    return float(found.sum()) / len(chunk)


def similarity(a, b) -> float:
    """The Jaccard similarity of two sorted shingle-hash arrays."""
    np = _np()
    if a is None or b is None or not len(a) or not len(b):
        return 0.0
    common = len(np.intersect1d(a, b, assume_unique=True))
    return common / (len(a) + len(b) - common)
