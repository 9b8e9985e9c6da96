"""The vector index file: vectors grouped by nearest centroid (an inverted file), read in parts.

A question reads the small head of the file (centroids and where each group starts), picks the
groups whose centroids are nearest, and reads only those groups with plain file reads: no
memory map, so what a search holds is a few megabytes whatever the workspace's size, and the
process's memory never grows with the file. Each vector is stored as int8 with one float32
scale (a quarter of its float32 blob); the scores from the file only choose candidates, which
`vector_index` rescores exactly from SQL.

Layout (little-endian): MAGIC, then dim, groups (u32), count, highest key (u64); the
centroids (float32, groups x dim); the row where each group starts (int64, groups + 1); then
per group its keys (int64), scales (float32) and codes (int8, rows x dim), one block a group.
"""

from __future__ import annotations

import math
import os
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

MAGIC = b"DOCAIVF1"
_HEAD = struct.Struct("<8sIIQQ")
TRAIN_ROWS = 40_000  # vectors the groups are learned from (float16: 60 MB at 768 numbers); 20,000 cost recall
TRAIN_ROUNDS = 8
GROUPS_PER_ROOT = 2  # groups = 2 x sqrt(count): 632 for 100,000 vectors, about 160 vectors each
Rows = list[tuple[int, str, bytes]]  # (key, ref, float32 blob), as storage.vectors yields them


