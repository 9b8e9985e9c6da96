"""Query benchmark: time to assemble the context of a question, per mode, on a large graph.

Builds (or reuses) a synthetic workspace written straight into a Store: N entities,
2N relations, chunks that mention them, and random unit embeddings for all three. Keywords
and question embeddings are precomputed, so no model is called: the figures are retrieval
(vectors + full-text + graph lookups) and context assembly within the token budgets.

    python bench/query.py [--entities 100000] [--dim 768] [--questions 30] [--db PATH] [--communities]

Prints, per mode, the median and 90th percentile over the questions, and the one-off cost
of loading the vector matrices into memory (first question after a change).
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "desktop")]

import numpy as np
from docatlas.core.base.keys import relation_ref
from docatlas.core.base.settings import QuerySettings
from docatlas.core.base.tokens import count_tokens
from docatlas.core.retrieval import vectors
from docatlas.core.retrieval.context import build_context
from docatlas.core.retrieval.keywords import Keywords
from docatlas.core.retrieval.search import QueryVectors
from docatlas.core.storage.database import Store
from docatlas.core.storage.vectors import bump_versions

MODES = ("local", "global", "hybrid", "naive", "mix")
MODEL = "bench-embed"
SYLLABLES = ["ka", "lo", "mi", "ra", "ven", "tor", "sil", "an", "mar", "eth", "ul", "dor", "pi", "ze", "qu",
             "bra", "nox", "fel", "gri", "hal", "is", "jo", "ker", "lum", "mos", "nir", "ost", "pel"]
TYPES = ["person", "organization", "location", "event", "concept", "technology"]


def vocabulary(rng: random.Random, size: int = 6000) -> tuple[list[str], list[float]]:
    """Made-up words with Zipf-like frequencies, as in real text (cumulative weights)."""
    words = list(dict.fromkeys("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
                               for _ in range(size * 2)))[:size]
    return words, list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(words))))


def sentence(rng: random.Random, words: list[str], cumulative: list[float], n: int) -> str:
    """n words drawn by frequency."""
    return " ".join(rng.choices(words, cum_weights=cumulative, k=n)).capitalize() + "."


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    m = rng.standard_normal((n, dim)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def build(path: Path, n_entities: int, dim: int, seed: int = 1) -> None:
    """Write the synthetic workspace: documents, chunks, records, graph and embeddings."""
    rng, nrng = random.Random(seed), np.random.default_rng(seed)
    words, weights = vocabulary(rng)
    n_relations, n_chunks = 2 * n_entities, max(100, n_entities // 5)
    names = list(dict.fromkeys(f"{rng.choice(words).capitalize()} {rng.choice(words).capitalize()} {i}"
                               for i in range(n_entities)))
    keys = [n.casefold() for n in names]
    started = time.perf_counter()
    with Store(path) as store, store.transaction() as conn:
        now = time.time()
        docs = max(1, n_chunks // 100)
        conn.executemany(
            "INSERT INTO documents(id, path, title, kind, content_hash, size, status, added_at, updated_at) "
            "VALUES (?, ?, ?, 'txt', ?, 1, 'done', ?, ?)",
            [(d + 1, f"/bench/doc{d}.txt", f"doc{d}", str(d), now, now) for d in range(docs)])
        chunk_rows = []
        for c in range(n_chunks):
            text = " ".join(sentence(rng, words, weights, 18) for _ in range(12))
            chunk_rows.append((c + 1, c % docs + 1, c // docs, text, len(text) // 4, now))
        conn.executemany("INSERT INTO chunks(id, document_id, idx, text, tokens, status, updated_at) "
                         "VALUES (?, ?, ?, ?, ?, 'done', ?)", chunk_rows)
        conn.executemany(
            "INSERT INTO entities(key, name, type, description, mentions) VALUES (?, ?, ?, ?, ?)",
            [(k, n, rng.choice(TYPES), sentence(rng, words, weights, 25), rng.randint(1, 5))
             for k, n in zip(keys, names)])
        conn.executemany("INSERT INTO chunk_entities(chunk_id, key, name, type, description) VALUES (?, ?, ?, '', '')",
                         [(rng.randint(1, n_chunks), k, n) for k, n in zip(keys, names) for _ in range(2)])
        pairs: set[tuple[str, str]] = set()
        hubs = keys[: max(10, n_entities // 100)]  # a few well-connected entities, as real graphs have
        while len(pairs) < n_relations:
            a = rng.choice(hubs) if rng.random() < 0.2 else rng.choice(keys)
            b = rng.choice(keys)
            if a != b:
                pairs.add((a, b) if a < b else (b, a))
        relation_rows = [(s, t, ", ".join(rng.choices(words, cum_weights=weights, k=3)),
                          sentence(rng, words, weights, 20), float(rng.randint(1, 10)), 1) for s, t in sorted(pairs)]
        conn.executemany("INSERT INTO relations(source_key, target_key, keywords, description, weight, mentions) "
                         "VALUES (?, ?, ?, ?, ?, ?)", relation_rows)
        conn.executemany("INSERT INTO chunk_relations(chunk_id, source_key, target_key, source, target, keywords, "
                         "description, strength) VALUES (?, ?, ?, ?, ?, '', '', 1)",
                         [(rng.randint(1, n_chunks), s, t, s, t) for s, t in pairs])
        print(f"graph written in {time.perf_counter() - started:.1f} s", flush=True)
        for kind, refs in (("entity", keys), ("relation", [relation_ref(s, t) for s, t in sorted(pairs)]),
                           ("chunk", [str(i) for i in range(1, n_chunks + 1)])):
            for start in range(0, len(refs), 20000):
                part = refs[start:start + 20000]
                matrix = unit_rows(nrng, len(part), dim)
                conn.executemany(
                    "INSERT INTO embeddings(kind, ref, model, hash, dim, vector) VALUES (?, ?, ?, '', ?, ?)",
                    [(kind, ref, MODEL, dim, row.tobytes()) for ref, row in zip(part, matrix)])
        bump_versions(conn)
        conn.execute("DELETE FROM embed_queue")
        store.set_meta("embed_model", MODEL, conn)
    print(f"workspace built in {time.perf_counter() - started:.1f} s: {n_entities} entities, "
          f"{n_relations} relations, {n_chunks} chunks, dim {dim}", flush=True)


def _near(store: Store, kind: str, ref: str, nrng: np.random.Generator) -> np.ndarray:
    """A query vector close to a stored one (cosine about 0.7), as a real question's would be."""
    blob = store.query("SELECT vector FROM embeddings WHERE kind = ? AND ref = ?", (kind, ref))[0]["vector"]
    base = np.frombuffer(blob, dtype=np.float32)
    noise = nrng.standard_normal(base.shape[0]).astype(np.float32)
    mixed = base + noise / np.linalg.norm(noise)
    return (mixed / np.linalg.norm(mixed)).astype(np.float32)


