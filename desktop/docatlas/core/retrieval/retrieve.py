"""What each query mode takes from the graph, as ranked ids (no text, no budgets yet).

- local: entities matching the low-level keywords, their relations, their source chunks; then
  the second hop: relations of their neighbours that share a word with the high-level
  keywords ("funded" for "Who funded the person X met?"), so a fact one entity further,
  stated in a document that never names the question's entity, still reaches the context.
- global: relations matching the high-level keywords, their endpoints, their source chunks.
- hybrid: local and global, interleaved.
- naive: chunks similar to the question.
- mix: hybrid plus naive chunks, interleaved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain, zip_longest

from docatlas.core.base.settings import QuerySettings
from docatlas.core.retrieval.keywords import Keywords, content_words, stem
from docatlas.core.retrieval.search import QueryVectors, find_chunks, find_entities, find_relations
from docatlas.core.storage import context as lookups
from docatlas.core.storage.database import Store

GRAPH_MODES = ("local", "global", "hybrid", "mix")
CHUNKS_PER_ITEM = 20  # source chunks read per entity or relation
PROVENANCE = 3  # source chunks remembered per entity or relation, for references
SECOND_HOP_READ = 200  # neighbours' relations read per question, nearest neighbours first
SECOND_HOP_BATCH = 25  # of them read at once


@dataclass
class Found:
    """Ranked ids of one retrieval; `sources` maps an entity key or pair to its chunk ids."""

    entities: list[str] = field(default_factory=list)
    relations: list[tuple[str, str]] = field(default_factory=list)
    chunks: list[int] = field(default_factory=list)
    sources: dict[object, list[int]] = field(default_factory=dict)


def interleave(*lists: Sequence) -> list:
    """Round-robin merge without repeats: a, b, a, b, ..."""
    merged = chain.from_iterable(zip_longest(*lists))
    return list(dict.fromkeys(x for x in merged if x is not None))


def retrieve(store: Store, mode: str, question: str, keywords: Keywords | None, vectors: QueryVectors,
             settings: QuerySettings) -> Found:
    """Ranked entities, relations and chunks for one question in one mode."""
    if mode == "naive":
        return Found(chunks=_similar_chunks(store, question, keywords, vectors, settings))
    kw = keywords or Keywords((), (), "fallback")
    if mode == "local":
        return _local(store, kw, vectors, settings)
    if mode == "global":
        return _global(store, kw, vectors, settings)
    local, glob = _local(store, kw, vectors, settings), _global(store, kw, vectors, settings)
    found = Found(
        entities=interleave(local.entities, glob.entities),
        relations=interleave(local.relations, glob.relations),
        chunks=interleave(local.chunks, glob.chunks),
        sources={**glob.sources, **local.sources},
    )
    if mode == "mix":
        found.chunks = interleave(_similar_chunks(store, question, keywords, vectors, settings), found.chunks)
    return found


def _similar_chunks(store: Store, question: str, keywords: Keywords | None, vectors: QueryVectors,
                    settings: QuerySettings) -> list[int]:
    phrases = [question, *(keywords.low_level if keywords else ())]
    return find_chunks(store, phrases, vectors.question, vectors.model, settings.chunk_top_k,
                       settings.min_similarity)


def _local(store: Store, kw: Keywords, vectors: QueryVectors, settings: QuerySettings) -> Found:
    keys = find_entities(store, kw.low_level, vectors.low, vectors.model, settings.top_k,
                         settings.min_similarity)
    sources: dict = dict(_entity_chunks(store, keys))
    first = _relations_of(store, keys, settings.top_k * 2)
    second = _second_hop(store, keys, first, kw.high_level, settings.top_k // 2)
    sources.update(_relation_chunks(store, second))
    chunks = interleave(rank_chunks(keys, sources), rank_chunks(second, sources))
    neighbours = [k for pair in second for k in pair if k not in keys]
    return Found(entities=list(dict.fromkeys([*keys, *neighbours])),
                 relations=list(dict.fromkeys([*first[: settings.top_k], *second, *first[settings.top_k:]])),
                 chunks=chunks, sources=sources)


def _second_hop(store: Store, keys: list[str], first: list[tuple[str, str]], themes: Sequence[str],
                limit: int) -> list[tuple[str, str]]:
    """Relations of the seeds' neighbours (not the seeds' own) whose words share a stem with the themes."""
    wanted = {stem(w) for phrase in themes for w in content_words(phrase)}
    seeds = set(keys)
    neighbours = list(dict.fromkeys(k for pair in first for k in pair if k not in seeds))[:limit * 2]
    if not wanted or not neighbours or limit <= 0:
        return []
    rank = {k: i for i, k in enumerate(neighbours)}
    known = set(first)
    rows = [r for r in lookups.relations_touching(store, neighbours) if (r[0], r[1]) not in known
            and not (seeds & {r[0], r[1]})]
    rows.sort(key=lambda r: (min(rank.get(r[0], len(rank)), rank.get(r[1], len(rank))), -r[2]))
    found: list[tuple[str, str]] = []
    read = [(s, t) for s, t, _ in rows[:SECOND_HOP_READ]]
    for at in range(0, len(read), SECOND_HOP_BATCH):  # a read per batch, until enough are found
        batch = read[at:at + SECOND_HOP_BATCH]
        texts = lookups.relation_texts(store, batch)
        for s, t in batch:
            text = texts.get((s, t))
            if text is not None and wanted & {stem(w) for w in content_words(f"{text.keywords} {text.description}")}:
                found.append((s, t))
                if len(found) >= limit:
                    return found
    return found


def _global(store: Store, kw: Keywords, vectors: QueryVectors, settings: QuerySettings) -> Found:
    pairs = find_relations(store, kw.high_level, vectors.high, vectors.model, settings.top_k,
                           settings.min_similarity)
    keys = list(dict.fromkeys(k for pair in pairs for k in pair))
    sources = _relation_chunks(store, pairs)
    return Found(entities=keys, relations=pairs, chunks=rank_chunks(pairs, sources), sources=dict(sources))


def _relations_of(store: Store, keys: list[str], limit: int) -> list[tuple[str, str]]:
    """Relations touching the entities: both ends found first, then by weight."""
    if not keys:
        return []
    rows = lookups.relations_touching(store, keys)
    rank = {k: i for i, k in enumerate(keys)}
    big = len(keys)

    def order(row: tuple[str, str, float]) -> tuple:
        s, t = rank.get(row[0], big), rank.get(row[1], big)
        return (-((s < big) + (t < big)), min(s, t), -row[2])

    rows.sort(key=order)
    return [(source, target) for source, target, _ in rows[:limit]]


def _entity_chunks(store: Store, keys: list[str]) -> dict[str, list[int]]:
    return {key: lookups.entity_chunk_ids(store, key, CHUNKS_PER_ITEM) for key in keys}


def _relation_chunks(store: Store, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], list[int]]:
    return {(s, t): lookups.relation_chunk_ids(store, s, t, CHUNKS_PER_ITEM) for s, t in pairs}


def rank_chunks(items: Sequence, sources: dict) -> list[int]:
    """Chunks backing many of the best items come first."""
    score: dict[int, float] = {}
    for rank, item in enumerate(items):
        for chunk_id in sources.get(item, ()):
            score[chunk_id] = score.get(chunk_id, 0.0) + 1.0 / (rank + 1)
    order = {c: i for i, c in enumerate(score)}
    return sorted(score, key=lambda c: (-score[c], order[c]))

