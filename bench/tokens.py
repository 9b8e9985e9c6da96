"""Model tokens for the same graph: every profile, with and without gleaning, per chunk and per grounded record.

The known-facts corpus (tests/fixtures/known_facts.py, chunked as ingest does) goes chunk by
chunk through `extract_chunk` over real HTTP to the scripted test server. Two readers:

- `fact`: the scripted fact model (tests/fixtures/fact_model.py): a record for every name
  and a relation for each "A <verb> B." sentence, written in the format of the profile that
  asked (the `typing` profile's list is typed by the names' shapes and linked by the verb);
- `forgetful`: the same, but its first pass leaves out every third name (and its relations)
  and a gleaning round writes them, as a model that skims does.

Gleaning settings: `off` (gleaning 0), `always` (1 round, glean_min_missing 0: the rule
before conditional gleaning), `if>=K` (1 round when at least K concept names are missing).
Prompt tokens are the server's count with token ratio 1 (cl100k of what was sent); reply
tokens are cl100k counts of the replies. Recall is judged against the corpus's own facts (the
generator's truth table) by casefolded name comparison: not by the concept finder, grounding
or the model that wrote the records. With --real N the first N chunks also go to the
real-ollama server (smollm2:135m on the CPU, tokens as that model counts them).

    python bench/tokens.py [--documents 30] [--real 0] [--clamp-predict 400]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "desktop"), str(ROOT / "tests"), str(ROOT / "bench")]

from docatlas.core.base.settings import ExtractionSettings, Settings
from docatlas.core.base.tokens import count_tokens
from docatlas.core.ingest.chunking import chunk_text
from docatlas.core.ingest.extract import extract_chunk
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.prompts.catalog import load_profile
from fixtures.fact_model import STATEMENT, shape_type
from fixtures.known_facts import build
from fixtures.known_facts import folded
from fixtures.ollama_fixture import CHAT_MODEL, default_models
from fixtures.ollama_server import FakeOllama
from fixtures.scripted_model import LEAN_MARK, describe, names_in

PROFILES = ("lightrag", "compact", "lean", "graphrag", "json", "typing")
PLAIN = PROFILES[:5]  # typing only types the names the concept layer finds: not a default for every model
GLEANING = {"off": (0, 0), "always": (1, 0), "if>=1": (1, 1), "if>=2": (1, 2), "if>=3": (1, 3)}
_ENDS = ("\n\nNames:", "\n\nRecords:", "\n\nJSON:")


def passage(prompt: str) -> str:
    """The chunk inside a rendered extraction prompt."""
    start = prompt.rfind("Passage:\n") + len("Passage:\n")
    ends = [i for i in (prompt.find(e, start) for e in _ENDS) if i > 0]
    return prompt[start:min(ends) if ends else None]


def kind(request: dict) -> str:
    """The profile that wrote a request."""
    fmt = request.get("format")
    if isinstance(fmt, dict):
        return "typing" if "types" in fmt.get("properties", {}) else "json"
    first = request["messages"][0]["content"]
    if "<|#|>" in first:
        return "lean" if LEAN_MARK in first else "compact"
    return "lightrag" if "content_keywords" in first else "graphrag"


def render(profile: str, text: str, names: list[str], known: tuple[str, ...] = ()) -> str:
    """Records for `names` and the statements that name one of them (the other end among
    `names` or `known`), in `profile`'s format."""
    ends = {*names, *known}
    facts = [(a, v, b) for a, v, b in STATEMENT.findall(text) if {a, b} <= ends and {a, b} & set(names)]
    if profile == "json":
        return json.dumps({"entities": [{"name": n, "type": shape_type(n), "description": describe(n, text)}
                                        for n in names],
                           "relationships": [{"source": a, "target": b, "keywords": v, "description": f"{a} {v} {b}.",
                                              "strength": 7} for a, v, b in facts]})
    if profile == "lean":
        rows = [f"entity<|#|>{n}<|#|>{shape_type(n)}" for n in names]
        rows += [f"relation<|#|>{a}<|#|>{b}<|#|>{v}" for a, v, b in facts]
        return "\n".join([*rows, "<|COMPLETE|>"])
    if profile == "compact":
        rows = [f"entity<|#|>{n}<|#|>{shape_type(n)}<|#|>{describe(n, text)}" for n in names]
        rows += [f"relation<|#|>{a}<|#|>{b}<|#|>{v}<|#|>{a} {v} {b}." for a, v, b in facts]
        return "\n".join([*rows, "<|COMPLETE|>"])
    rows = [f'("entity"<|>{n}<|>{shape_type(n)}<|>{describe(n, text)})' for n in names]
    tail = "<|>{v}<|>7)" if profile == "lightrag" else "<|>7)"
    rows += [f'("relationship"<|>{a}<|>{b}<|>{a} {v} {b}.' + tail.format(v=v) for a, v, b in facts]
    return "##\n".join(rows) + "<|COMPLETE|>"


