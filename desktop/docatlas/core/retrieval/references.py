"""References: the documents, pages and chunks an answer drew on, in a form the GUI can open.

Chunks the answer cites (by label, or through a cited entity or relation) come first, then
the other excerpts of the context, then chunks the context's entities and relations were
extracted from.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

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

    def to_json(self) -> dict:
        """`{document, page, chunk}` as the CLI contract says, plus the rest for the GUI."""
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
    return tuple(_load(store, ordered, labels, set(first)))


def _load(store: Store, ids: Sequence[int], labels: dict[int, str], cited: Iterable[int]) -> list[Reference]:
    cited = set(cited)
    rows = lookups.chunk_sources(store, ids)
    meta = metadata_of(store, sorted({r.document_id for r in rows.values()}))
    return [Reference(i, r.document_id, r.path, r.title, r.page_start, r.page_end, r.idx, r.text,
                      labels.get(i, ""), i in cited, byline(meta.get(r.document_id, {})))
            for i in ids if (r := rows.get(i)) is not None]
