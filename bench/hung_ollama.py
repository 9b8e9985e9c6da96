"""How long a hung Ollama costs, and how long Ctrl-C takes with calls in flight.

Runs the real `docatlas` command in a subprocess against the tests' Ollama-API server on
127.0.0.1 (tests/fixtures/ollama_server.py):

1. hung: every chat call gets response headers and then silence ("stall"); N chunks, the
   given timeout and retries. Prints the wall time until the command gave up, its exit code,
   the chat calls the server received and the last line on stderr.
2. ctrl-c: every call "thinks" for ten minutes before its first byte; once `parallel` calls
   are in flight, SIGINT. Prints the time from SIGINT to the process's exit and its exit code.

    python bench/hung_ollama.py                       # 20 chunks, 5 s timeout, 3 retries, parallel 2
    python bench/hung_ollama.py --chunks 50 --timeout 10
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fixtures.ollama_fixture import default_models
from fixtures.ollama_server import FakeOllama


def _workspace(folder: Path, chunks: int, settings: dict) -> tuple[list[str], dict]:
    docs = folder / "docs"
    docs.mkdir()
    for i in range(chunks):  # one short document is one chunk
        (docs / f"doc{i:03d}.txt").write_text(f"Person{i} Lopez met Company{i} Analytics in Town{i}.\n")
    config = folder / "config"
    config.mkdir()
    (config / "settings.json").write_text(json.dumps({"ollama": settings}), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "desktop"), "DOCATLAS_CONFIG_DIR": str(config),
           "DOCATLAS_LOG_DIR": str(folder / "logs")}
    command = [sys.executable, "-m", "docatlas.cli", "--data-dir", str(folder / "ws"), "ingest", str(docs)]
    return command, env


def hung(args: argparse.Namespace) -> None:
    """Every chat call stalls after its headers."""
    with tempfile.TemporaryDirectory() as tmp, FakeOllama(default_models()) as server:
        server.fail_next("stall", times=10_000)
        server.hang_s = 3600
        command, env = _workspace(Path(tmp), args.chunks, {"timeout_s": args.timeout, "retries": args.retries,
                                                           "parallel": args.parallel, "backoff_s": 1.0})
        env["OLLAMA_HOST"] = server.host
        started = time.monotonic()
        result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=3600)
        took = time.monotonic() - started
        calls = sum(1 for p in server.paths() if p == "/api/chat")
    last = (result.stderr.strip().splitlines() or [""])[-1]
    print(f"hung Ollama: {args.chunks} chunks, timeout {args.timeout:g} s, {args.retries} retries, "
          f"parallel {args.parallel}: gave up after {took:.1f} s, exit {result.returncode}, "
          f"{calls} chat calls sent")
    print(f"  last line: {last}")


def ctrl_c(args: argparse.Namespace) -> None:
    """SIGINT with `parallel` calls waiting for their first byte."""
    with tempfile.TemporaryDirectory() as tmp, FakeOllama(default_models()) as server:
        server.latency = 600.0
        command, env = _workspace(Path(tmp), args.chunks, {"parallel": args.parallel})
        env["OLLAMA_HOST"] = server.host
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        while server.in_flight < args.parallel and process.poll() is None:
            time.sleep(0.02)
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=900)
        took = time.monotonic() - sent
    print(f"Ctrl-C with {args.parallel} calls in flight: exited {took:.2f} s after SIGINT, exit {process.returncode}, "
          f"traceback: {'yes' if 'Traceback' in err else 'no'}")


def main() -> None:
    """Parse the options and run both measurements."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--retries", type=int, default=3)
    parser.add_argument("--parallel", type=int, default=2)
    args = parser.parse_args()
    hung(args)
    ctrl_c(args)


if __name__ == "__main__":
    main()