def typed(request: dict, text: str) -> str:
    """The typing profile's reply: each listed name typed by its shape, each pair by its verb."""
    props = request["format"]["properties"]
    verbs = {frozenset((a, b)): v for a, v, b in STATEMENT.findall(text)}
    pairs = props.get("links", {}).get("required", [])
    return json.dumps({"types": {n: shape_type(n) for n in props["types"]["required"]},
                       "links": {p: verbs.get(frozenset(x.strip() for x in p.split("|")), "") for p in pairs}})


def responder(forgetful: bool):
    """The scripted reader over the fact model's rules."""

    def respond(request: dict) -> str:
        messages = request["messages"]
        profile, text = kind(request), passage(messages[0]["content"])
        if profile == "typing":
            return typed(request, text)
        names = names_in(text)
        skipped = names[2::3] if forgetful else []
        if len(messages) == 1:
            return render(profile, text, [n for n in names if n not in skipped])
        said = " ".join(m["content"] for m in messages if m["role"] == "assistant")
        missing = [n for n in skipped if f"{n}<|" not in said and f'"{n}"' not in said]
        if "YES or NO" in messages[-1]["content"]:
            return "YES" if missing else "NO"
        return render(profile, text, missing, tuple(names))

    return respond


class Remembered:
    """An LLM that answers a request it has seen from memory, with the counts it had (the bench
    pays a first pass once per profile, whatever the gleaning setting)."""

    def __init__(self, llm: OllamaLLM) -> None:
        self.llm, self.model, self.seen = llm, llm.model, {}

    def chat(self, messages, **kwargs):
        """The reply to `messages`, asked once."""
        key = json.dumps([messages, kwargs.get("format"), kwargs.get("num_predict")], sort_keys=True)
        if key not in self.seen:
            self.seen[key] = self.llm.chat(messages, **{k: v for k, v in kwargs.items() if k != "cancel"})
        return self.seen[key]


@dataclass
class Row:
    """One profile x gleaning setting: sums over the chunks."""

    chunks: int = 0
    prompt: int = 0
    output: int = 0
    calls: int = 0
    grounded: int = 0
    entities: set | None = None
    pairs: set | None = None


def run(llm, profile: str, chunks: list[str], extraction: ExtractionSettings, real: bool) -> Row:
    """Every chunk through one profile; the sums."""
    row = Row(entities=set(), pairs=set())
    loaded = load_profile(profile)
    for text in chunks:
        result = extract_chunk(llm, loaded, text, extraction)
        row.chunks += 1
        row.prompt += result.prompt_tokens
        row.output += result.completion_tokens if real else sum(count_tokens(r) for r in result.raw_replies)
        row.calls += result.calls + result.cached_calls
        row.grounded += result.health.grounded
        row.entities |= {folded(e.name) for e in result.entities}
        row.pairs |= {frozenset((folded(r.source), folded(r.target))) for r in result.relations}
    return row


def table(title: str, rows: dict[tuple[str, str], Row], truth_entities: set, truth_pairs: set) -> dict:
    """Print one table; return (profile, setting) -> (tokens per chunk, entity recall, relation recall)."""
    print(f"\n{title}")
    print(f"  {'profile':<9} {'gleaning':<8} {'prompt/ch':>9} {'output/ch':>9} {'calls/ch':>8} {'grounded':>8} "
          f"{'tok/grnd':>8} {'ent rec':>7} {'rel rec':>7}")
    out = {}
    for (profile, setting), r in rows.items():
        n = max(1, r.chunks)
        er = len(r.entities & truth_entities) / max(1, len(truth_entities))
        rr = len(r.pairs & truth_pairs) / max(1, len(truth_pairs))
        per = f"{(r.prompt + r.output) / r.grounded:>8.1f}" if r.grounded else f"{'-':>8}"
        print(f"  {profile:<9} {setting:<8} {r.prompt / n:>9.0f} {r.output / n:>9.0f} {r.calls / n:>8.2f} "
              f"{r.grounded:>8} {per} {er:>7.3f} {rr:>7.3f}")
        out[(profile, setting)] = ((r.prompt + r.output) / n, er, rr)
    return out


