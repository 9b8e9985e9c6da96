"""Soak benchmark: SIGKILL `docatlas` at random moments during ingest, delete and rebuild, then
check that the graph equals a clean run's.

Each round changes the corpus the way a user does (a document edited, deleted or added back),
starts the real command (`python -m docatlas.cli ...`) against our Ollama-API test server on
127.0.0.1, and kills it (SIGKILL) after a random delay. Then the user's recovery: the same
command again, then `ingest` of the folder (the next run), both to the end. The workspace's
graph (entities with type, description and sources; relations with keywords, weight and
sources) is compared with a clean workspace that ingested the same files once (the parts
of a joined description are compared as a set: their order follows document ids, which
differ after a document is added back), and `PRAGMA integrity_check` must say ok. Prints
the rounds, how many kills landed while the command was still running, and the mismatches
(must be 0).

    python bench/soak.py --rounds 30 --seed 1
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "desktop"))

from docatlas.core.graph.export import graph_data
from docatlas.core.storage.database import Store
from fixtures.ollama_fixture import default_models
from fixtures.ollama_server import FakeOllama
from fixtures.scripted_model import lightrag_responder

PEOPLE = ["Ada Byron", "Alan Turing", "Grace Hopper", "Edsger Dijkstra", "Barbara Liskov",
          "Donald Knuth", "Frances Allen", "John Backus"]
DOCUMENTS = ("alpha.txt", "beta.txt", "gamma.txt", "delta.md", "epsilon.txt")
CHUNK_ARGS = ("--chunk-tokens", "100", "--overlap-tokens", "10", "--parallel", "2")


def text_of(name: str, version: int, sentences: int) -> str:
    """A document naming pairs of people (shared across documents, so weights add up)."""
    seed = DOCUMENTS.index(name) * 7 + version * 3
    lines = []
    for i in range(sentences):
        a, b = PEOPLE[(seed + i) % len(PEOPLE)], PEOPLE[(seed + i * 3 + 1) % len(PEOPLE)]
        lines.append(f"In {1950 + i} {a} wrote to {b} about question {seed}-{i}.")
        if i % 4 == 3:
            lines.append("")
    return "\n".join(lines)


def write_state(folder: Path, state: dict[str, int], sentences: int) -> None:
    """Make `folder` hold exactly the documents of `state` (name -> version)."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in folder.iterdir():
        if path.name not in state:
            path.unlink()
    for name, version in state.items():
        path = folder / name
        text = text_of(name, version, sentences)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")


def parts(description: str) -> tuple[str, ...]:
    """A joined description's parts: their order follows document ids, which history changes."""
    return tuple(sorted(description.split("\n")))


def graph_of(db: Path) -> tuple:
    """The graph with sources as file names, in a canonical order."""
    with Store(db) as store:
        data = graph_data(store)
    entities = sorted((e["name"], e["type"], parts(e["description"]),
                       tuple(sorted(Path(p).name for p in e["sources"]))) for e in data["entities"])
    relations = sorted((r["source"], r["target"], r["keywords"], parts(r["description"]), r["weight"],
                        tuple(sorted(Path(p).name for p in r["sources"]))) for r in data["relations"])
    return tuple(entities), tuple(relations)


class Runner:
    """Runs `docatlas` commands in child processes against one test server."""

    def __init__(self, host: str, tmp: Path):
        self.env = {**os.environ, "OLLAMA_HOST": host, "PYTHONPATH": str(ROOT / "desktop"),
                    "DOCATLAS_LOG_DIR": str(tmp / "logs"), "DOCATLAS_CONFIG_DIR": str(tmp / "config")}

    def start(self, workspace: Path, *args: str) -> subprocess.Popen:
        """Start a command; its output is discarded."""
        return subprocess.Popen([sys.executable, "-m", "docatlas.cli", "--data-dir", str(workspace), *args],
                                env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def run(self, workspace: Path, *args: str) -> tuple[int, str]:
        """Run a command to the end: (exit code, stderr)."""
        child = self.start(workspace, *args)
        _, err = child.communicate(timeout=600)
        return child.returncode, err


def main() -> None:
    """Play the rounds and print the counts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sentences", type=int, default=40, help="sentences per document")
    parser.add_argument("--latency", type=float, default=0.03, help="seconds the test model takes per call")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    server = FakeOllama(default_models()).start()
    server.responder = lightrag_responder
    server.latency = args.latency
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        runner, corpus, workspace = Runner(server.host, tmp), tmp / "corpus", tmp / "ws"
        state = {name: 0 for name in DOCUMENTS}
        write_state(corpus, state, args.sentences)
        began = time.perf_counter()
        code, err = runner.run(workspace, "ingest", str(corpus), *CHUNK_ARGS)
        assert code == 0, err
        window = (time.perf_counter() - began) * 1.2  # kills land anywhere in a full ingest's time
        with Store(workspace / "docatlas.sqlite") as store:
            chunks = store.counts()["chunks"]
        clean: dict[frozenset, tuple] = {}
        kills, commands, mismatches, broken = Counter(), Counter(), 0, 0
        for number in range(1, args.rounds + 1):
            roll = rng.random()
            present = sorted(state)
            if roll < 0.5 or len(present) < 2:
                name = rng.choice(DOCUMENTS)
                state[name] = 1 - state.get(name, 1)  # edited, or added back
                command = ("ingest", str(corpus), *CHUNK_ARGS)
            elif roll < 0.8:
                name = rng.choice(present)
                del state[name]
                command = ("delete", name)
            else:
                command = ("rebuild",)
            write_state(corpus, state, args.sentences)
            commands[command[0]] += 1
            child = runner.start(workspace, *command)
            time.sleep(rng.uniform(0, window))
            if child.poll() is None:
                kills[command[0]] += 1
                child.send_signal(signal.SIGKILL)
            child.communicate()
            code, err = runner.run(workspace, *command)  # the user runs it again ...
            if code != 0 and not (command[0] == "delete" and "No document matches" in err):
                print(f"round {number}: {' '.join(command[:2])} again exited {code}: {err.strip()[-300:]}")
            code, err = runner.run(workspace, "ingest", str(corpus), *CHUNK_ARGS)  # ... and the next run
            if code != 0:
                print(f"round {number}: the next ingest exited {code}: {err.strip()[-300:]}")
            key = frozenset(state.items())
            if key not in clean:
                fresh = tmp / f"clean-{len(clean)}"
                copy = tmp / f"clean-corpus-{len(clean)}"
                shutil.copytree(corpus, copy)
                code, err = runner.run(fresh, "ingest", str(copy), *CHUNK_ARGS)
                assert code == 0, err
                clean[key] = graph_of(fresh / "docatlas.sqlite")
            db = workspace / "docatlas.sqlite"
            with Store(db) as store:
                broken += store.query("PRAGMA integrity_check")[0]["integrity_check"] != "ok"
            found = graph_of(db)
            if found != clean[key]:
                mismatches += 1
                print(f"round {number}: after {command[0]} the graph differs from a clean run's")
                for part, mine, theirs in zip(("entities", "relations"), found, clean[key]):
                    for row in sorted(set(mine) ^ set(theirs))[:6]:
                        print(f"  {part}: {'only here' if row in mine else 'only clean'}: {row}")
    server.stop()
    killed = sum(kills.values())
    print(f"soak: {args.rounds} rounds over {len(DOCUMENTS)} documents ({chunks} chunks at the start), "
          f"commands {dict(commands)}; kills mid-command {killed} ({dict(kills)}); "
          f"mismatches {mismatches}; integrity failures {broken}; {time.perf_counter() - started:,.0f} s")


if __name__ == "__main__":
    main()
