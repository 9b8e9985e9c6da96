"""Builders for graph tests: documents with per-chunk records in a real store, merged by `rebuild`.

Shared by the core tests (edits, layout) and the explorer's GUI tests (imported there as
`core.test_edits_helpers`). Holds no tests itself.
"""

from __future__ import annotations

from pathlib import Path

from docatlas.core.base.keys import entity_key
from docatlas.core.base.records import EntityRecord, RelationRecord
from docatlas.core.graph.merge import rebuild
from docatlas.core.graph.overrides import apply_overrides
from docatlas.core.storage.database import NewChunk, Store

# name -> chunks; a chunk is (text, entities [(name, type, description)],
# relations [(source, target, keywords, description)])
Chunk = tuple[str, list[tuple[str, str, str]], list[tuple[str, str, str, str]]]

CORPUS: dict[str, list[Chunk]] = {
    "lisbon.txt": [
        ("Maria Lopez founded Harbor Analytics in Lisbon.",
         [("Maria Lopez", "person", "Founder of Harbor Analytics."),
          ("Harbor Analytics", "organization", "A data company in Lisbon."),
          ("Lisbon", "location", "Capital of Portugal.")],
         [("Maria Lopez", "Harbor Analytics", "founded", "Maria Lopez founded Harbor Analytics."),
          ("Harbor Analytics", "Lisbon", "based in", "Harbor Analytics is based in Lisbon.")]),
        ("Jonas Weber joined Harbor Analytics.",
         [("Jonas Weber", "person", "Chief engineer."),
          ("Harbor Analytics Ltd", "organization", "Employer of Jonas Weber.")],
         [("Jonas Weber", "Harbor Analytics Ltd", "works at", "Jonas Weber joined Harbor Analytics.")]),
    ],
    "northwind.md": [
        ("Priya Nair leads Northwind Labs, which bought sensors from Harbor Analytics.",
         [("Priya Nair", "person", "Leads Northwind Labs."),
          ("Northwind Labs", "organization", "A research lab."),
          ("Harbor Analytics", "organization", "Sells sensors.")],
         [("Priya Nair", "Northwind Labs", "leads", "Priya Nair leads Northwind Labs."),
          ("Northwind Labs", "Harbor Analytics", "customer", "Northwind Labs bought sensors."),
          ("Northwind Labs", "Harbor Analytics Ltd", "supplier", "Harbor Analytics Ltd supplies sensors.")]),
        ("Tomas Berg audits Northwind Labs.",
         [("Tomas Berg", "person", "An auditor."), ("Northwind Labs", "organization", "Audited yearly.")],
         [("Tomas Berg", "Northwind Labs", "audits", "Tomas Berg audits Northwind Labs.")]),
    ],
}


def open_store(tmp_path: Path) -> Store:
    """A fresh workspace database."""
    return Store(tmp_path / "ws" / "docatlas.sqlite")


def add_document(store: Store, name: str, chunks: list[Chunk]) -> set[str]:
    """Write one document with its chunks and per-chunk records; return the keys it touched."""
    doc_id, touched = store.put_document(path=f"/docs/{name}", title=name.rsplit(".", 1)[0], kind="txt",
                                         content_hash=name, size=1,
                                         chunks=[NewChunk(text, 10, 1, 1) for text, _, _ in chunks])
    ids = [r["id"] for r in store.query("SELECT id FROM chunks WHERE document_id = ? ORDER BY idx", (doc_id,))]
    for chunk_id, (_, entities, relations) in zip(ids, chunks):
        records = [EntityRecord(n, t, d) for n, t, d in entities]
        rels = [RelationRecord(s, t, k, d, 1.0) for s, t, k, d in relations]
        store.finish_chunk(chunk_id, records, rels, status="done", profile="lightrag", model="test", calls=1,
                           keys=[entity_key(e.name) for e in records],
                           relation_keys=[(entity_key(r.source), entity_key(r.target)) for r in rels])
        touched |= {entity_key(e.name) for e in records}
        touched |= {entity_key(x) for r in rels for x in (r.source, r.target)}
    store.refresh_document_status(doc_id)
    return touched


def build_graph(store: Store, corpus: dict[str, list[Chunk]] | None = None) -> Store:
    """Write the corpus and merge its graph."""
    for name, chunks in (corpus or CORPUS).items():
        add_document(store, name, chunks)
    rebuild(store)
    return store


def rebuild_with_overrides(store: Store, keys: set[str] | None = None) -> None:
    """A rebuild (which replays the overrides in its own transaction), then the overrides once more:
    applying them again must change nothing."""
    rebuild(store, keys)
    apply_overrides(store, keys)


def star_corpus(hubs: int, leaves: int) -> dict[str, list[Chunk]]:
    """`hubs` hub entities, each with `leaves` leaf entities, hubs chained: a few hundred nodes."""
    chunks: list[Chunk] = []
    kinds = ["person", "organization", "location", "concept", "event"]
    for h in range(hubs):
        hub = f"Hub {h}"
        ents = [(hub, kinds[h % len(kinds)], f"Hub number {h}.")]
        rels = [(hub, f"Hub {(h + 1) % hubs}", "next", "Chained hubs.")]
        for leaf in range(leaves):
            name = f"Item {h}-{leaf}"
            ents.append((name, kinds[(h + leaf) % len(kinds)], f"Leaf {leaf} of hub {h}."))
            rels.append((hub, name, "has", f"{hub} has {name}."))
        chunks.append((f"Text about hub {h}.", ents, rels))
    return {"stars.txt": chunks}


def entity(store: Store, key: str) -> dict | None:
    """One entity row, or None."""
    rows = store.query("SELECT * FROM entities WHERE key = ?", (key,))
    return rows[0] if rows else None


def relation(store: Store, a: str, b: str) -> dict | None:
    """One relation row (either order), or None."""
    a, b = min(a, b), max(a, b)
    rows = store.query("SELECT * FROM relations WHERE source_key = ? AND target_key = ?", (a, b))
    return rows[0] if rows else None


def snapshot(store: Store) -> tuple[list[tuple], list[tuple]]:
    """Every entity and relation row, sorted, for comparing whole graphs."""
    entities = [tuple(r.values()) for r in store.query("SELECT * FROM entities ORDER BY key")]
    relations = [tuple(r.values()) for r in store.query("SELECT * FROM relations ORDER BY source_key, target_key")]
    return entities, relations