def questions(store: Store, count: int, seed: int = 2) -> list[tuple[str, Keywords, QueryVectors]]:
    """Questions naming existing entities and themes, with precomputed keywords and vectors."""
    rng, nrng = random.Random(seed), np.random.default_rng(seed)
    entities = store.query("SELECT key, name FROM entities ORDER BY random() LIMIT ?", (count * 3,))
    relations = store.query("SELECT source_key, target_key, keywords FROM relations ORDER BY random() LIMIT ?",
                            (count * 2,))
    chunks = store.query("SELECT id FROM chunks ORDER BY random() LIMIT ?", (count,))
    out = []
    for i in range(count):
        low = [e["name"] for e in entities[3 * i: 3 * i + 3]]
        rels = relations[2 * i: 2 * i + 2]
        high = [w.strip() for r in rels for w in r["keywords"].split(",")][:4]
        vecs = QueryVectors(MODEL, _near(store, "entity", entities[3 * i]["key"], nrng),
                            _near(store, "relation", relation_ref(rels[0]["source_key"], rels[0]["target_key"]), nrng),
                            _near(store, "chunk", str(chunks[i]["id"]), nrng))
        text = f"How are {', '.join(low)} connected to {' and '.join(high)}?"
        out.append((text, Keywords(tuple(high), tuple(low)), vecs))
    rng.shuffle(out)
    return out


def main() -> None:
    """Build or reuse the workspace, then time context assembly per mode."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=768)
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--room", type=int, default=6000, help="context tokens available")
    parser.add_argument("--db", type=Path, help="keep (and reuse) the workspace here")
    parser.add_argument("--communities", action="store_true", help="also time community detection")
    args = parser.parse_args()
    tmp = None
    if args.db is None:
        tmp = tempfile.TemporaryDirectory()
        args.db = Path(tmp.name) / "bench.sqlite"
    if not args.db.exists():
        build(args.db, args.entities, args.dim)
    settings = QuerySettings()
    with Store(args.db) as store:
        asked = questions(store, args.questions)
        started = time.perf_counter()
        count_tokens("warm up")  # loads the tokenizer once per process
        for kind in ("entity", "relation", "chunk"):
            vectors.load_matrix(store, kind, MODEL)
        print(f"one-off per process or change: tokenizer and vector matrices loaded in "
              f"{time.perf_counter() - started:.2f} s")
        print(f"{'mode':<8} {'median ms':>10} {'p90 ms':>8} {'entities':>9} {'relations':>10} {'chunks':>7} "
              f"{'tokens':>7}")
        for mode in MODES:
            times, last = [], None
            for text, keywords, vecs in asked:
                t0 = time.perf_counter()
                last = build_context(store, mode, text, keywords, vecs, settings, args.room)
                times.append((time.perf_counter() - t0) * 1000)
            p90 = statistics.quantiles(times, n=10)[-1] if len(times) > 1 else times[0]
            print(f"{mode:<8} {statistics.median(times):>10.1f} {p90:>8.1f} {len(last.entities):>9} "
                  f"{len(last.relations):>10} {len(last.chunks):>7} {last.tokens:>7}")
        if args.communities:
            from docatlas.core.retrieval.communities import sync_communities

            t0 = time.perf_counter()
            _, new = sync_communities(store, settings.community_min_size)
            print(f"community detection and sync: {time.perf_counter() - t0:.1f} s ({new} communities)")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
