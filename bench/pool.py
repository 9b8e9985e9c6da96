"""Pool benchmark: model calls spread over three stand-in Ollama hosts, one of which dies mid-run.

Three test servers (tests/fixtures/ollama_server.py, real HTTP on 127.0.0.1, each in a process
of its own) answer after
different latencies; the third is stopped (its calls in flight cut) once it has taken a
third of its share, and started again `--down` seconds later. The calls go through
`OllamaLLM` with the host setting `a*S1, b*S2, c*S3`, from as many threads as there are
slots (as `ingest` runs them). Printed, all measured:

- wall time, and the pooled ideal: the shortest time in which the hosts' slots could have
  answered every call at their latencies, with the third host counted only while it was up;
- per host: requests received, calls answered, calls that failed there (moved to another);
- nothing lost: every call answered once, with its own reply, and no call failed;
- for scale, the same client against host 1 alone (no pool): wall vs its ideal, so the
  pool's own cost shows apart from what a call costs on this machine.

    python bench/pool.py [--calls 200] [--latency 0.2,0.4,0.8] [--slots 2,2,2] [--down 3]
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "desktop"), str(ROOT / "tests")]

from docatlas.core.base.settings import OllamaSettings
from docatlas.core.base.tokens import count_tokens
from docatlas.core.llm.ollama import OllamaLLM
from fixtures.ollama_fixture import default_models
from fixtures.ollama_server import FakeOllama

MODEL = "qwen2.5:7b"


def echo(request: dict) -> str:
    """The reply names the question, so a reply given to the wrong call would show."""
    return "answer to " + str((request.get("messages") or [{}])[-1].get("content", ""))


def serve(latency: float, pipe) -> None:
    """Child process: one stand-in host, so its work does not share the client's interpreter."""
    server = FakeOllama(default_models())
    server.latency, server.responder = latency, echo
    server.start()
    pipe.send(server.host)
    while True:
        command = pipe.recv()
        if command == "count":
            pipe.send(sum(1 for p in server.paths() if p == "/api/chat"))
            continue
        if command == "stop":
            server.stop()  # Ollama quits: the calls it has in flight are cut
        elif command == "start":
            server.start()  # back on the same port
        else:
            server.stop()
            pipe.send("ok")
            return
        pipe.send("ok")


class Host:
    """A stand-in host in its own process, driven through a pipe."""

    def __init__(self, latency: float):
        self.pipe, there = multiprocessing.Pipe()
        self.child = multiprocessing.Process(target=serve, args=(latency, there), daemon=True)
        self.child.start()
        self.host = self.pipe.recv()

    def ask(self, command: str) -> object:
        self.pipe.send(command)
        return self.pipe.recv()


def ideal(calls: int, rates: list[float], spans: list[list[tuple[float, float]]]) -> float:
    """The least T with sum(rate x time up before T) >= calls; `rates` are a host's calls per second."""

    def done_by(t: float) -> float:
        return sum(rate * sum(max(0.0, min(t, end) - start) for start, end in up)
                   for rate, up in zip(rates, spans, strict=True))

    low, high = 0.0, 1.0
    while done_by(high) < calls:
        high *= 2
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if done_by(middle) < calls else (low, middle)
    return high


def main() -> None:
    """Run the calls, kill and revive the third host, print what was measured."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--latency", default="0.2,0.4,0.8", help="seconds a call, per host")
    parser.add_argument("--slots", default="2,2,2", help="calls in flight, per host")
    parser.add_argument("--down", type=float, default=3.0, help="seconds the third host stays away")
    args = parser.parse_args()
    logging.getLogger("docatlas").setLevel(logging.ERROR)  # a host failing is expected here
    latencies = [float(x) for x in args.latency.split(",")]
    slots = [int(x) for x in args.slots.split(",")]
    servers = [Host(latency) for latency in latencies]
    hosts = ", ".join(f"{s.host}*{n}" for s, n in zip(servers, slots, strict=True))
    settings = OllamaSettings(host=hosts, model=MODEL, timeout_s=30.0, retries=2, backoff_s=0.05)
    llm = OllamaLLM(settings)
    llm.check()
    count_tokens("warm up")  # the tokenizer loads once per process (ingest has it from chunking): not timed
    victim = servers[-1]
    share = args.calls * (slots[-1] / latencies[-1]) / sum(n / lat for n, lat in zip(slots, latencies, strict=True))
    times: dict[str, float] = {}

    def killer() -> None:
        while llm.host_loads()[-1].calls < share / 3:
            time.sleep(0.005)
        times["died"] = time.monotonic()
        victim.ask("stop")  # Ollama quits: the calls it has in flight are cut
        time.sleep(args.down)
        victim.ask("start")
        times["back"] = time.monotonic()

    replies: dict[int, str] = {}
    errors: list[str] = []

    def one(number: int) -> None:
        try:
            replies[number] = llm.chat([{"role": "user", "content": f"question {number}"}]).text
        except Exception as exc:  # counted and printed: a lost call is what this measures
            errors.append(f"{number}: {exc}")

    started = time.monotonic()
    threading.Thread(target=killer, daemon=True).start()
    with ThreadPoolExecutor(max_workers=settings.total_parallel) as pool:
        list(pool.map(one, range(args.calls)))
    wall = time.monotonic() - started
    died = times.get("died", started + wall) - started
    back = times.get("back", started + wall) - started
    rates = [n / lat for n, lat in zip(slots, latencies, strict=True)]
    forever = float("inf")
    spans = [[(0.0, forever)] for _ in servers[:-1]] + [[(0.0, died), (back, forever)]]
    best = ideal(args.calls, rates, spans)
    right = sum(1 for n, text in replies.items() if text == f"answer to question {n}")
    print(f"calls: {args.calls} over {len(servers)} hosts (latency {args.latency} s, slots {args.slots}); "
          f"host 3 down from {died:.2f} s to {back:.2f} s")
    print(f"wall: {wall:.2f} s; pooled ideal: {best:.2f} s; ratio: {wall / best:.2f}x")
    for number, (server, load) in enumerate(zip(servers, llm.host_loads(), strict=True), 1):
        received = server.ask("count")
        print(f"host {number} ({latencies[number - 1]:g} s, {slots[number - 1]} slots): {received} requests, "
              f"{load.calls} answered, {load.failures} failed there (cut or refused) and moved on")
    print(f"nothing lost: {right} of {args.calls} calls answered with their own reply, {len(errors)} failed"
          + (f" (first: {errors[0]})" if errors else ""))
    alone = max(10, args.calls // 4)  # the same client on one host: what a call costs here without a pool
    single = OllamaLLM(OllamaSettings(host=servers[0].host, model=MODEL, timeout_s=30.0, parallel=slots[0]))
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=slots[0]) as pool:
        list(pool.map(lambda n: single.chat([{"role": "user", "content": f"alone {n}"}]), range(alone)))
    single_wall = time.monotonic() - started
    single_ideal = alone * latencies[0] / slots[0]
    print(f"one host alone (host 1, no pool), {alone} calls: wall {single_wall:.2f} s; ideal {single_ideal:.2f} s; "
          f"ratio: {single_wall / single_ideal:.2f}x")
    for server in servers:
        server.ask("quit")


if __name__ == "__main__":
    main()
