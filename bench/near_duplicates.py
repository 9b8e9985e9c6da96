"""Near-duplicate chunks: model calls and time with and without forwarded copies, and what finding them costs.

Makes N documents of about four chunks each (known-facts-like prose with generated names) and a
forwarded copy of each (a new first line and a footer around the same body), then ingests the
originals alone and the originals with their copies into fresh workspaces against the test server
(the scripted fact model over real HTTP), counting the /api/chat calls it answered. It also times
the fingerprinting alone (`base.fingerprints` on every chunk text) and, when datasketch is
importable (`pip install datasketch`: it needs SciPy), datasketch's MinHash on the same shingles and its in-memory LSH,
and the interest order's ranking of the stored chunks. Prints what it measured and peak RSS.

    python bench/near_duplicates.py --documents 1000
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "desktop"), str(ROOT / "tests")]

from docatlas.core.base.fingerprints import fingerprint, shingles
from docatlas.core.base.settings import Settings
from docatlas.core.jobs.ingest import index
from docatlas.core.jobs.order import Work
from docatlas.core.storage.database import Store
from fixtures.fact_model import fact_responder
from fixtures.known_facts import FILLER, _word
from fixtures.ollama_fixture import default_models
from fixtures.ollama_server import FakeOllama


def document(rng: random.Random, paragraphs: int = 16) -> str:
    """About four chunks of prose, each paragraph naming two people and a fact between them."""
    parts = []
    for _ in range(paragraphs):
        a, b = f"{_word(rng)} {_word(rng)}", f"{_word(rng)} {_word(rng)}"
        filler = rng.sample(FILLER, 8)
        parts.append(" ".join([*filler[:4], f"{a} met {b}.", *filler[4:], f"{b} {rng.choice(['funded', 'visited'])} "
                               f"{a}."] + [f"The note numbered {rng.randint(1, 10**6)} was read aloud."] * 3))
    return "\n\n".join(parts) + "\n"


def forwarded(text: str, number: int) -> str:
    return (f"Forwarded by Kestrel Moor on {number % 28 + 1} May 2026, for the file.\n\n{text}\n"
            "This copy was kept by the Ostrava Records Desk; ask the desk for the signed original.\n")


def run(server: FakeOllama, folder: Path, workspace: Path) -> tuple[int, float, int, int]:
    """(chat calls, seconds, chunks, copies reused) of one ingest."""
    before = len([r for r in server.requests if r["path"] == "/api/chat"])
    settings = Settings().with_overrides(ollama__host=server.host, ollama__embed_model="")
    started = time.perf_counter()
    with Store(workspace / "docatlas.sqlite") as store:
        last = list(index(store, [folder], settings))[-1]
        chunks = store.counts()["chunks"]
    seconds = time.perf_counter() - started
    calls = len([r for r in server.requests if r["path"] == "/api/chat"]) - before
    return calls, seconds, chunks, last.chunks_copied


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=1000)
    args = parser.parse_args()
    rng = random.Random(29)
    bodies = [document(rng) for _ in range(args.documents)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        alone, both = root / "alone", root / "both"
        for folder in (alone, both / "a", both / "b"):
            folder.mkdir(parents=True)
        for number, body in enumerate(bodies):
            (alone / f"doc{number:05d}.txt").write_text(body, encoding="utf-8")
            (both / "a" / f"doc{number:05d}.txt").write_text(body, encoding="utf-8")
            (both / "b" / f"fwd{number:05d}.txt").write_text(forwarded(body, number), encoding="utf-8")
        server = FakeOllama(default_models()).start()
        server.responder = fact_responder
        try:
            calls_a, seconds_a, chunks_a, _ = run(server, alone, root / "ws-alone")
            calls_b, seconds_b, chunks_b, copied = run(server, both, root / "ws-both")
        finally:
            server.stop()
        with Store(root / "ws-both" / "docatlas.sqlite") as store:
            texts = [r["text"] for r in store.query("SELECT text FROM chunks ORDER BY id")]
            started = time.perf_counter()
            work = Work(store)
            work.extend(_rows(store))
            ranked = time.perf_counter() - started
    started = time.perf_counter()
    for text in texts:
        fingerprint(text)
    ours = time.perf_counter() - started
    print(f"{args.documents:,} documents: {chunks_a:,} chunks alone, {chunks_b:,} with a forwarded copy of each")
    print(f"  model calls: {calls_a:,} alone, {calls_b:,} with the copies ({calls_b / calls_a - 1:+.1%}); "
          f"{copied:,} chunks took their original's records")
    print(f"  ingest: {seconds_a:.1f} s alone, {seconds_b:.1f} s with the copies (test server, no model time)")
    print(f"  fingerprints: {ours:.2f} s for {len(texts):,} chunks ({ours / len(texts) * 1000:.2f} ms a chunk)")
    print(f"  interest order: {ranked * 1000:.0f} ms to rank {len(texts):,} chunks (two queries)")
    try:
        from datasketch import MinHash
    except ImportError:
        print("  datasketch: not installed (pip install datasketch) - not compared")
    else:
        from datasketch import MinHashLSH

        started = time.perf_counter()
        hashes = []
        for text in texts:
            found = shingles(text)
            if found is not None:
                m = MinHash(num_perm=64)
                m.update_batch([int(v).to_bytes(8, "little") for v in found])
                hashes.append(m)
        minhash = time.perf_counter() - started
        started = time.perf_counter()
        lsh = MinHashLSH(threshold=0.8, num_perm=64)
        candidates = 0
        for number, m in enumerate(hashes):
            candidates += len(lsh.query(m))
            lsh.insert(number, m)
        print(f"  datasketch: MinHash(64) on the same shingles {minhash:.2f} s; its in-memory MinHashLSH(0.8) "
              f"{time.perf_counter() - started:.2f} s to query and insert them ({candidates:,} candidates)")
    print(f"  peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def _rows(store: Store) -> list:
    """Every stored chunk as the work would take it (after the runs all are done: the ranking's cost is the same)."""
    from docatlas.core.storage.database import ChunkRow

    return [ChunkRow(text="", **r) for r in
            store.query("SELECT id, document_id, idx, tokens, page_start, page_end, status FROM chunks")]


if __name__ == "__main__":
    main()
