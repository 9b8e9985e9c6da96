"""During a run: how much of the graph is there, a minute after the drop, before the model has read it?

    python bench/during_run.py [--documents 160] [--at 60] [--call-seconds 2] [--parallel 1] [--people 20]

The corpus of `tests/fixtures/known_facts.py` (generated names; each fact one sentence, "Ardel
Voss funded Miro Tane.", among filler prose) is ingested in a thread against the test server,
each call taking `--call-seconds` before the scripted reply (`tests/fixtures/fact_model.py`).
At `--at` seconds after the drop the bench exports the graph (`core.graph.export.graph_data`,
what `docatlas export` writes) and prints, judged from the corpus's own list of facts (never
from what DocAtlas found):
- the share of the facts' names that the exported graph holds as entities;
- the share of the facts' name pairs (one sentence names both) that it links;
- for up to `--people` people whose facts are in documents the model has not read yet, the
  share for whom `--mode local` "Who is A connected to?" finds every partner of those unread
  documents: each linked to A in the question's context (what `query --json` shows as
  `context.relations`). The answer's wording is not judged: the scripted
  reader knows only the corpus's own question phrasings.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "desktop"), str(ROOT / "tests"), str(ROOT / "bench")]


def main() -> int:
    """Drop the corpus, wait, export, judge, ask; print what was measured."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=160)
    parser.add_argument("--at", type=float, default=60.0, help="seconds after the drop")
    parser.add_argument("--call-seconds", type=float, default=2.0)
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--people", type=int, default=20)
    args = parser.parse_args()

    from answers import settings_for  # bench/answers.py
    from docatlas.core.graph.export import graph_data
    from docatlas.core.jobs.ingest import index
    from docatlas.core.llm.ollama import OllamaLLM
    from docatlas.core.retrieval.answer import ask
    from docatlas.core.storage.database import Store
    from fixtures.fact_model import fact_responder
    from fixtures.known_facts import build
    from fixtures.known_facts import folded
    from fixtures.ollama_fixture import default_models
    from fixtures.ollama_server import FakeOllama

    def slow(request: dict) -> str:
        time.sleep(args.call_seconds)
        return fact_responder(request)

    corpus = build(documents=args.documents)
    with FakeOllama(default_models()) as server, tempfile.TemporaryDirectory() as tmp:
        server.responder = slow
        settings = settings_for(server.host, "qwen2.5:7b").with_overrides(ollama__parallel=args.parallel)
        docs, db = Path(tmp) / "docs", Path(tmp) / "ws" / "docatlas.sqlite"
        docs.mkdir(parents=True)
        for name, text in corpus.documents.items():
            (docs / name).write_text(text, encoding="utf-8")
        Store(db).close()
        dropped = time.monotonic()
        stop = threading.Event()

        def run() -> None:
            with Store(db) as store:
                for _ in index(store, [docs], settings):
                    if stop.is_set():
                        break

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        while time.monotonic() - dropped < args.at:
            time.sleep(0.2)
        with Store(db) as store:
            started = time.monotonic()
            data = graph_data(store)
            export_s = time.monotonic() - started
            read = {r["title"] for r in store.query(
                "SELECT d.title FROM documents d JOIN document_counts n ON n.document_id = d.id "
                "WHERE n.chunks > 0 AND n.pending = 0")}
            names = {folded(e["name"]) for e in data["entities"]}
            links = {frozenset((folded(r["source"]), folded(r["target"]))) for r in data["relations"]}
            fact_names, pairs = corpus.fact_names(), corpus.fact_pairs()
            layers = defaultdict(int)
            for e in data["entities"]:
                layers[e.get("layer", "model")] += 1
            unread: dict[str, set[str]] = defaultdict(set)  # person -> partners in documents not read yet
            for f in corpus.facts:
                if Path(f.document).stem not in read and " " in f.subject:
                    unread[f.subject].add(f.object)
            people = sorted(unread)[:args.people]
            llm = OllamaLLM(settings.ollama, cache=store)
            found, asked_s = 0, []
            for person in people:
                started = time.monotonic()
                answer = ask(store, llm, f"Who is {person} connected to?", settings, mode="local")
                asked_s.append(time.monotonic() - started)
                linked = {folded(end) for r in answer.context.relations for end in (r.source, r.target)
                          if folded(person) in (folded(r.source), folded(r.target))}
                found += {folded(p) for p in unread[person]} <= linked
            llm.close()
        stop.set()
        print(f"corpus: {len(corpus.documents)} documents, {len(fact_names)} names in {len(corpus.facts)} facts; "
              f"model at {args.call_seconds:g} s a call, {args.parallel} at once")
        print(f"at {args.at:g} s: {len(read)} of {len(corpus.documents)} documents read by the model; "
              f"export of {len(data['entities']):,} entities ({layers.get('concept', 0):,} not read yet) and "
              f"{len(data['relations']):,} relations took {export_s:.2f} s")
        print(f"  names of the facts in the exported graph: {len(fact_names & names)}/{len(fact_names)} "
              f"({len(fact_names & names) / len(fact_names):.0%})")
        print(f"  fact pairs linked: {len(pairs & links)}/{len(pairs)} ({len(pairs & links) / len(pairs):.0%})")
        if people:
            print(f"  local 'Who is A connected to?' finding every partner of A's unread documents: "
                  f"{found}/{len(people)} ({found / len(people):.0%}); "
                  f"median {sorted(asked_s)[len(asked_s) // 2]:.2f} s a question")
        print(f"  peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
