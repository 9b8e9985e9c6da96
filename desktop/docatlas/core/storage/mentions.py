"""Mentions (`chunk_mentions`): where a chunk's text names its entities, and the sentences
that name both ends of its relations, located from the records without a model.

`relocate` re-derives a chunk's mentions from its records and is called wherever records
are written (a finished chunk, re-extraction, `rebuild`, an accepted record), in the same
transaction. Reads give each mention its document, page and quote (the sentence holding it).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from docatlas.core.base.sentences import sentence_spans
from docatlas.core.storage.database import Store
from docatlas.core.storage.locate import relocate

__all__ = ["Mention", "all_mentions", "mentions", "relocate"]


@dataclass(frozen=True)
class Mention:
    """Where a record's text is: the chunk, the document, the page and the sentence quoted."""

    chunk_id: int
    document_id: int
    document: str  # the document's path
    page: int | None
    start: int  # span of the mention in the chunk's text
    end: int
    quote: str  # the sentence holding it


_ENTITY = ("SELECT m.chunk_id, m.start, m.end, r.key AS key, '' AS target_key, c.text, c.document_id,"
           " c.char_start, c.page_start, d.path FROM chunk_mentions m"
           " JOIN chunk_entities r ON m.kind = 'entity' AND r.rowid = m.record")
_RELATION = ("SELECT m.chunk_id, m.start, m.end, r.source_key AS key, r.target_key AS target_key, c.text,"
             " c.document_id, c.char_start, c.page_start, d.path FROM chunk_mentions m"
             " JOIN chunk_relations r ON m.kind = 'relation' AND r.rowid = m.record")
_PLACE = " JOIN chunks c ON c.id = m.chunk_id JOIN documents d ON d.id = c.document_id"


def mentions(store: Store, key: str, target_key: str = "", limit: int = 50) -> list[Mention]:
    """The mentions of an entity (or of the relation between `key` and `target_key`, either way)."""
    if target_key:
        sql = (_RELATION + _PLACE + " WHERE (r.source_key = ? AND r.target_key = ?)"
               " OR (r.source_key = ? AND r.target_key = ?)")
        params: list = [key, target_key, target_key, key]
    else:
        sql, params = _ENTITY + _PLACE + " WHERE r.key = ?", [key]
    rows = store.query(sql + " ORDER BY c.document_id, c.idx, m.start LIMIT ?", [*params, limit])
    return _dedup(_quoted(store, rows))


def all_mentions(store: Store, per_item: int) -> dict[tuple[str, str], list[dict]]:
    """Up to `per_item` mentions of every entity (key, "") and relation (source, target), as
    `{document, page, quote}`, for the export; read one chunk at a time."""
    out: dict[tuple[str, str], list[dict]] = {}
    pages: dict[int, tuple[list[int], list[int]]] = {}
    chunks = store.query("SELECT c.id AS chunk_id, c.document_id, c.char_start, c.page_start, d.path "
                         "FROM chunks c JOIN documents d ON d.id = c.document_id "
                         "WHERE c.id IN (SELECT chunk_id FROM chunk_mentions) ORDER BY c.document_id, c.idx")
    for chunk in chunks:
        rows = store.query(
            "SELECT m.start, m.end, r.key AS key, '' AS target_key FROM chunk_mentions m JOIN chunk_entities r"
            " ON m.kind = 'entity' AND r.rowid = m.record WHERE m.chunk_id = ? UNION ALL"
            " SELECT m.start, m.end, r.source_key, r.target_key FROM chunk_mentions m JOIN chunk_relations r"
            " ON m.kind = 'relation' AND r.rowid = m.record WHERE m.chunk_id = ? ORDER BY 1",
            (chunk["chunk_id"], chunk["chunk_id"]))
        wanted = [r for r in rows if len(out.setdefault((r["key"], r["target_key"]), [])) < per_item]
        if not wanted:
            continue
        text = store.query("SELECT text FROM chunks WHERE id = ?", (chunk["chunk_id"],))[0]["text"]
        for row, mention in zip(wanted, _quoted(store, [{**chunk, **r, "text": text} for r in wanted], pages)):
            item = out[(row["key"], row["target_key"])]
            if len(item) < per_item and not any(m["quote"] == mention.quote for m in item):
                item.append({"document": mention.document, "page": mention.page, "quote": mention.quote})
    return out


def _dedup(found: list[Mention]) -> list[Mention]:
    """One mention a sentence (two mentions in one sentence quote it once)."""
    seen, out = set(), []
    for m in found:
        if (m.chunk_id, m.quote) not in seen:
            seen.add((m.chunk_id, m.quote))
            out.append(m)
    return out


def _quoted(store: Store, rows: Sequence[dict], pages: dict | None = None) -> list[Mention]:
    """Each row as a Mention with its sentence and page (`pages`: page starts read so far)."""
    pages = {} if pages is None else pages
    out = []
    split: dict[int, tuple[list[int], list[tuple[int, int]]]] = {}  # chunk -> its sentences
    for r in rows:
        if r["chunk_id"] not in split:
            spans = sentence_spans(r["text"])
            split[r["chunk_id"]] = ([s for s, _ in spans], spans)
        starts, spans = split[r["chunk_id"]]
        at = bisect_right(starts, r["start"]) - 1
        sentence = spans[at] if at >= 0 and r["start"] < spans[at][1] else (r["start"], r["end"])
        page = r["page_start"]
        if page is not None and r["char_start"] is not None:
            if r["document_id"] not in pages:
                found = store.query("SELECT number, start FROM document_pages WHERE document_id = ? "
                                    "ORDER BY start", (r["document_id"],))
                pages[r["document_id"]] = ([p["start"] for p in found], [p["number"] for p in found])
            starts, numbers = pages[r["document_id"]]
            at = bisect_right(starts, r["char_start"] + r["start"]) - 1
            page = numbers[at] if at >= 0 else page
        out.append(Mention(r["chunk_id"], r["document_id"], r["path"], page, r["start"], r["end"],
                           r["text"][sentence[0]:sentence[1]]))
    return out


def relocate_all(store: Store, batch: int = 500) -> int:
    """Locate the mentions of every chunk that has records again (`rebuild`); how many chunks."""
    ids = [r["chunk_id"] for r in store.query(
        "SELECT chunk_id FROM chunk_entities UNION SELECT chunk_id FROM chunk_relations ORDER BY 1")]
    for at in range(0, len(ids), batch):
        with store.transaction() as conn:
            for chunk_id in ids[at:at + batch]:
                relocate(conn, chunk_id)
    return len(ids)
