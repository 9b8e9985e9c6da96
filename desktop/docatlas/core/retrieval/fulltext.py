"""Full-text search (SQLite FTS5, BM25) over entity names and descriptions, relation
keywords and descriptions, and chunk text: the second signal beside the vectors."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from docatlas.core.retrieval.keywords import WORD, content_words
from docatlas.core.storage import fulltext as stored
from docatlas.core.storage.database import Store

log = logging.getLogger("docatlas.retrieval")

MAX_TERMS = 16
COMMON = 1000  # a term in this many rows or more is left out of the search


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def terms_of(phrases: Iterable[str]) -> list[str]:
    """FTS5 terms: each phrase as written (when several words) and each content word, quoted."""
    terms: list[str] = []
    for phrase in phrases:
        words = [w.casefold() for w in content_words(phrase)]
        every = [w.casefold() for w in WORD.findall(phrase)]
        if len(words) > 1 and len(every) <= 6:  # the phrase as written, for exact hits
            terms.append(_quote(" ".join(every)))
        terms += [_quote(w) for w in words]
    return list(dict.fromkeys(terms))[:MAX_TERMS]


def match_expression(phrases: Iterable[str]) -> str | None:
    """An FTS5 query: each phrase (when several words) and each content word, OR-ed."""
    return " OR ".join(terms_of(phrases)) or None


def _matches(store: Store, table: str, expression: str) -> int:
    """How many rows match, counting no further than COMMON."""
    return stored.count_matches(store, table, expression, COMMON)


def selective_expression(store: Store, table: str, terms: list[str]) -> str | None:
    """The OR of the terms matching fewer than COMMON rows; failing that, the AND of the others.

    Ranking every row of a very common word is slow on a large graph and tells little, like
    a stop word; counting stops at COMMON, so sorting the terms out is cheap.
    """
    rare, common = [], []
    for term in terms:
        n = _matches(store, table, term)
        if n >= COMMON:
            common.append(term)
        elif n:
            rare.append(term)
    if rare:
        return " OR ".join(rare)
    if len(common) > 1 and _matches(store, table, " AND ".join(common)) < COMMON:
        return " AND ".join(common)
    return None


def _ranked_rowids(store: Store, table: str, phrases: Iterable[str], limit: int) -> list[int]:
    terms = terms_of(phrases)
    if not terms or limit <= 0:
        return []
    try:
        expression = selective_expression(store, table, terms)
        if expression is None:
            return []
        return stored.ranked_rowids(store, table, expression, limit)
    except stored.ExpressionRefused as exc:  # an expression FTS5 refuses: no text hits
        log.warning("full-text search failed for %r: %s", terms, exc)
        return []


def _in_order(ids: list[int], found: dict[int, object]) -> list:
    return [found[i] for i in ids if i in found]


def search_entities(store: Store, phrases: Iterable[str], limit: int) -> list[str]:
    """Entity keys whose name or description match, best first."""
    ids = _ranked_rowids(store, "entities_fts", phrases, limit)
    if not ids:
        return []
    return _in_order(ids, stored.entity_keys(store, ids))


def search_relations(store: Store, phrases: Iterable[str], limit: int) -> list[tuple[str, str]]:
    """Relation (source_key, target_key) pairs whose keywords or description match, best first."""
    ids = _ranked_rowids(store, "relations_fts", phrases, limit)
    if not ids:
        return []
    return _in_order(ids, stored.relation_pairs(store, ids))


def search_chunks(store: Store, phrases: Iterable[str], limit: int) -> list[int]:
    """Chunk ids whose text matches, best first."""
    return _ranked_rowids(store, "chunks_fts", phrases, limit)