def cheapest(figures: dict, among: tuple[str, ...]) -> str:
    """The cheapest (profile, setting) whose recalls are within 2 points of the best."""
    kept = {k: v for k, v in figures.items() if k[0] in among}
    best_e = max(v[1] for v in kept.values())
    best_r = max(v[2] for v in kept.values())
    fit = [k for k, v in kept.items() if v[1] >= best_e - 0.02 and v[2] >= best_r - 0.02]
    choice = min(fit, key=lambda k: kept[k][0])
    return (f"{choice[0]} / gleaning {choice[1]} ({kept[choice][0]:.0f} tokens a chunk; best recall "
            f"{best_e:.3f} / {best_r:.3f})")


def main() -> None:
    """Print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=30)
    parser.add_argument("--real", type=int, default=0, help="chunks to send to the real small model too (0: none)")
    parser.add_argument("--clamp-predict", type=int, default=400)
    parser.add_argument("--model", default="smollm2:135m")
    args = parser.parse_args()
    corpus = build(seed=3, documents=args.documents, groups=2)
    chunks = [piece for text in corpus.documents.values() for piece, _s, _e in chunk_text(text)]
    truth_entities, truth_pairs = corpus.fact_names(), corpus.fact_pairs()
    print(f"known-facts corpus: {len(corpus.documents)} documents, {len(chunks)} chunks of at most 1200 tokens, "
          f"{len(corpus.facts)} facts, {len(truth_entities)} names; scripted server over real HTTP")
    models = default_models()
    models[CHAT_MODEL] = {**models[CHAT_MODEL], "token_ratio": 1.0}
    with FakeOllama(models) as server:
        for forgetful in (False, True):
            server.responder = responder(forgetful)
            settings = Settings().with_overrides(ollama__host=server.host, ollama__timeout_s=30.0)
            rows = {}
            for profile in PROFILES:
                llm = OllamaLLM(settings.ollama)
                try:
                    for setting, (rounds, least) in GLEANING.items():
                        extraction = replace(settings.extraction, gleaning=rounds, glean_min_missing=least)
                        rows[(profile, setting)] = run(llm, profile, chunks, extraction, real=False)
                finally:
                    llm.close()
            name = "forgetful" if forgetful else "fact"
            figures = table(f"reader {name}: per chunk, and tokens per grounded record", rows, truth_entities,
                            truth_pairs)
            print(f"  cheapest within 2 points of the best recall, plain profiles: {cheapest(figures, PLAIN)}")
            print(f"  the same, typing included: {cheapest(figures, PROFILES)}")
    if args.real:
        real(args, chunks[:args.real], truth_entities, truth_pairs)


def real(args: argparse.Namespace, chunks: list[str], truth_entities: set, truth_pairs: set) -> None:
    """The same table from the real small model on a few chunks (a first pass is paid once per profile)."""
    from candidate_typing import start_real

    work = Path(tempfile.mkdtemp(prefix="docatlas-tokens-"))
    server, host = start_real(work, args.clamp_predict)
    started = time.monotonic()
    try:
        base = Settings().with_overrides(ollama__host=host, ollama__model=args.model, ollama__timeout_s=600.0)
        in_chunks = {n for n in truth_entities if any(f" {n} " in f" {folded(c)} " for c in chunks)}
        pairs = {p for p in truth_pairs if p <= in_chunks}
        rows = {}
        for profile in PROFILES:
            llm = OllamaLLM(base.ollama)
            remembered = Remembered(llm)
            try:
                for setting in ("off", "always", "if>=1"):
                    rounds, least = GLEANING[setting]
                    extraction = replace(base.extraction, gleaning=rounds, glean_min_missing=least)
                    rows[(profile, setting)] = run(remembered, profile, chunks, extraction, real=True)
            finally:
                llm.close()
        table(f"real {args.model} (--clamp-predict {args.clamp_predict}), the first {len(chunks)} chunks "
              f"({len(in_chunks)} known names, {len(pairs)} facts in them); {time.monotonic() - started:.0f} s "
              "on a machine shared with other work", rows, in_chunks, pairs)
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
