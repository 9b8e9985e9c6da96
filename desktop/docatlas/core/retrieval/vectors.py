"""Embedding vectors: packed as unit-length float32 blobs for SQLite, searched through the index.

`search` is what retrieval calls; the on-disk index behind it is `vector_index` (a question
never loads all vectors: it reads the nearest groups of the index file and the few blobs it rescores).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from docatlas.core.retrieval import vector_index
from docatlas.core.storage.database import Store


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


def search(store: Store, kind: str, model: str, query: np.ndarray | None, limit: int,
           min_similarity: float) -> list[tuple[str, float]]:
    """Nearest stored vectors of `kind` to a unit query vector, (ref, cosine) best first; empty without one."""
    if query is None:
        return []
    return vector_index.search(store, kind, model, query, limit, min_similarity)


def refresh_index(store: Store, kind: str, model: str, *, force: bool = False) -> vector_index.IndexChange:
    """Bring the on-disk index of `kind` and `model` in step with the stored vectors (writers call it)."""
    return vector_index.refresh(store, kind, model, force=force)
