"""Query benchmark on a large workspace: `docatlas query`, `status` and `--version` as a user
runs them (process start included, peak RSS), then context assembly per mode in-process.

Builds (or reuses) a synthetic workspace written straight into a Store: N entities, 2N
relations, C chunks that mention them, unit embeddings around topics for all three, and their
on-disk vector indexes (built once, timed). The CLI runs talk to our Ollama-API test server
on 127.0.0.1 answering at once (keywords, a question embedding, a short answer), so the
figures are DocAtlas's own work. In-process, keywords and question vectors are precomputed:
the per-mode figures are retrieval (vectors + full-text + graph) and context assembly, and
the vector recall is measured against an exact scan of the stored float32 vectors.

    python bench/query.py [--entities 100000] [--chunks 100000] [--dim 768] [--questions 30]
                          [--runs 5] [--workspace DIR] [--communities]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "desktop"), str(ROOT / "tests")]

import numpy as np
from docatlas.core.base.keys import relation_ref
from docatlas.core.base.paths import database_path
from docatlas.core.base.settings import QuerySettings
from docatlas.core.base.tokens import get_encoding
from docatlas.core.retrieval import vectors
from docatlas.core.retrieval.context import build_context
from docatlas.core.retrieval.keywords import Keywords
from docatlas.core.retrieval.search import QueryVectors
from docatlas.core.storage import vectors as stored_vectors
from docatlas.core.storage.database import Store
from docatlas.core.storage.vectors import bump_versions
from fixtures.ollama_fixture import CHAT_MODEL, default_models
from fixtures.ollama_server import FakeOllama

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


def unit_rows(rng: np.random.Generator, n: int, dim: int, topics: int = 500) -> np.ndarray:
    """Unit vectors around topics, as embeddings of real text are (uniform random vectors have no
    near neighbours at all beyond the one a question was made from)."""
    centres = rng.standard_normal((topics, dim)).astype(np.float32)
    m = 0.8 * centres[rng.integers(0, topics, n)] + 0.6 * rng.standard_normal((n, dim)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def build(path: Path, n_entities: int, n_chunks: int, dim: int, seed: int = 1) -> None:
    """Write the synthetic workspace: documents, chunks, records, graph, embeddings and their indexes."""
    rng, nrng = random.Random(seed), np.random.default_rng(seed)
    words, weights = vocabulary(rng)
    n_relations, n_chunks = 2 * n_entities, max(100, n_chunks)
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


def build_indexes(path: Path) -> None:
    """Bring the on-disk vector indexes in step (built the first time; a reused workspace's are checked)."""
    with Store(path) as store:
        for kind in ("entity", "relation", "chunk"):
            t0, c0 = time.perf_counter(), time.process_time()
            change = vectors.refresh_index(store, kind, MODEL, force=True)
            if change.written:
                print(f"vector index of {kind}: {change.added} vectors added in {time.perf_counter() - t0:.1f} s "
                      f"({time.process_time() - c0:.1f} s CPU)", flush=True)


def exact_top(store: Store, kind: str, query: np.ndarray, limit: int) -> list[str]:
    """The true nearest refs: every stored float32 vector scored here, a batch at a time."""
    best: list[tuple[float, str]] = []
    for batch in stored_vectors.vectors_after(store, kind, MODEL, query.shape[0], 0):
        scores = np.frombuffer(b"".join(r[2] for r in batch), dtype=np.float32).reshape(len(batch), -1) @ query
        best = sorted(best + [(float(s), r[1]) for s, r in zip(scores, batch)], reverse=True)[:limit]
    return [ref for _, ref in best]


def recall(store: Store, asked: list, limit: int = 10) -> dict[str, float]:
    """Per kind, the share of the exact top `limit` that the index search returns."""
    out = {}
    for kind, pick in (("entity", lambda v: v.low), ("relation", lambda v: v.high), ("chunk", lambda v: v.question)):
        hits = total = 0
        for _, _, vecs in asked[:10]:
            found = {r for r, _ in vectors.search(store, kind, MODEL, pick(vecs), limit, -1.0)}
            truth = exact_top(store, kind, pick(vecs), limit)
            hits, total = hits + len(found & set(truth)), total + len(truth)
        out[kind] = hits / max(1, total)
    return out


def bench_responder(request: dict) -> str:
    """Keywords for the keyword prompt, a short cited answer for the rest."""
    text = json.dumps(request.get("messages", ""))
    if "high_level" in text or "keyword" in text.lower():
        names = re.findall(r"How are (.+?) and (.+?) linked", text)
        return json.dumps({"high_level": ["supply", "leadership"], "low_level": list(names[0]) if names else []})
    return "They are linked through a supply contract [1]."


def run_cli(argv: list[str], env: dict[str, str]) -> tuple[float, float, float, int]:
    """(wall s incl. process start, CPU s, peak RSS MB, exit code) of one `docatlas` run.

    Through /usr/bin/time: a child forked from this process would report this process's RSS."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as figures:
        started = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-o", figures.name, "-f", "%U %S %M", sys.executable, "-m",
                               "docatlas", *argv], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wall = time.perf_counter() - started
        user, system, peak_kb = figures.read().split()[-3:]
    if proc.returncode:
        print(f"  {' '.join(argv[2:4])} exited {proc.returncode}: "
              f"{proc.stderr.decode('utf-8', 'replace').strip()[:300]}", file=sys.stderr)
    return wall, float(user) + float(system), int(peak_kb) / 1024, proc.returncode


def cli_figures(workspace: Path, dim: int, runs: int) -> None:
    """`--version`, `status` and `query --mode mix` as separate processes, as a user runs them."""
    models = default_models()
    models[MODEL] = {"context_length": 2048, "family": "nomic-bert", "size": 1, "dim": dim}
    env = {**os.environ, "PYTHONPATH": str(ROOT / "desktop"), "DOCATLAS_CONFIG_DIR": str(workspace / "config"),
           "DOCATLAS_LOG_DIR": str(workspace / "log")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed DocAtlas has its .pyc files; so does this one after run 1
    with Store(database_path(workspace)) as store:  # questions naming two real entities, as a user's would
        names = [r["name"] for r in store.query("SELECT name FROM entities ORDER BY random() LIMIT ?",
                                                (2 * runs + 2,))]
    asked = iter(f"How are {a} and {b} linked?" for a, b in zip(names[::2], names[1::2]))  # a new one each run:
    question = next(asked)  # the answer cache would answer a repeated question without retrieval
    with FakeOllama(models) as fake:
        fake.responder = bench_responder
        env["OLLAMA_HOST"] = fake.url
        commands = {
            "--version": ["--version"],
            "status": ["--data-dir", str(workspace), "status"],
        }
        query = ["--mode", "mix", "--model", CHAT_MODEL, "--embed-model", MODEL]
        print(f"CLI, one process per run ({runs} runs after one to warm the page cache; wall includes Python's "
              f"start; each query a new question, e.g. {question})")
        commands["query --mode mix"] = ["--data-dir", str(workspace), "query", question, *query]
        for name, argv in commands.items():
            run_cli(argv, env)
            if name.startswith("query"):
                results = [run_cli(["--data-dir", str(workspace), "query", next(asked), *query], env)
                           for _ in range(runs)]
            else:
                results = [run_cli(argv, env) for _ in range(runs)]
            walls, cpus, peaks = [r[0] for r in results], [r[1] for r in results], [r[2] for r in results]
            failed = sum(1 for r in results if r[3])
            print(f"  {name:<17} wall median {statistics.median(walls):.2f} s (max {max(walls):.2f}), "
                  f"CPU median {statistics.median(cpus):.2f} s, peak RSS max {max(peaks):.0f} MB"
                  + (f", {failed} failed" if failed else ""))


def main() -> None:
    """Build or reuse the workspace, then time the CLI and context assembly per mode."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=768)
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--runs", type=int, default=5, help="CLI runs per command")
    parser.add_argument("--room", type=int, default=6000, help="context tokens available")
    parser.add_argument("--workspace", type=Path, help="keep (and reuse) the workspace folder here")
    parser.add_argument("--communities", action="store_true", help="also time community detection")
    args = parser.parse_args()
    tmp = None
    if args.workspace is None:
        tmp = tempfile.TemporaryDirectory()
        args.workspace = Path(tmp.name)
    db = database_path(args.workspace)
    if not db.exists():
        build(db, args.entities, args.chunks, args.dim)
    build_indexes(db)
    settings = QuerySettings()
    with Store(db) as store:
        sizes = {r["kind"]: r["n"] for r in store.query("SELECT kind, COUNT(*) AS n FROM embeddings GROUP BY kind")}
        print(f"workspace: {store.counts()['entities']} entities, {store.counts()['relations']} relations, "
              f"{sizes.get('chunk', 0)} chunks; vectors: " + ", ".join(f"{n} {k}" for k, n in sorted(sizes.items()))
              + f", dim {args.dim}", flush=True)
    cli_figures(args.workspace, args.dim, args.runs)
    with Store(db) as store:
        asked = questions(store, args.questions)
        started = time.perf_counter()
        get_encoding()  # tiktoken's encoder, built once per process as the window does before it opens
        print(f"in-process: tokenizer loaded in {time.perf_counter() - started:.2f} s")
        found = recall(store, asked)
        print("vector search recall@10 against an exact scan (10 questions): "
              + ", ".join(f"{kind} {share:.2f}" for kind, share in found.items()))
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
