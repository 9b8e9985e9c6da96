"""Answer benchmark: how good are the answers of each query mode, on a corpus with known facts?

Writes the corpus of `tests/fixtures/known_facts.py` (generated names, facts spread over
documents among filler prose), ingests it with the test server (tests/fixtures/fact_model.py
extracts records from the chunk text each request carries), then asks every question in
every mode and prints, per mode and question kind:

- evidence: the share of the gold facts whose statement is in the context (a chunk that
  holds the sentence, or a relation between the two names), within the token budget;
  chunk and entity recall beside it;
- correct: the share answered correctly, judged here from the gold answer alone (every
  gold name in the answer, no name off the evidence's path; the count as a number; an
  absent fact declined with no references);
- time: seconds per question.

    python bench/answers.py [--documents 120] [--groups 8] [--modes local,global,hybrid,naive,mix]
    python bench/answers.py --real [--questions 10]   # answers by the real small model as a floor

The test server's embeddings are hash noise, so the scripted run searches full text only.
With --real, extraction is still the script's; keywords and answers come from the real
model of ../shared/tools/real-ollama (started here), over the same retrieval.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "desktop"), str(ROOT / "tests"), str(ROOT / "bench")]

from answers_real import RealServer
from docatlas.core.base.keys import entity_key
from docatlas.core.base.settings import Settings
from docatlas.core.base.tokens import count_tokens
from docatlas.core.jobs.ingest import index
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.retrieval.answer import Answer, ask
from docatlas.core.storage.database import Store
from fixtures.fact_model import fact_responder
from fixtures.known_facts import Corpus, Question, build
from fixtures.ollama_fixture import default_models
from fixtures.ollama_server import FakeOllama

MODES = ("naive", "local", "global", "hybrid", "mix")
KINDS = ("single", "multihop", "count", "list", "absent")
NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def settings_for(host: str, model: str, embed_model: str = "") -> Settings:
    """Default query settings, the given host and models, quick retries."""
    return Settings().with_overrides(ollama__host=host, ollama__model=model, ollama__embed_model=embed_model,
                                     ollama__timeout_s=600.0, ollama__retries=1, ollama__backoff_s=0.01)


def ingest(corpus: Corpus, folder: Path, store: Store, settings: Settings) -> tuple[int, int]:
    """Write the documents and ingest them; (chunks, corpus tokens)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in corpus.documents.items():
        (folder / name).write_text(text, encoding="utf-8")
    last = list(index(store, [folder], settings))[-1]
    return last.chunks_done, sum(count_tokens(t) for t in corpus.documents.values())


def fact_chunks(store: Store, corpus: Corpus) -> dict:
    """The chunk ids that state each gold fact (found by its sentence in its document)."""
    out = {}
    for fact in corpus.facts:
        rows = store.query("SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id "
                           "WHERE d.path LIKE ? AND instr(c.text, ?) > 0", (f"%{fact.document}", fact.sentence()))
        out[fact] = {r["id"] for r in rows}
    return out


def evidence(answer: Answer, question: Question, chunks_of: dict) -> tuple[float, float, float] | None:
    """(facts, chunks, entities) recall of the context for a question with evidence, else None."""
    if not question.facts:
        return None
    ctx = answer.context
    chunk_ids = {c.id for c in ctx.chunks}
    pairs = {frozenset((r.source_key, r.target_key)) for r in ctx.relations}
    keys = {e.key for e in ctx.entities}
    names = {entity_key(n) for f in question.facts for n in (f.subject, f.object)}
    stated = [bool(chunks_of[f] & chunk_ids) or frozenset((entity_key(f.subject), entity_key(f.object))) in pairs
              for f in question.facts]
    in_chunks = [bool(chunks_of[f] & chunk_ids) for f in question.facts]
    return (sum(stated) / len(stated), sum(in_chunks) / len(in_chunks), len(names & keys) / len(names))


def correct(answer: Answer, question: Question, every_name: set[str]) -> bool:
    """The bench's own judge, from the gold answer only."""
    text = answer.answer
    if question.kind == "absent":
        return "not in your documents" in text.casefold() and not answer.references
    named = {n for n in every_name if n in text}
    if not set(question.answers) <= named:
        return False
    on_the_path = {n for f in question.facts for n in (f.subject, f.object)}  # naming the way there is fine
    if named - set(question.answers) - on_the_path - {n for n in every_name if n in question.text}:
        return False
    if question.count is not None:
        n = question.count
        return bool(re.search(rf"\b({n}|{NUMBER_WORDS.get(n, n)})\b", text, re.IGNORECASE))
    return True


