"""Ingestion benchmark: the CLI against the test Ollama server with a fixed latency per call.

Two runs, each in a fresh workspace, printed as JSON lines:

- "model-bound" (`--latency 0.3 --parallel 4 --chunks 200`): `docatlas ingest` in this process
  (the CLI's modules, the model side it loads lazily and the tokenizer ready before the clock
  starts: start-up is the other run's figure);
  wall time, every model call (extraction and embedding), the model-bound ideal (calls x
  latency / parallel), their ratio, and where the time beyond it went in seconds of one slot
  (before the first call, after the last, inside calls beyond the latency, slots empty
  between calls: the server notes each call's span); prompt tokens per chunk. The server spends
  each chat's latency as a model does (`FakeOllama.paced`): a third before the first token,
  the tokens spread over the rest, the last byte at the latency; `--burst` has it sleep the
  whole latency and then write every token at once instead (its own writing, about 9 ms a
  call, then falls outside the latency and is counted against DocAtlas, and the client reads
  the whole reply only after the model is done).
- "docs" (`--docs 1000`, zero latency): `python -m docatlas ingest` as its own process on a
  folder of that many documents (a quarter each .txt, .md, .pdf and .docx); time from the
  process start to the first model call, chunks per second, the CPU seconds the process used
  (user + system: steadier than wall time on a shared machine), its peak RSS. Its byte
  code is cached as an installed DocAtlas has it (pip and the bundle compile it at install):
  one `ingest` of four documents (one of each type) in another workspace first compiles every
  module the run imports. `--bytecode cold` leaves the cache empty instead, so the measured run
  compiles what it imports (a first start from a fresh checkout).

    python bench/ingest.py [--latency 0.3] [--parallel 4] [--chunks 200] [--docs 1000]
                           [--only model-bound|docs] [--bytecode warm|cold] [--burst]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "desktop"), str(ROOT / "tests")]

from docatlas.cli import main
from docatlas.core.base.tokens import count_tokens
from fixtures.make_docs import make_docx, make_pdf
from fixtures.ollama_fixture import default_models
from fixtures.ollama_server import FakeOllama
from fixtures.scripted_model import lightrag_responder

PEOPLE = ["Ada Byron", "Alan Turing", "Grace Hopper", "Edsger Dijkstra", "Barbara Liskov",
          "Donald Knuth", "Frances Allen", "John Backus", "Niklaus Wirth", "Tony Hoare"]
SENTENCE = "In {y} {a} wrote to {b} about problem {i}, and the proof they found was later published widely."
MODEL_PATHS = ("/api/chat", "/api/generate", "/api/embed")


def sentences(d: int, count: int) -> list[str]:
    """`count` sentences of document `d`, naming two of PEOPLE each."""
    return [SENTENCE.format(y=1900 + i, a=PEOPLE[(i + d) % 10], b=PEOPLE[(3 * i + d + 1) % 10], i=i + d * 1000)
            for i in range(count)]


def sentences_per_chunk(chunk_tokens: int) -> int:
    """How many sentences fill one chunk."""
    return max(1, chunk_tokens // count_tokens(SENTENCE.format(y=1950, a="Ada Byron", b="Alan Turing", i=10)))


def corpus(folder: Path, chunks: int, chunk_tokens: int) -> None:
    """Write text documents that cut into about `chunks` chunks of `chunk_tokens` tokens."""
    folder.mkdir(parents=True)
    per_doc = 10
    for d in range(max(1, chunks // per_doc)):
        lines = []
        for i, line in enumerate(sentences(d, per_doc * sentences_per_chunk(chunk_tokens))):
            lines.append(line)
            if i % 4 == 3:
                lines.append("")
        (folder / f"doc{d:03}.txt").write_text("\n".join(lines), encoding="utf-8")


def mixed_corpus(folder: Path, docs: int, chunk_tokens: int) -> None:
    """Write `docs` documents of about two chunks each, a quarter each .txt, .md, .pdf, .docx."""
    folder.mkdir(parents=True)
    count = 2 * sentences_per_chunk(chunk_tokens)
    for d in range(docs):
        lines = sentences(d, count)
        kind = d % 4
        if kind == 0:
            (folder / f"doc{d:04}.txt").write_text("\n\n".join(lines), encoding="utf-8")
        elif kind == 1:
            (folder / f"doc{d:04}.md").write_text(f"# Letters {d}\n\n" + "\n\n".join(lines), encoding="utf-8")
        elif kind == 2:
            half = len(lines) // 2
            make_pdf(folder / f"doc{d:04}.pdf", ["\n".join(lines[:half]), "\n".join(lines[half:])])
        else:
            make_docx(folder / f"doc{d:04}.docx", title=f"Letters {d}", paragraphs=tuple(lines), table=(),
                      closing="")


class TimedOllama(FakeOllama):
    """The test server, also noting when each request arrived and each model call's span
    (from taking the call to its last byte written; seconds since the epoch)."""

    def __init__(self, models: dict):
        super().__init__(models)
        self.spans: list[tuple[float, float]] = []

    def _record(self, method: str, path: str, body: dict | None) -> None:
        with self._lock:
            self.requests.append({"method": method, "path": path, "body": body, "at": time.time()})

    @contextlib.contextmanager
    def _in_flight(self):
        began = time.time()
        with super()._in_flight():
            yield
        self.spans.append((began, time.time()))


def serve(latency: float, paced: bool, pipe) -> None:
    """Child process: the test server, so its work does not share the client's interpreter."""
    with TimedOllama(default_models()) as server:
        server.responder = lightrag_responder
        server.latency = latency
        server.paced = paced
        pipe.send(server.host)
        pipe.recv()  # "stop"
        pipe.send((server.requests, server.spans))


