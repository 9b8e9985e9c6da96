"""What the concept layer costs: finding names, storing their records, merging them, at real sizes.

    python bench/concepts.py [--documents 1000] [--chunks-per-document 4]

Documents are cut from the public-domain book in ../shared/corpus/books (each document a run of
chunks of about 1,200 tokens, from its own offset, so names repeat across documents as in a
real collection). Prints, for the size it ran at: the finder's time alone, the time to store
the documents in a real SQLite file with their concept records, the merge that derives the
concept graph, the counts it gives, and the process's peak RSS. Nothing else is measured.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "desktop"))

from docatlas.core.base.concepts import find_concepts
from docatlas.core.graph.merge import rebuild
from docatlas.core.storage.database import NewChunk, Store

BOOK = ROOT.parent / "shared" / "corpus" / "books" / "a_christmas_carol.txt"
CHUNK_CHARS = 5000  # about 1,200 tokens of English


def documents(count: int, per_document: int) -> list[list[str]]:
    """`count` documents of `per_document` chunks, each starting at its own place in the book."""
    text = BOOK.read_text(encoding="utf-8")
    span = CHUNK_CHARS * per_document
    step = max(1, (len(text) - span) // max(count, 1))
    return [[text[i * step + k * CHUNK_CHARS: i * step + (k + 1) * CHUNK_CHARS] for k in range(per_document)]
            for i in range(count)]


def main() -> int:
    """Run the bench and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument("--chunks-per-document", type=int, default=4)
    args = parser.parse_args()
    docs = documents(args.documents, args.chunks_per_document)
    chunks = sum(len(d) for d in docs)

    start = time.perf_counter()
    names = links = 0
    for doc in docs:
        for text in doc:
            found = find_concepts(text)
            names, links = names + len(found.names), links + len(found.links)
    finder = time.perf_counter() - start

    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "docatlas.sqlite") as store:
        start = time.perf_counter()
        keys: set[str] = set()
        for i, doc in enumerate(docs):
            _, touched = store.put_document(
                path=f"/bench/doc{i:05d}.txt", title=f"doc{i:05d}", kind="txt", content_hash=str(i),
                size=sum(map(len, doc)),
                chunks=(NewChunk(text=t, tokens=1200, page_start=None, page_end=None) for t in doc))
            keys |= touched
        stored = time.perf_counter() - start
        start = time.perf_counter()
        rebuild(store, keys, None, provisional=True)
        merged = time.perf_counter() - start
        counts = store.counts()
    per_thousand = 1000 / args.documents
    print(f"size: {args.documents:,} documents, {chunks:,} chunks of {CHUNK_CHARS:,} characters")
    print(f"finder alone: {finder:.2f} s ({finder * per_thousand:.2f} s per 1,000 documents, "
          f"{finder * 1000 / chunks:.2f} ms a chunk); {names:,} names and {links:,} links over the chunks")
    print(f"store with concept records: {stored:.2f} s ({stored * per_thousand:.2f} s per 1,000 documents)")
    print(f"merge of the concept graph: {merged:.2f} s -> {counts['entities']:,} entities, "
          f"{counts['relations']:,} relations")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
