"""First answer: how soon after a drop of documents are questions answered right, with a reference?

    python bench/first_answer.py [--documents 1000] [--checkpoints 60,300] [--prefill 600] [--generate 30]
                                 [--parallel 2] [--modes mix,local] [--budget 50] [--code DIR] [--to-the-end]
                                 [--profile lean]

The corpus of `tests/fixtures/known_facts.py` (generated names, facts spread over documents
among filler prose) is ingested in a thread, against the test server whose replies
(`tests/fixtures/fact_model.py`: records from the chunk's text, answers read from the
prompt's material) are charged for time like a model on a laptop: the prompt at `--prefill`
tokens a second, then the reply at `--generate` tokens a second, each call in its own slot
(`--parallel` of them). At each checkpoint (seconds after the drop) the held-out questions
are asked on a connection of their own while the run goes on, and the bench prints the share
answered right (the bench's own judge, `answers.correct`, from the gold answer alone) with
at least one cited reference, per question kind, with how many documents the model had read
by then. With `--to-the-end` it also waits for the run and prints the time until the whole
graph is built, its entities and relations, the share of the corpus's fact names and fact
pairs in the model's graph (judged against the generator's truth table, not by DocAtlas's
grounding), the chat calls the server answered (the run's and the questions'), and the model
time charged (`--checkpoints ""` measures the run alone, no questions in its way).
`--profile` is the extraction profile of the run (the test server answers each in its
format; `lean` gets the same names, types and verbs without descriptions). `--code DIR` runs another checkout's `desktop/` (e.g. a worktree of an
earlier commit) under the same harness. With `--budget N` (default 50; 0: none) every
question is asked a second time with a reading budget of N model calls
(`jobs.budgeted.ask_within`: the chunks it needs that the model has not read are extracted
first; the run holds the workspace, so their records serve that answer and the replies wait
in the cache for the run): a second column, with the calls spent and the seconds a question
took. The budgeted questions come after the plain ones at each checkpoint, and their cached
replies make the run's later work on those chunks free.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    """Run the drop, ask at each checkpoint, print what was measured."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument("--groups", type=int, default=8, help="question groups (six questions each)")
    parser.add_argument("--checkpoints", default="60,300")
    parser.add_argument("--prefill", type=float, default=600.0, help="prompt tokens a second")
    parser.add_argument("--generate", type=float, default=30.0, help="reply tokens a second")
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--modes", default="mix,local")
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose desktop/ is measured")
    parser.add_argument("--budget", type=int, default=50, help="reading budget of the second column (0: none)")
    parser.add_argument("--to-the-end", action="store_true")
    parser.add_argument("--profile", default="lean", help="the run's extraction profile")
    args = parser.parse_args()
    sys.path[:0] = [str(args.code / "desktop"), str(ROOT / "tests"), str(ROOT / "bench")]

    from docatlas.core.base.tokens import count_tokens  # from --code: before answers.py puts ROOT first
    from docatlas.core.jobs.ingest import index
    from docatlas.core.llm.ollama import OllamaLLM
    from docatlas.core.retrieval.answer import ask
    from docatlas.core.storage.database import Store
    try:
        from docatlas.core.jobs.budgeted import ask_within
    except ImportError:  # an earlier checkout: no budgeted reading
        ask_within = None
    budget = args.budget if ask_within is not None else 0
    answers = importlib.import_module("answers")  # bench/answers.py: its judge and settings
    correct, settings_for = answers.correct, answers.settings_for
    from fixtures.fact_model import fact_responder
    from fixtures.known_facts import build
    from fixtures.ollama_fixture import default_models
    from fixtures.ollama_server import FakeOllama

    charges = {"prompt": 0, "reply": 0, "seconds": 0.0}  # what the model was charged, all calls
    charging = threading.Lock()

    def charged(request: dict) -> str:
        """The scripted reply, after the time a model at the given rates would take to give it."""
        reply = fact_responder(request)
        prompt = "\n".join(str(m.get("content") or "") for m in request.get("messages") or [])
        prompt_tokens, reply_tokens = count_tokens(prompt), count_tokens(reply)
        seconds = prompt_tokens / args.prefill + reply_tokens / args.generate
        with charging:
            charges["prompt"] += prompt_tokens
            charges["reply"] += reply_tokens
            charges["seconds"] += seconds
        time.sleep(seconds)
        return reply

    corpus = build(documents=args.documents, groups=args.groups)
    questions = [q for q in corpus.questions if q.kind in ("single", "multihop")]
    every_name = {n for f in corpus.facts for n in (f.subject, f.object)}
    modes = tuple(m for m in args.modes.split(",") if m)
    checkpoints = sorted(float(c) for c in args.checkpoints.split(",") if c)
    with FakeOllama(default_models()) as server, tempfile.TemporaryDirectory() as tmp:
        server.responder = charged
        settings = settings_for(server.host, "qwen2.5:7b").with_overrides(ollama__parallel=args.parallel,
                                                                          extraction__profile=args.profile)
        docs, db = Path(tmp) / "docs", Path(tmp) / "ws" / "docatlas.sqlite"
        docs.mkdir(parents=True)
        for name, text in corpus.documents.items():
            (docs / name).write_text(text, encoding="utf-8")
        tokens = sum(count_tokens(t) for t in corpus.documents.values())
        print(f"code: {args.code}; corpus: {len(corpus.documents):,} documents, {tokens:,} tokens, "
              f"{len(questions)} questions (single-fact and two-hop); model charged at {args.prefill:g} prompt and "
              f"{args.generate:g} reply tokens a second, {args.parallel} calls at once; profile {args.profile}")
        Store(db).close()  # the schema, before the run and the questions open it
        finished: list[float] = []
        dropped = time.monotonic()

        def run() -> None:
            with Store(db) as store:
                for _ in index(store, [docs], settings):
                    pass
            finished.append(time.monotonic() - dropped)

        threading.Thread(target=run, daemon=True).start()
        for at in checkpoints:
            while time.monotonic() - dropped < at and not finished:
                time.sleep(0.2)
            asked_at = time.monotonic() - dropped
            with Store(db) as store:
                read = store.query("SELECT COUNT(*) AS n FROM document_counts WHERE chunks > 0 AND pending = 0")
                counts = store.counts()
                llm = OllamaLLM(settings.ollama, cache=store)
                right: dict = defaultdict(lambda: [0, 0])
                spent: dict = defaultdict(lambda: [0, 0, 0.0])  # (mode, kind) -> right, calls, seconds
                for mode in modes:
                    for q in questions:
                        answer = ask(store, llm, q.text, settings, mode=mode)
                        good = correct(answer, q, every_name) and any(r.cited for r in answer.references)
                        right[mode, q.kind][0] += good
                        right[mode, q.kind][1] += 1
                for mode in modes if budget else ():
                    for q in questions:
                        started = time.monotonic()
                        answer = ask_within(store, llm, q.text, settings, budget, mode=mode)
                        figures = spent[mode, q.kind]
                        figures[0] += correct(answer, q, every_name) and any(r.cited for r in answer.references)
                        figures[1] += answer.read.calls
                        figures[2] += time.monotonic() - started
                llm.close()
            print(f"at {at:g} s (asked at {asked_at:.0f} s, took {time.monotonic() - dropped - asked_at:.0f} s): "
                  f"{read[0]['n']:,} of {len(corpus.documents):,} documents read by the model, "
                  f"{counts['entities']:,} entities, {counts['relations']:,} relations")
            for (mode, kind), (good, n) in sorted(right.items()):
                line = f"  {mode:<6} {kind:<9} right with a reference: {good}/{n} ({good / n:.0%})"
                if (mode, kind) in spent:
                    more, calls, seconds = spent[mode, kind]
                    line += (f"; with a budget of {budget}: {more}/{n} ({more / n:.0%}), "
                             f"{calls / n:.1f} calls and {seconds / n:.0f} s a question")
                print(line)
        if args.to_the_end:
            while not finished:
                time.sleep(1.0)
            with Store(db) as store:
                counts = store.counts()
                found_names, found_pairs = model_graph(store)
            calls = sum(r["path"] == "/api/chat" for r in server.requests)  # the run's and the questions'
            truth_names, truth_pairs = corpus.fact_names(), corpus.fact_pairs()
            print(f"whole graph built {finished[0]:.0f} s after the drop: {counts['entities']:,} entities, "
                  f"{counts['relations']:,} relations, {calls:,} chat calls in all; model time charged "
                  f"{charges['seconds']:.0f} s ({charges['prompt']:,} prompt and {charges['reply']:,} reply tokens)")
            print(f"  recall of the corpus's facts in the model's graph: names "
                  f"{len(found_names & truth_names)}/{len(truth_names)}, fact pairs "
                  f"{len(found_pairs & truth_pairs)}/{len(truth_pairs)}")
    return 0


def model_graph(store) -> tuple[set[str], set[frozenset]]:
    """The folded names of the model's entities and the name pairs of its relations (an earlier
    checkout without the concept layer: every record is the model's)."""
    from fixtures.known_facts import folded

    columns = {r["name"] for r in store.query("PRAGMA table_info(entities)")}
    layer = " WHERE layer = 'model'" if "layer" in columns else ""
    names = {r["key"]: folded(r["name"]) for r in store.query(f"SELECT key, name FROM entities{layer}")}
    pairs = {frozenset((names[r["source_key"]], names[r["target_key"]]))
             for r in store.query(f"SELECT source_key, target_key FROM relations{layer}")
             if r["source_key"] in names and r["target_key"] in names}
    return set(names.values()), pairs


if __name__ == "__main__":
    raise SystemExit(main())