@contextlib.contextmanager
def server(latency: float, paced: bool = True):
    """A server in a child process: yields (host, a function returning its requests so far, once)."""
    here, there = multiprocessing.Pipe()
    child = multiprocessing.Process(target=serve, args=(latency, paced, there), daemon=True)
    child.start()
    host = here.recv()

    def requests() -> tuple[list[dict], list[tuple[float, float]]]:
        here.send("stop")
        return here.recv()

    try:
        yield host, requests
    finally:
        child.join(timeout=10)


def idle_figures(spans: list[tuple[float, float]], started: float, wall: float, latency: float,
                 parallel: int) -> dict:
    """Where the wall time beyond the ideal went, in seconds of one slot: before the first call,
    after the last one, inside the calls beyond `latency` (the reply streamed and read), and
    slots left empty between calls."""
    if not spans:
        return {}
    first = min(a for a, _ in spans) - started
    last_end = max(b for _, b in spans) - started
    inside = sum(b - a - latency for a, b in spans) / parallel
    between = (last_end - first) - sum(b - a for a, b in spans) / parallel
    return {"first_call_s": round(first, 3), "after_last_call_s": round(wall - last_end, 3),
            "in_calls_beyond_latency_s": round(inside, 3), "slots_empty_between_calls_s": round(between, 3)}


def model_bound(latency: float, parallel: int, chunks: int, chunk_tokens: int, paced: bool = True) -> dict:
    """One timed `docatlas ingest` in this process, in a fresh workspace."""
    with server(latency, paced) as (host, requests), tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        corpus(docs, chunks, chunk_tokens)
        os.environ.update(OLLAMA_HOST=host, DOCATLAS_CONFIG_DIR=f"{tmp}/cfg", DOCATLAS_LOG_DIR=f"{tmp}/log")
        for module in ("docatlas.cli.parser", "docatlas.cli.guards", "docatlas.cli.ingest",
                       "docatlas.core.jobs.slots", "docatlas.core.jobs.stream", "docatlas.core.llm.ollama",
                       "docatlas.core.retrieval.communities", "docatlas.core.retrieval.embed"):
            importlib.import_module(module)  # start-up is the "docs" run's figure, not this one's
        count_tokens("warm")  # so is building the tokenizer
        began = time.time()
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()) as out:
            code = main(["--data-dir", f"{tmp}/ws", "ingest", str(docs), "--parallel", str(parallel),
                         "--chunk-tokens", str(chunk_tokens)])
        wall = time.perf_counter() - started
        received, spans = requests()
    chats = [r for r in received if r["path"] == "/api/chat"]
    embeds = [r for r in received if r["path"] == "/api/embed"]
    firsts = [r for r in chats if len(r["body"]["messages"]) == 1]
    prompt_tokens = sum(count_tokens(m["content"]) for r in firsts for m in r["body"]["messages"])
    glean_tokens = sum(count_tokens(m["content"]) for r in chats if len(r["body"]["messages"]) > 1
                       for m in r["body"]["messages"])
    ideal = (len(chats) + len(embeds)) * latency / parallel  # every model call, embeddings too
    return {
        "exit": code, "summary": out.getvalue().strip(), "chunks": len(firsts), "latency_s": latency,
        "parallel": parallel, "server": "paced" if paced else "burst", "wall_s": round(wall, 3),
        "model_calls": len(chats) + len(embeds),
        "embed_calls": len(embeds), "ideal_s": round(ideal, 3), "ratio": round(wall / ideal, 3) if ideal else None,
        **idle_figures(spans, began, wall, latency, parallel),
        "prompt_tokens_per_chunk_first_pass": round(prompt_tokens / max(1, len(firsts))),
        "prompt_tokens_per_chunk_gleaning": round(glean_tokens / max(1, len(firsts))),
    }


