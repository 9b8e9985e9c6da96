"""Finding seeds for a question: vector similarity and full-text hits, fused by rank.

Reciprocal-rank fusion needs no calibration between cosine and BM25 scores: an item's
score is the sum of 1 / (60 + rank) over the lists that hold it.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from docatlas.core.base.errors import Cancelled, LLMError, ModelNotFound
from docatlas.core.base.keys import split_relation_ref
from docatlas.core.retrieval import fulltext, vectors
from docatlas.core.retrieval.keywords import Keywords
from docatlas.core.storage import vectors as stored_vectors
from docatlas.core.storage.database import Store

K = TypeVar("K", bound=Hashable)
RRF_K = 60


@dataclass(frozen=True)
class QueryVectors:
    """Unit query vectors from the embedding model (None when there is none)."""

    model: str = ""
    low: np.ndarray | None = None  # low-level keywords: for entities
    high: np.ndarray | None = None  # high-level keywords: for relations
    question: np.ndarray | None = None  # the question itself: for chunks and reports


def fuse(lists: Iterable[Sequence[K]], limit: int) -> list[K]:
    """Reciprocal-rank fusion of ranked lists; ties keep first-seen order."""
    scores: dict[K, float] = {}
    for ranked in lists:
        for rank, item in enumerate(ranked):
            scores[item] = scores.get(item, 0.0) + 1.0 / (RRF_K + rank + 1)
    order = {item: i for i, item in enumerate(scores)}
    return sorted(scores, key=lambda item: (-scores[item], order[item]))[:limit]


def find_entities(store: Store, phrases: Sequence[str], query: np.ndarray | None, model: str,
                  limit: int, min_similarity: float) -> list[str]:
    """Entity keys for the low-level keywords, best first."""
    by_vector = [ref for ref, _ in vectors.search(store, "entity", model, query, limit, min_similarity)]
    return fuse([by_vector, fulltext.search_entities(store, phrases, limit)], limit)


def find_relations(store: Store, phrases: Sequence[str], query: np.ndarray | None, model: str,
                   limit: int, min_similarity: float) -> list[tuple[str, str]]:
    """Relation key pairs for the high-level keywords, best first."""
    by_vector = [split_relation_ref(ref) for ref, _ in
                 vectors.search(store, "relation", model, query, limit, min_similarity)]
    return fuse([by_vector, fulltext.search_relations(store, phrases, limit)], limit)


def find_chunks(store: Store, phrases: Sequence[str], query: np.ndarray | None, model: str,
                limit: int, min_similarity: float) -> list[int]:
    """Chunk ids similar to the question, best first."""
    by_vector = [int(ref) for ref, _ in vectors.search(store, "chunk", model, query, limit, min_similarity)
                 if ref.isdigit()]
    return fuse([by_vector, fulltext.search_chunks(store, phrases, limit)], limit)


_NEEDS = {
    "local": ("low",), "global": ("high",), "hybrid": ("low", "high"), "naive": ("question",),
    "mix": ("low", "high", "question"), "community": ("question",),
}
_KINDS = {"low": "entity", "high": "relation", "question": "chunk"}


def question_vectors(store: Store, llm: object, model: str, mode: str, question: str,
                     keywords: Keywords | None) -> tuple[QueryVectors, list[str]]:
    """Embed what the mode searches with, in one call; on failure, no vectors and one warning."""
    embed = getattr(llm, "embed", None)
    if not model or embed is None:
        return QueryVectors(), []
    needs = _NEEDS.get(mode, ())
    kinds = ["community"] if mode == "community" else [_KINDS[n] for n in needs]
    if not stored_vectors.has_vectors(store, kinds, model):
        return QueryVectors(model), [f"Nothing is embedded with {model} yet, so this answer used "
                                     "full-text search only."]
    texts = {"question": question,
             "low": ", ".join(keywords.low_level) if keywords and keywords.low_level else question,
             "high": ", ".join(keywords.high_level) if keywords and keywords.high_level else question}
    try:
        result = embed([texts[n] for n in needs], model=model)
    except Cancelled:
        raise
    except LLMError as exc:
        if isinstance(exc, ModelNotFound):
            message = (f"The embedding model {model} is not installed in Ollama, so this answer used "
                       f"full-text search only; run `ollama pull {model}` to add it.")
        else:
            message = f"Embedding the question failed, so this answer used full-text search only ({exc.message})"
        return QueryVectors(model), [message]
    found = {n: vectors.unit(v) for n, v in zip(needs, result)}
    return QueryVectors(model, found.get("low"), found.get("high"), found.get("question")), []
