"""Documents inside documents: an email's attachments and a mailbox's messages stored as
documents of their own, linked to the file they came in (`storage.metadata.link_part`).

A part's path is its parent's path, `#`, and its key (`/mail/a.eml#attachment-1-report.pdf`).
A part of a type DocAtlas does not read is named in one warning per parent; a part that
cannot be read is a listed failure with its sentence; a part the new version of the
parent no longer has leaves the graph with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from docatlas.core.base.paths import shown_name
from docatlas.core.ingest.chunking import iter_chunks
from docatlas.core.ingest.loaders import SUPPORTED_SUFFIXES, Document, DocumentError
from docatlas.core.storage import metadata as stored_metadata
from docatlas.core.storage.database import NewChunk, Store

Chunker = Callable[[Document], Iterable[NewChunk]]


def chunker(chunk_tokens: int, overlap_tokens: int) -> Chunker:
    """A document's chunks as the store takes them."""
    def chunks(document: Document) -> Iterator[NewChunk]:
        for c in iter_chunks(document, chunk_tokens, overlap_tokens):
            yield NewChunk(c.text, c.tokens, c.page_start, c.page_end, c.start, c.end, c.lead)
    return chunks


def store_parts(store: Store, parent_id: int, parent_path: str, document: Document, chunks: Chunker,
                failures: list, warnings: list[str]) -> set[str]:
    """Store every part of `document` (recursively) under `parent_path`; drop the parts it lost.

    Returns the entity keys the replaced or dropped parts supported."""
    before = {path: doc_id for doc_id, path in stored_metadata.documents_under(store, parent_path)}
    kept: set[str] = set()
    touched = _store(store, parent_id, parent_path, document, chunks, failures, warnings, kept)
    for path, doc_id in before.items():
        if path not in kept:
            touched |= store.delete_document(doc_id)
    return touched


def _store(store: Store, parent_id: int, parent_path: str, document: Document, chunks: Chunker,
           failures: list, warnings: list[str], kept: set[str]) -> set[str]:
    touched: set[str] = set()
    unread: list[str] = []
    for part, found in document.parts:
        path = f"{parent_path}#{part.key}"
        if isinstance(found, DocumentError):
            if _suffix(part.name) not in SUPPORTED_SUFFIXES:
                unread.append(part.name)
            else:
                failures.append((path, found.message))
            continue
        digest = found.content_hash
        existing = store.document_by_path(path)
        kept.add(path)
        if existing is not None and existing.content_hash == digest and existing.status != "failed":
            doc_id = existing.id
        else:
            doc_id, keys = store.put_document(path=path, title=found.title, kind=found.kind, content_hash=digest,
                                              size=len(part.data or b""), chunks=chunks(found),
                                              metadata=found.metadata)
            touched |= keys
        stored_metadata.link_part(store, doc_id, parent_id, part.key)
        warnings.extend(w for w in found.warnings if w not in warnings)
        touched |= _store(store, doc_id, path, found, chunks, failures, warnings, kept)
    if unread:
        names = ", ".join(unread[:5]) + (f" and {len(unread) - 5} more" if len(unread) > 5 else "")
        warnings.append(f"{shown_name(document.path)}: {len(unread)} attachment(s) were not read ({names}) "
                        "because DocAtlas does not read their type; save them as a supported type to add them.")
    return touched


def _suffix(name: str) -> str:
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


def drop_parts(store: Store, parent_path: str) -> set[str]:
    """Delete every document that came inside the document at `parent_path`."""
    touched: set[str] = set()
    for doc_id, _ in stored_metadata.documents_under(store, parent_path):
        touched |= store.delete_document(doc_id)
    return touched
