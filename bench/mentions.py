"""Mentions benchmark: the cost of locating mentions, per chunk and for a whole `rebuild`.

Builds a real SQLite workspace of `--chunks` chunks (default 5,000) of about 1,200 tokens
of ordinary sentences, each with `--entities` entity records (default 15) and `--relations`
relation records (default 10) whose names occur in it, then measures:

- `relocate_all`: every chunk's mentions located again, as `rebuild` does;
- the JSON export's mentions (`all_mentions`, 20 per item).

    python bench/mentions.py
    python bench/mentions.py --chunks 20000
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "desktop"))

from docatlas.core.base.keys import entity_key
from docatlas.core.storage.database import Store
from docatlas.core.storage.mentions import all_mentions, relocate_all

FIRST = ["Ada", "Alan", "Grace", "Edsger", "Barbara", "Donald", "Frances", "John", "Niklaus", "Tony"]
LAST = ["Byron", "Turing", "Hopper", "Dijkstra", "Liskov", "Knuth", "Allen", "Backus", "Wirth", "Hoare"]


def build(store: Store, chunks: int, entities: int, relations: int, rng: random.Random) -> None:
    """Write the chunks and their records straight into the tables (no mentions yet)."""
    people = [f"{f} {last}" for f in FIRST for last in LAST]
    with store.transaction() as conn:
        conn.execute("INSERT INTO documents(path, title, kind, content_hash, size, status, added_at, updated_at)"
                     " VALUES ('/bench/a.txt', 'a', 'txt', 'h', 1, 'done', 0, 0)")
        for index in range(chunks):
            names = rng.sample(people, entities)
            sentences = [f"In year {1900 + i} {rng.choice(names)} wrote to {rng.choice(names)} about problem {i}."
                         for i in range(90)]
            text = " ".join(sentences)
            chunk_id = conn.execute(
                "INSERT INTO chunks(document_id, idx, text, tokens, status, updated_at, char_start, char_end)"
                " VALUES (1, ?, ?, 1200, 'done', 0, ?, ?)", (index, text, index * 6000, index * 6000 + len(text))
            ).lastrowid
            conn.executemany("INSERT INTO chunk_entities(chunk_id, key, name, type, description) "
                             "VALUES (?, ?, ?, 'person', 'x')", [(chunk_id, entity_key(n), n) for n in names])
            pairs = [rng.sample(names, 2) for _ in range(relations)]
            conn.executemany("INSERT INTO chunk_relations(chunk_id, source_key, target_key, source, target, "
                             "keywords, description, strength) VALUES (?, ?, ?, ?, ?, 'wrote', 'x', 1)",
                             [(chunk_id, entity_key(a), entity_key(b), a, b) for a, b in pairs])


def main() -> int:
    """Build, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=5000)
    parser.add_argument("--entities", type=int, default=15)
    parser.add_argument("--relations", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "docatlas.sqlite") as store:
        build(store, args.chunks, args.entities, args.relations, random.Random(1))
        began = time.perf_counter()
        located = relocate_all(store)
        relocate_s = time.perf_counter() - began
        mentions = store.query("SELECT COUNT(*) AS n FROM chunk_mentions")[0]["n"]
        began = time.perf_counter()
        quoted = all_mentions(store, 20)
        export_s = time.perf_counter() - began
    print(f"{args.chunks:,} chunks of about 1,200 tokens, {args.entities} entity and {args.relations} "
          "relation records each")
    print(f"relocate_all (rebuild): {located:,} chunks, {mentions:,} mentions in {relocate_s:.1f} s "
          f"({relocate_s / located * 1000:.2f} ms a chunk)")
    print(f"export mentions: {len(quoted):,} items quoted in {export_s:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
