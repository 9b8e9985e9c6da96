"""Ingestion benchmark: the CLI against the test Ollama server with a fixed latency per call.

Prints wall time, model calls, the LLM-bound ideal (calls x latency / parallel), their
ratio, prompt tokens per chunk, and, with zero latency, chunks per second of non-model work.

    python bench/ingest.py [--latency 0.3] [--parallel 4] [--chunks 40] [--fast-chunks 300]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "desktop"), str(ROOT / "tests")]

from docatlas.cli import main
from docatlas.core.base.tokens import count_tokens
from fixtures.ollama_fixture import default_models
from fixtures.ollama_server import FakeOllama
from fixtures.scripted_model import lightrag_responder

PEOPLE = ["Ada Byron", "Alan Turing", "Grace Hopper", "Edsger Dijkstra", "Barbara Liskov",
          "Donald Knuth", "Frances Allen", "John Backus", "Niklaus Wirth", "Tony Hoare"]


def corpus(folder: Path, chunks: int, chunk_tokens: int) -> None:
    """Write documents that cut into about `chunks` chunks of `chunk_tokens` tokens."""
    folder.mkdir(parents=True)
    per_doc = 10
    sentence = "In {y} {a} wrote to {b} about problem {i}, and the proof they found was later published widely."
    sentences_per_chunk = max(1, chunk_tokens // count_tokens(sentence.format(y=1950, a="Ada Byron",
                                                                             b="Alan Turing", i=10)))
    for d in range(max(1, chunks // per_doc)):
        lines = []
        for i in range(per_doc * sentences_per_chunk):
            a, b = PEOPLE[(i + d) % 10], PEOPLE[(3 * i + d + 1) % 10]
            lines.append(sentence.format(y=1900 + i, a=a, b=b, i=i + d * 1000))
            if i % 4 == 3:
                lines.append("")
        (folder / f"doc{d:03}.txt").write_text("\n".join(lines), encoding="utf-8")


def serve(latency: float, pipe) -> None:
    """Child process: the test server, so its work does not share the client's interpreter."""
    with FakeOllama(default_models()) as server:
        server.responder = lightrag_responder
        server.latency = latency
        pipe.send(server.host)
        pipe.recv()  # "stop"
        pipe.send(server.requests)


def run(latency: float, parallel: int, chunks: int, chunk_tokens: int) -> dict:
    """One timed `docatlas ingest` in a fresh workspace."""
    here, there = multiprocessing.Pipe()
    child = multiprocessing.Process(target=serve, args=(latency, there), daemon=True)
    child.start()
    host = here.recv()
    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        corpus(docs, chunks, chunk_tokens)
        os.environ.update(OLLAMA_HOST=host, DOCATLAS_CONFIG_DIR=f"{tmp}/cfg", DOCATLAS_LOG_DIR=f"{tmp}/log")
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()) as out:
            code = main(["--data-dir", f"{tmp}/ws", "ingest", str(docs), "--parallel", str(parallel),
                         "--chunk-tokens", str(chunk_tokens)])
        wall = time.perf_counter() - started
        here.send("stop")
        requests = here.recv()
        chats = [r for r in requests if r["path"] == "/api/chat"]
        embeds = [r for r in requests if r["path"] == "/api/embed"]
        child.join()
        firsts = [r for r in chats if len(r["body"]["messages"]) == 1]
        prompt_tokens = sum(count_tokens(m["content"]) for r in firsts for m in r["body"]["messages"])
        glean_tokens = sum(count_tokens(m["content"]) for r in chats if len(r["body"]["messages"]) > 1
                           for m in r["body"]["messages"])
        ideal = (len(chats) + len(embeds)) * latency / parallel  # every model call, embeddings too
        return {
            "exit": code, "summary": out.getvalue().strip(), "chunks": len(firsts), "latency_s": latency,
            "parallel": parallel, "wall_s": round(wall, 3), "model_calls": len(chats) + len(embeds),
            "embed_calls": len(embeds),
            "ideal_s": round(ideal, 3), "ratio": round(wall / ideal, 3) if ideal else None,
            "prompt_tokens_per_chunk_first_pass": round(prompt_tokens / max(1, len(firsts))),
            "prompt_tokens_per_chunk_gleaning": round(glean_tokens / max(1, len(firsts))),
            "chunks_per_s": round(len(firsts) / wall, 1),
        }


def main_bench() -> None:
    """Run both measurements and print them as JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--chunks", type=int, default=40)
    parser.add_argument("--fast-chunks", type=int, default=300)
    parser.add_argument("--chunk-tokens", type=int, default=1200)
    args = parser.parse_args()
    print(json.dumps({"run": "llm-bound", **run(args.latency, args.parallel, args.chunks, args.chunk_tokens)}))
    print(json.dumps({"run": "zero-latency", **run(0.0, args.parallel, args.fast_chunks, 300)}))


if __name__ == "__main__":
    main_bench()