def many_documents(docs: int, parallel: int, chunk_tokens: int, bytecode: str = "warm") -> dict:
    """`python -m docatlas ingest` of `docs` documents as its own process, with the model answering at once."""
    with server(0.0) as (host, requests), tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        mixed_corpus(folder, docs, chunk_tokens)
        # Byte code in a folder of its own: compiled by a small ingest first (as installed), or not at all.
        env = dict(os.environ, OLLAMA_HOST=host, DOCATLAS_CONFIG_DIR=f"{tmp}/cfg", DOCATLAS_LOG_DIR=f"{tmp}/log",
                   PYTHONPATH=os.pathsep.join([str(ROOT / "desktop"), os.environ.get("PYTHONPATH", "")]),
                   PYTHONPYCACHEPREFIX=f"{tmp}/pycache")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        command = [sys.executable, "-m", "docatlas", "--data-dir", f"{tmp}/ws", "ingest", str(folder),
                   "--parallel", str(parallel), "--chunk-tokens", str(chunk_tokens)]
        if bytecode == "warm":
            mixed_corpus(Path(tmp) / "warm-docs", 4, chunk_tokens)
            subprocess.run([*command[:3], "--data-dir", f"{tmp}/warm-ws", "ingest", f"{tmp}/warm-docs"], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        else:
            env["PYTHONDONTWRITEBYTECODE"] = "1"  # nothing cached: every module is compiled as it is imported
        began = time.time()
        started = time.perf_counter()
        process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        out = process.stdout.read().decode("utf-8", "replace") if process.stdout else ""
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        received, _ = requests()
    calls = [r for r in received if r["path"] in MODEL_PATHS and r["at"] >= began]  # not the warm-up's
    chats = [r for r in calls if r["path"] == "/api/chat"]
    chunks = len([r for r in chats if len(r["body"]["messages"]) == 1])
    first = min((r["at"] for r in chats), default=None)
    return {
        "exit": process.returncode, "summary": out.strip(), "documents": docs, "bytecode": bytecode, "chunks": chunks,
        "model_calls": len(calls), "latency_s": 0.0, "parallel": parallel, "wall_s": round(wall, 3),
        "first_model_call_s": round(first - began, 3) if first is not None else None,
        "chunks_per_s": round(chunks / wall, 1), "process_cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
    }


def main_bench() -> None:
    """Run the measurements and print them as JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--chunks", type=int, default=200, help="chunks of the model-bound run (about)")
    parser.add_argument("--chunk-tokens", type=int, default=1200)
    parser.add_argument("--docs", type=int, default=1000, help="documents of the zero-latency run")
    parser.add_argument("--only", choices=("model-bound", "docs"))
    parser.add_argument("--burst", action="store_true",
                        help="the server sleeps each call's latency, then writes every token at once")
    parser.add_argument("--bytecode", choices=("warm", "cold"), default="warm",
                        help="docs run: byte code compiled by a small ingest first (as installed), or not at all")
    args = parser.parse_args()
    if args.only in (None, "model-bound"):
        figures = model_bound(args.latency, args.parallel, args.chunks, args.chunk_tokens, not args.burst)
        print(json.dumps({"run": "model-bound", **figures}), flush=True)
    if args.only in (None, "docs"):
        print(json.dumps({"run": "docs", **many_documents(args.docs, args.parallel, args.chunk_tokens,
                                                                  args.bytecode)}), flush=True)


if __name__ == "__main__":
    main_bench()
