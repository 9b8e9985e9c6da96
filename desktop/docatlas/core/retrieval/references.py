"""References: the documents, pages and chunks an answer drew on, in a form the GUI can open.

Chunks the answer cites (by label, or through a cited entity or relation) come first, then
the other excerpts of the context, then chunks the context's entities and relations were
extracted from.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from docatlas.core.base.sentences import answer_sentences, best_sentence
from docatlas.core.retrieval.context import Context
from docatlas.core.storage import context as lookups
from docatlas.core.storage.database import Store
from docatlas.core.storage.metadata import byline, metadata_of

_BRACKETS = re.compile(r"\[([^\[\]]{1,80})\]")
_LABEL = re.compile(r"\b([ERCPK]\d{1,4})\b")


@dataclass(frozen=True)
class Reference:
    """One chunk an answer drew on: open `document` at `page` and find `text` (chunk `chunk`)."""

    chunk: int
    document_id: int
    document: str  # the document's path
    title: str
    page: int | None
    page_end: int | None
    chunk_index: int
    text: str
    label: str = ""  # its label in the context ("C2"), empty when only an entity led to it
    cited: bool = False
    byline: str = ""  # who wrote or sent the document and when ("Ada Lovelace, 2026-03-02")
    start: int | None = None  # the quote's span in the document's extracted text
    end: int | None = None
    quote: str = ""  # the sentence of the chunk that best supports the answer sentences citing it
    page_chunk: int | None = None  # the chunk's first page (`page` is the quote's page)

    def to_json(self) -> dict:
        """`{document, page, chunk, start, end, quote}` as the CLI contract says, plus the rest."""
        return asdict(self)


def cited_labels(answer: str) -> list[str]:
    """Labels cited in square brackets, in order of first citation: "[C1, E2]" gives C1, E2."""
    labels: list[str] = []
    for group in _BRACKETS.findall(answer):
        labels += _LABEL.findall(group)
    return list(dict.fromkeys(labels))


def build_references(store: Store, context: Context, answer: str, limit: int) -> tuple[Reference, ...]:
    """The references of an answer, cited first, at most `limit` (all cited ones are kept)."""
    cited = cited_labels(answer)
    by_label = {c.label: c.id for c in context.chunks if c.label}
    provenance = {e.label: e.chunk_ids for e in context.entities}
    provenance.update({r.label: r.chunk_ids for r in context.relations})
    first: list[int] = []
    for label in cited:
        if label in by_label:
            first.append(by_label[label])
        first += provenance.get(label, ())
    rest = [c.id for c in context.chunks] + [i for ids in provenance.values() for i in ids]
    first = list(dict.fromkeys(first))
    ordered = first + [i for i in dict.fromkeys(rest) if i not in set(first)]
    ordered = ordered[: max(limit, len(first))]
    labels = {c.id: c.label for c in context.chunks}
    claims = _claims(answer, by_label, provenance)
    return tuple(_load(store, ordered, labels, set(first), claims, answer))


def _claims(answer: str, by_label: dict[str, int], provenance: dict[str, Sequence[int]]) -> dict[int, list[str]]:
    """For each chunk, the answer sentences that cite it (directly, or through an entity or relation)."""
    out: dict[int, list[str]] = {}
    for start, end in answer_sentences(answer):
        sentence = answer[start:end]
        for label in cited_labels(sentence):
            for chunk_id in ([by_label[label]] if label in by_label else []) + list(provenance.get(label, ())):
                out.setdefault(chunk_id, []).append(sentence)
    return out


def _load(store: Store, ids: Sequence[int], labels: dict[int, str], cited: Iterable[int],
          claims: dict[int, list[str]], answer: str) -> list[Reference]:
    cited = set(cited)
    rows = lookups.chunk_sources(store, ids)
    meta = metadata_of(store, sorted({r.document_id for r in rows.values()}))
    out = []
    for i in ids:
        if (r := rows.get(i)) is None:
            continue
        span = best_sentence(r.text, claims.get(i) or [answer])
        start = end = None
        quote, page = "", r.page_start
        if span is not None:
            quote = r.text[span[0]:span[1]]
            if r.char_start is not None:
                start, end = r.char_start + span[0], r.char_start + span[1]
                page = lookups.page_of(store, r.document_id, start, r.page_start) if r.page_start is not None else None
        out.append(Reference(i, r.document_id, r.path, r.title, page, r.page_end, r.idx, r.text,
                             labels.get(i, ""), i in cited, byline(meta.get(r.document_id, {})), start, end, quote,
                             r.page_start))
    return out


def unsupported_sentences(answer: str) -> list[str]:
    """The sentences of an answer that cite nothing, when the answer cites at all (an answer
    with no citation anywhere, such as one counted in the graph, is left alone)."""
    sentences = [answer[s:e] for s, e in answer_sentences(answer)]
    if not any(cited_labels(s) for s in sentences):
        return []
    return [s for s in sentences if not cited_labels(s) and any(ch.isalnum() for ch in s)]