def run_modes(store: Store, llm: OllamaLLM, settings: Settings, corpus: Corpus, questions: list[Question],
              modes: tuple[str, ...]) -> dict:
    """Ask every question in every mode; the figures per (mode, kind)."""
    chunks_of = fact_chunks(store, corpus)
    every_name = {n for f in corpus.facts for n in (f.subject, f.object)}
    every_name |= set(re.findall(r"[A-Z][a-z]+ [A-Z][a-z]+", " ".join(corpus.documents.values())))
    figures: dict = defaultdict(lambda: {"n": 0, "correct": 0, "ev": [], "seconds": 0.0})
    for mode in modes:
        for q in questions:
            started = time.perf_counter()
            answer = ask(store, llm, q.text, settings, mode=mode)
            seconds = time.perf_counter() - started
            for kind in (q.kind, "all"):
                row = figures[mode, kind]
                row["n"] += 1
                row["correct"] += correct(answer, q, every_name)
                row["seconds"] += seconds
                found = evidence(answer, q, chunks_of)
                if found is not None:
                    row["ev"].append(found)
    return figures


def report(title: str, figures: dict, modes: tuple[str, ...]) -> None:
    """Print the table: per mode, correct share per kind, evidence, time."""
    print(f"\n{title}")
    print(f"  {'mode':<7} " + " ".join(f"{k:>9}" for k in (*KINDS, "all")) +
          f" {'facts ev':>9} {'chunk ev':>9} {'ent ev':>7} {'s/q':>6}")
    for mode in modes:
        cells = []
        for kind in (*KINDS, "all"):
            row = figures.get((mode, kind))
            cells.append(f"{row['correct']:>3}/{row['n']:<3}  " if row else f"{'-':>9}")
        every = figures[mode, "all"]
        ev = every["ev"]
        mean = [sum(x[i] for x in ev) / len(ev) if ev else 0.0 for i in range(3)]
        print(f"  {mode:<7} " + " ".join(f"{c:>9}" for c in cells) +
              f" {mean[0]:>9.2f} {mean[1]:>9.2f} {mean[2]:>7.2f} {every['seconds'] / every['n']:>6.2f}")
    top = max(figures[m, "all"]["correct"] for m in modes)
    best = [m for m in modes if figures[m, "all"]["correct"] == top]
    naive = figures.get(("naive", "all"))
    if naive and "naive" not in best:
        print(f"  best: {', '.join(best)}{' (tied)' if len(best) > 1 else ''}, {top - naive['correct']} more correct "
              f"answers than naive out of {naive['n']}")


def main() -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=120)
    parser.add_argument("--groups", type=int, default=8, help="question groups (six questions each)")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--real", action="store_true", help="also answer with the real small model")
    parser.add_argument("--questions", type=int, default=10, help="questions for --real (per mode)")
    parser.add_argument("--real-modes", default="naive,mix")
    parser.add_argument("--real-context", type=int, default=2048, help="the real model's window (speed)")
    args = parser.parse_args()
    modes = tuple(m for m in args.modes.split(",") if m)
    corpus = build(documents=args.documents, groups=args.groups)
    with FakeOllama(default_models()) as server, tempfile.TemporaryDirectory() as tmp:
        server.responder = fact_responder
        settings = settings_for(server.host, "qwen2.5:7b")
        with Store(Path(tmp) / "ws" / "docatlas.sqlite") as store:
            started = time.perf_counter()
            chunks, tokens = ingest(corpus, Path(tmp) / "docs", store, settings)
            entities = store.query("SELECT COUNT(*) AS n FROM entities")[0]["n"]
            relations = store.query("SELECT COUNT(*) AS n FROM relations")[0]["n"]
            print(f"corpus: {len(corpus.documents)} documents, {tokens} tokens, {chunks} chunks, {len(corpus.facts)} "
                  f"facts -> {entities} entities, {relations} relations (ingested in "
                  f"{time.perf_counter() - started:.1f} s); {len(corpus.questions)} questions; context budget "
                  f"{settings.query.entity_budget}+{settings.query.relation_budget}+{settings.query.chunk_budget} "
                  "tokens, full-text search only")
            llm = OllamaLLM(settings.ollama, cache=store)
            figures = run_modes(store, llm, settings, corpus, corpus.questions, modes)
            llm.close()
            report("test server (scripted reader over the retrieved context): correct answers per kind", figures,
                   modes)
            if args.real:
                real_modes = tuple(m for m in args.real_modes.split(",") if m)
                picked = _spread(corpus.questions, args.questions)
                with RealServer() as real:
                    real_settings = settings_for(real.host, real.model).with_overrides(
                        ollama__max_context=args.real_context)
                    llm = OllamaLLM(real_settings.ollama, cache=store)
                    figures = run_modes(store, llm, real_settings, corpus, picked, real_modes)
                    llm.close()
                report(f"real model {real.model} on CPU, {args.real_context}-token window ({len(picked)} questions): "
                       "correct answers per kind",
                       figures, real_modes)
    return 0


def _spread(questions: list[Question], n: int) -> list[Question]:
    """n questions, the kinds taken in turn."""
    by_kind = {k: [q for q in questions if q.kind == k] for k in KINDS}
    out: list[Question] = []
    while len(out) < min(n, len(questions)):
        for k in KINDS:
            if by_kind[k] and len(out) < n:
                out.append(by_kind[k].pop(0))
    return out


if __name__ == "__main__":
    raise SystemExit(main())
