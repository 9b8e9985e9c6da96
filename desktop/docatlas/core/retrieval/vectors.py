"""Embedding vectors in SQLite (float32 blobs, unit length) and fast search over them.

Search loads one kind's vectors (entity, relation, chunk, community) for one model into
a numpy matrix, kept in memory until the vectors change (`meta.vectors_version`), and
ranks by cosine with a matrix-vector product (two-stage on large matrices, see
`VectorMatrix`).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from docatlas.core.storage import vectors as stored
from docatlas.core.storage.database import Store

APPROXIMATE_FROM = 50_000  # rows; below this every search scores every row
PROJECTED = 192  # directions kept for picking candidates
CANDIDATES = 1000  # rows scored exactly per search (at least)


def pack(vector: Sequence[float]) -> bytes:
    """A vector as a unit-length float32 blob."""
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return (array / norm if norm > 0 else array).astype(np.float32).tobytes()


def unpack(blob: bytes) -> np.ndarray:
    """The float32 vector of a blob."""
    return np.frombuffer(blob, dtype=np.float32)


def unit(vector: Sequence[float]) -> np.ndarray:
    """A query vector scaled to unit length (float32)."""
    return unpack(pack(vector))


@dataclass(frozen=True)
class VectorMatrix:
    """All vectors of one kind and model: refs[i] is row i of the unit-length matrix.

    A large matrix also keeps a projection of every row onto its `PROJECTED` main
    directions (`basis`, from an SVD of a sample). Search then reads the small projection to
    pick candidates and scores only those exactly: memory traffic, which bounds a brute-force
    scan, drops about sixfold, and the exact rescoring keeps the ranking of what is found.
    """

    refs: tuple[str, ...]
    matrix: np.ndarray
    basis: np.ndarray | None = None  # (dim, PROJECTED)
    projected: np.ndarray | None = None  # (rows, PROJECTED)

    @property
    def dim(self) -> int:
        """Vector length."""
        return int(self.matrix.shape[1]) if self.matrix.ndim == 2 else 0

    def search(self, query: np.ndarray, limit: int, min_similarity: float = -1.0) -> list[tuple[str, float]]:
        """The `limit` best (ref, cosine) pairs at or above `min_similarity`, best first."""
        if not self.refs or limit <= 0 or query.shape[0] != self.dim:
            return []
        if self.basis is not None and self.projected is not None:
            pool = max(CANDIDATES, 8 * limit)
            rough = self.projected @ (query @ self.basis)
            rows = np.argpartition(-rough, pool - 1)[:pool] if len(rough) > pool else np.arange(len(rough))
            scores = self.matrix[rows] @ query
        else:
            rows, scores = None, self.matrix @ query
        top = np.argpartition(-scores, limit - 1)[:limit] if len(scores) > limit else np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        index = top if rows is None else rows[top]
        return [(self.refs[i], float(s)) for i, s in zip(index, scores[top]) if s >= min_similarity]


def with_projection(matrix: VectorMatrix) -> VectorMatrix:
    """The matrix with its projection added when it is large enough to need one."""
    rows, dim = matrix.matrix.shape if matrix.matrix.ndim == 2 else (0, 0)
    if rows < APPROXIMATE_FROM or dim <= 2 * PROJECTED:
        return matrix
    sample = matrix.matrix[np.random.default_rng(0).choice(rows, min(rows, 4096), replace=False)]
    _, eigenvectors = np.linalg.eigh(sample.T @ sample)  # the sample's main directions, ascending
    basis = np.ascontiguousarray(eigenvectors[:, ::-1][:, :PROJECTED], dtype=np.float32)
    return VectorMatrix(matrix.refs, matrix.matrix, basis, np.ascontiguousarray(matrix.matrix @ basis))


_cache: dict[tuple[str, str, str], tuple[str, VectorMatrix]] = {}
_cache_lock = threading.Lock()


def load_matrix(store: Store, kind: str, model: str) -> VectorMatrix:
    """The vectors of `kind` made by `model`, from memory unless they changed since."""
    version = store.get_meta("vectors_version", "0") or "0"
    key = (str(store.path.resolve()), kind, model)
    with _cache_lock:
        hit = _cache.get(key)
    if hit is not None and hit[0] == version:
        return hit[1]
    matrix = with_projection(_matrix(stored.vector_rows(store, kind, model)))
    with _cache_lock:
        _cache[key] = (version, matrix)
    return matrix


def _matrix(rows: list[tuple[str, int, bytes]]) -> VectorMatrix:
    if not rows:
        return VectorMatrix((), np.zeros((0, 0), dtype=np.float32))
    dim = Counter(r[1] for r in rows).most_common(1)[0][0]  # a stray other size is skipped
    kept = [r for r in rows if r[1] == dim] if any(r[1] != dim for r in rows) else rows
    matrix = np.empty((len(kept), dim), dtype=np.float32)
    flat = memoryview(matrix.reshape(-1).view(np.uint8))
    width = dim * 4
    for i, row in enumerate(kept):
        flat[i * width:(i + 1) * width] = row[2]
    return VectorMatrix(tuple(r[0] for r in kept), matrix)


def forget_cached(store: Store | None = None) -> None:
    """Drop the in-memory matrices (of one store, or all)."""
    with _cache_lock:
        if store is None:
            _cache.clear()
            return
        prefix = str(store.path.resolve())
        for key in [k for k in _cache if k[0] == prefix]:
            del _cache[key]


def search(store: Store, kind: str, model: str, query: np.ndarray | None, limit: int,
           min_similarity: float) -> list[tuple[str, float]]:
    """Nearest stored vectors of `kind` to a unit query vector; empty without one."""
    if query is None:
        return []
    return load_matrix(store, kind, model).search(query, limit, min_similarity)