def groups_for(count: int, single_below: int) -> int:
    """How many groups a file of `count` vectors gets (one, searched whole, below `single_below`)."""
    if count < max(1, single_below):
        return 1
    return max(1, min(count // 8, round(GROUPS_PER_ROOT * math.sqrt(count))))


@dataclass(frozen=True)
class Head:
    """What a search needs of a file before reading any group."""

    dim: int
    count: int
    highest: int
    centroids: np.ndarray  # float32, groups x dim, unit rows
    starts: np.ndarray  # int64, groups + 1: the first row of each group
    data_at: int  # byte offset of the first group's block

    @property
    def row_bytes(self) -> int:
        return 12 + self.dim

    def block(self, group: int) -> tuple[int, int]:
        """(byte offset, rows) of one group's block."""
        first, end = int(self.starts[group]), int(self.starts[group + 1])
        return self.data_at + first * self.row_bytes, end - first


def read_head(file) -> Head | None:  # a binary file object
    """The head of an index file, or None when it is not one (or is cut short)."""
    file.seek(0, os.SEEK_END)
    size = file.tell()
    file.seek(0)
    raw = file.read(_HEAD.size)
    if len(raw) < _HEAD.size:
        return None
    magic, dim, groups, count, highest = _HEAD.unpack(raw)
    if magic != MAGIC or dim <= 0 or groups <= 0:
        return None
    centroids = np.frombuffer(file.read(groups * dim * 4), dtype="<f4")
    starts = np.frombuffer(file.read((groups + 1) * 8), dtype="<i8")
    data_at = _HEAD.size + groups * dim * 4 + (groups + 1) * 8
    if (centroids.size != groups * dim or starts.size != groups + 1 or starts[0] != 0 or starts[-1] != count
            or np.any(np.diff(starts) < 0) or size != data_at + count * (12 + dim)):
        return None
    return Head(dim, count, highest, centroids.reshape(groups, dim), starts, data_at)


def read_group(file, head: Head, group: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(keys, scales, codes) of one group."""
    offset, rows = head.block(group)
    file.seek(offset)
    raw = file.read(rows * head.row_bytes)
    keys = np.frombuffer(raw, dtype="<i8", count=rows)
    scales = np.frombuffer(raw, dtype="<f4", count=rows, offset=rows * 8)
    codes = np.frombuffer(raw, dtype=np.int8, offset=rows * 12).reshape(rows, head.dim)
    return keys, scales, codes


def candidates(file, head: Head, query: np.ndarray, probes: int) -> np.ndarray:
    """The keys in the `probes` groups nearest the query, best first by their int8 codes."""
    groups = head.centroids.shape[0]
    nearest = np.arange(groups) if probes >= groups else np.argpartition(-(head.centroids @ query), probes)[:probes]
    keys, scores = [], []
    for group in sorted(int(g) for g in nearest):  # in file order: reads move forward
        group_keys, scales, codes = read_group(file, head, group)
        if len(group_keys):
            keys.append(group_keys)
            scores.append((codes.astype(np.float32) @ query) * scales)  # BLAS: no int8 matmul loop
    if not keys:
        return np.zeros(0, dtype=np.int64)
    all_keys, all_scores = np.concatenate(keys), np.concatenate(scores)
    return all_keys[np.argsort(-all_scores, kind="stable")]


def quantize(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int8 codes, float32 scales) of float32 rows: row ~ codes * scale."""
    peak = np.abs(matrix).max(axis=1)
    scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    return np.rint(matrix / scales[:, None]).astype(np.int8), scales


def as_matrix(rows: Rows, dim: int) -> np.ndarray:
    """The float32 matrix of a batch of rows."""
    return np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), dim)


def nearest_centroid(centroids: np.ndarray, matrix: np.ndarray, step: int = 8192) -> np.ndarray:
    """The group of each row (by cosine: every row and centroid is unit length), `step` rows at a time."""
    owner = np.empty(len(matrix), dtype=np.int32)
    for start in range(0, len(matrix), step):
        part = np.asarray(matrix[start:start + step], dtype=np.float32)
        owner[start:start + step] = np.argmax(part @ centroids.T, axis=1)
    return owner


def train(sample: np.ndarray, groups: int, seed: int = 0) -> np.ndarray:
    """Unit centroids of `groups` groups learned from a sample of unit rows (spherical k-means).

    The sample may be float16 (half the memory); the sums are float32."""
    rng = np.random.default_rng(seed)
    dim = sample.shape[1]
    if groups <= 1 or len(sample) <= groups:
        mean = sample.astype(np.float32).mean(axis=0) if len(sample) else np.zeros(dim, np.float32)
        norm = float(np.linalg.norm(mean))
        base = mean / norm if norm > 0 else np.eye(1, dim, dtype=np.float32)[0]
        return np.repeat(base[None, :].astype(np.float32), max(1, groups), axis=0)
    centroids = sample[rng.choice(len(sample), groups, replace=False)].astype(np.float32)
    for _ in range(TRAIN_ROUNDS):
        owner = nearest_centroid(centroids, sample)
        sums = np.zeros_like(centroids)
        for start in range(0, len(sample), 8192):
            part_owner = owner[start:start + 8192]
            order = np.argsort(part_owner, kind="stable")
            present, firsts = np.unique(part_owner[order], return_index=True)
            sums[present] += np.add.reduceat(sample[start:start + 8192][order].astype(np.float32), firsts, axis=0)
        empty = np.flatnonzero(np.bincount(owner, minlength=groups) == 0)
        sums[empty] = sample[rng.choice(len(sample), len(empty), replace=False)]  # an empty group starts again
        centroids = sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    return centroids.astype(np.float32)


@dataclass
class Old:
    """What a rewrite keeps of the file before it: its head, its open file, the keys to leave out."""

    head: Head
    file: object
    dropped: np.ndarray  # int64, sorted


def write(path: str, dim: int, centroids: np.ndarray, old: Old | None,
          new_rows: Callable[[], Iterable[Rows]], highest: int) -> tuple[int, int]:
    """Write a file of the old file's vectors (less the dropped) and the rows `new_rows` yields.

    `new_rows` is called twice (once to place every row in a group, once to write it), so only
    keys and group numbers are held, never the vectors. Returns (added, removed)."""
    groups = centroids.shape[0]
    counts = np.zeros(groups, dtype=np.int64)
    kept, removed = [], 0
    if old is not None:
        for group in range(groups):
            keys = read_group(old.file, old.head, group)[0]
            keep = ~np.isin(keys, old.dropped)
            kept.append(keep)
            counts[group] += int(keep.sum())
            removed += len(keys) - int(keep.sum())
    placed = [nearest_centroid(centroids, as_matrix(rows, dim)) for rows in new_rows()]
    for owner in placed:
        counts += np.bincount(owner, minlength=groups)
    starts = np.concatenate([[0], np.cumsum(counts)]).astype("<i8")
    total = int(starts[-1])
    head = Head(dim, total, highest, centroids, starts, _HEAD.size + groups * dim * 4 + (groups + 1) * 8)
    fill = np.zeros(groups, dtype=np.int64)
    with open(path, "wb") as out:
        out.write(_HEAD.pack(MAGIC, dim, groups, total, highest))
        out.write(centroids.astype("<f4").tobytes())
        out.write(starts.tobytes())
        out.truncate(head.data_at + total * head.row_bytes)
        if old is not None:
            for group in range(groups):
                keys, scales, codes = read_group(old.file, old.head, group)
                keep = kept[group]
                _put(out, head, group, fill, keys[keep], scales[keep], codes[keep])
        added = 0
        for rows, owner in zip(new_rows(), placed):
            codes, scales = quantize(as_matrix(rows, dim))
            keys = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            order = np.argsort(owner, kind="stable")
            bounds = np.flatnonzero(np.diff(owner[order])) + 1
            for run in np.split(order, bounds):
                if len(run):
                    _put(out, head, int(owner[run[0]]), fill, keys[run], scales[run], codes[run])
            added += len(rows)
    return added, removed


def _put(out, head: Head, group: int, fill: np.ndarray, keys: np.ndarray, scales: np.ndarray,
         codes: np.ndarray) -> None:
    """Write rows at the next free place of their group's block."""
    if not len(keys):
        return
    offset, rows = head.block(group)
    at = int(fill[group])
    out.seek(offset + at * 8)
    out.write(keys.astype("<i8").tobytes())
    out.seek(offset + rows * 8 + at * 4)
    out.write(scales.astype("<f4").tobytes())
    out.seek(offset + rows * 12 + at * head.dim)
    out.write(np.ascontiguousarray(codes, dtype=np.int8).tobytes())
    fill[group] += len(keys)
