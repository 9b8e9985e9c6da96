"""Extraction bench: every profile through the pipeline against the scripted test model.

For each profile, on the test corpus (tests/core/helpers.py, three short documents) and on
a long document cut into 1200-token chunks: prompt tokens per chunk (tiktoken, first pass
and gleaning turns, and what the profile adds around the passage), model calls per chunk,
and entity/relation recall against the scripted truth; then the same with the loop check
on, with a model that drifts into another profile's format, the parser corpus against
the hand counts (bench/parser_corpus.py), and merge suggestions on 10k names.

    python bench/extraction.py [--sentences 400] [--names 10000]
"""

from __future__ import annotations

import argparse
import random
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "desktop"), str(ROOT / "tests"), str(ROOT / "tests" / "core")]

from docatlas.core.base.keys import entity_key
from docatlas.core.base.settings import ExtractionSettings
from docatlas.core.base.tokens import count_tokens
from docatlas.core.graph.similarity import Named, find_duplicates
from docatlas.core.ingest.extract import first_messages, follow_up
from docatlas.core.jobs.ingest import index
from docatlas.core.prompts.catalog import load_profile
from docatlas.core.storage.database import Store
from fixtures.ollama_fixture import default_models
from fixtures.ollama_server import FakeOllama
from fixtures.scripted_model import PROFILES, responder_for
from helpers import DOCUMENTS, expected_graph, long_document, settings_for, write_corpus


def overhead(profile: str) -> dict[str, int]:
    """Tokens a profile adds around the passage: extraction prompt, glean turn, loop check."""
    p, s = load_profile(profile), ExtractionSettings()
    return {"extract": count_tokens(first_messages(p, "", s)[0]["content"]),
            "glean": count_tokens(follow_up(p, "glean", s)["content"]),
            "check": count_tokens(follow_up(p, "loop_check", s)["content"])}


def run(server: FakeOllama, docs: dict[str, str], profile: str, answer_as: str | None = None,
        **overrides: object) -> dict[str, float]:
    """One ingest in a fresh workspace; figures per chunk and recall."""
    server.requests.clear()
    server.responder = responder_for(answer_as or profile)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = write_corpus(Path(tmp) / "docs", docs)
        with Store(Path(tmp) / "ws" / "docatlas.sqlite") as store:
            last = list(index(store, [corpus], settings_for(server, profile=profile, **overrides)))[-1]
            keys = {r["key"] for r in store.query("SELECT key FROM entities")}
            pairs = {frozenset((r["source_key"], r["target_key"])) for r in store.query("SELECT * FROM relations")}
    truth_entities, truth_pairs = expected_graph(docs)
    bodies = [r["body"] for r in server.requests if r["path"] == "/api/chat"]
    chunks = max(1, last.chunks_done)

    def tokens(kind: str) -> float:
        return sum(sum(count_tokens(m["content"]) for m in b["messages"]) for b in bodies if _kind(b) == kind) / chunks

    return {
        "chunks": last.chunks_done, "first": tokens("first"), "glean": tokens("glean"), "check": tokens("check"),
        "calls": len(bodies) / chunks,
        "entity_recall": len(keys & truth_entities) / max(1, len(truth_entities)),
        "relation_recall": len(pairs & truth_pairs) / max(1, len(truth_pairs)),
    }


def _kind(body: dict) -> str:
    messages = body["messages"]
    if len(messages) == 1:
        return "first"
    return "check" if "YES or NO" in messages[-1]["content"] else "glean"


def table(title: str, rows: list[tuple[str, dict[str, float]]], base: dict[str, float] | None = None) -> None:
    print(f"\n{title}")
    print(f"  {'profile':<30} {'chunks':>6} {'first':>7} {'glean':>7} {'check':>6} {'total':>7} {'vs lr':>6}"
          f" {'calls':>6} {'ent rec':>8} {'rel rec':>8}")
    for name, r in rows:
        total = r["first"] + r["glean"] + r["check"]
        ratio = total / (base["first"] + base["glean"] + base["check"]) if base else 1.0
        print(f"  {name:<30} {r['chunks']:>6} {r['first']:>7.0f} {r['glean']:>7.0f} {r['check']:>6.0f} {total:>7.0f}"
              f" {ratio:>6.2f} {r['calls']:>6.2f} {r['entity_recall']:>8.2f} {r['relation_recall']:>8.2f}")


def suggestions_bench(n: int) -> None:
    """Duplicate finding on n synthetic person names with a few planted duplicates."""
    rng = random.Random(3)
    first = ["".join(rng.choices(string.ascii_lowercase, k=6)).title() for _ in range(max(20, n // 25))]
    last = ["".join(rng.choices(string.ascii_lowercase, k=7)).title() for _ in range(max(20, n // 25))]
    names = list(dict.fromkeys(f"{rng.choice(first)} {rng.choice(last)}" for _ in range(n + n // 10)))[:n]
    planted = [("John Doe", "John T. Doe"), ("IBM", "International Business Machines"),
               ("Harbor Analytics", "Harbour Analytics Ltd"), ("Acme Corp", "Acme Corporation")]
    names += [x for pair in planted for x in pair]
    started = time.perf_counter()
    found = find_duplicates(Named(entity_key(x), x) for x in names)
    seconds = time.perf_counter() - started
    hits = {(m.a_key, m.b_key) for m in found}
    caught = sum(tuple(sorted((entity_key(a), entity_key(b)))) in hits for a, b in planted)
    print(f"\nmerge suggestions: {len(names)} names in {seconds:.2f} s; {len(found)} suggested, "
          f"{caught}/{len(planted)} planted duplicates found")


def main() -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=400, help="sentences of the long document")
    parser.add_argument("--names", type=int, default=10_000, help="names for the suggestion bench")
    args = parser.parse_args()

    print("prompt tokens a profile adds around the passage (tiktoken cl100k):")
    base = overhead("lightrag")
    for profile in PROFILES:
        o = overhead(profile)
        print(f"  {profile:<9} extract {o['extract']:>4} ({o['extract'] / base['extract']:.2f} of lightrag)"
              f"  glean {o['glean']:>3}  loop check {o['check']:>3}")

    long_docs = {"long.txt": long_document(args.sentences)}
    with FakeOllama(default_models()) as server:
        for title, docs, extra in (("test corpus (3 documents, 1 chunk each), gleaning 1", DOCUMENTS, {}),
                                   ("long document, 1200-token chunks, gleaning 1", long_docs, {})):
            rows = [(p, run(server, docs, p, **extra)) for p in PROFILES]
            table(title, rows, rows[0][1])
        rows = [(p, run(server, DOCUMENTS, p, gleaning=3, loop_check=True)) for p in PROFILES]
        table("test corpus, gleaning 3 with the YES/NO loop check", rows, rows[0][1])
        drift = [(f"{p} answered as {q}", run(server, DOCUMENTS, p, answer_as=q))
                 for p, q in zip(PROFILES, PROFILES[1:] + PROFILES[:1])]
        table("test corpus, a model that answers in another profile's format", drift)

    print("\nparser corpus against the hand counts (bench/parser_corpus.py --quiet):")
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "parser_corpus.py"), "--quiet", "--repeat", "3"],
                          capture_output=True, text=True)
    print("  " + "\n  ".join(done.stdout.strip().splitlines()))
    suggestions_bench(args.names)
    return 0


if __name__ == "__main__":
    sys.exit(main())
