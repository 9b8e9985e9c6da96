"""Extraction health with a REAL small model: SmolLM2-135M on the CPU behind the Ollama API.

Starts `../shared/tools/real-ollama/server.py` (its README; setup.sh builds the venv once),
writes a small corpus whose people, organisations and places are known, runs
`docatlas ingest` on it as a user would, and prints what it measured: grounded and
ungrounded records (with their reasons), graph entities whose name does not occur word for
word in any document (must be 0), the known names found (recall), replies cut at the limit
and re-asks (from the workspace and from the server's own log), the learned token ratio,
the health summary the CLI printed, its exit code, and the wall time. Not a test: real
replies are slow (about 23 tokens/s written on 2 cores).

    python bench/real_model.py [--profile json] [--model smollm2:135m] [--carol 2500]
                               [--chunk-tokens 400] [--keep DIR]

With --carol N the first N characters of A Christmas Carol's first stave (from
../shared/corpus) are a third document: no known truth, but every graph entity must still
occur in the text.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "desktop")]

from docatlas.core.storage.database import Store

REAL = ROOT.parent / "shared" / "tools" / "real-ollama"
CAROL = ROOT.parent / "shared" / "corpus" / "books" / "a_christmas_carol.txt"
EMBED = "multilingual-e5-small:q4"

# Two documents with a known truth: every name below occurs in the text, nothing else does.
CORPUS = {
    "harbor.txt": (
        "Maria Lopez founded Harbor Analytics in Lisbon in 2015. The company builds sensors that "
        "measure water quality in ports. Jonas Weber joined Harbor Analytics as chief engineer two "
        "years later, after he left Siemens. In 2021 Maria Lopez met Priya Nair at a conference in "
        "Rotterdam, and the two agreed to test the sensors in the Port of Rotterdam."
    ),
    "northwind.txt": (
        "Priya Nair leads Northwind Labs, a research group in Utrecht. Northwind Labs bought forty "
        "sensors from Harbor Analytics for a study of the river Rhine. Tomas Berg, an auditor from "
        "Oslo, reviews the accounts of Northwind Labs every year. His last report praised the "
        "study and named Jonas Weber as the engineer who calibrated the sensors."
    ),
}
TRUTH = ["Maria Lopez", "Harbor Analytics", "Lisbon", "Jonas Weber", "Siemens", "Priya Nair", "Rotterdam",
         "Port of Rotterdam", "Northwind Labs", "Utrecht", "Rhine", "Tomas Berg", "Oslo"]


def folded(text: str) -> str:
    """Lower case, one space between words: the plain check the bench uses (not grounding's)."""
    return " ".join(re.sub(r"[^\w]+", " ", text.casefold()).split())


def start_server(work: Path, model: str) -> tuple[subprocess.Popen, str]:
    """The real server on a free port; returns it and its host:port."""
    python = subprocess.run(["bash", str(REAL / "setup.sh")], capture_output=True, text=True, check=True)
    py = python.stdout.strip().splitlines()[-1]
    port_file = work / "real.port"
    server = subprocess.Popen(
        [py, str(REAL / "server.py"), "--port-file", str(port_file), "--log", str(work / "real.jsonl"),
         "--model-dir", str(Path.home() / ".cache" / "docatlas-real-ollama" / "models"), "--no-prompt-cache"],
        stdout=subprocess.DEVNULL, stderr=open(work / "server.err", "w"))
    deadline = time.monotonic() + 120
    while not (port_file.exists() and port_file.read_text().strip()):
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the real server did not start; see {work / 'server.err'}")
        time.sleep(0.2)
    return server, f"127.0.0.1:{port_file.read_text().strip()}"


def main() -> None:
    """Run the corpus through the real model and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="json", help="extraction profile (auto tries all: slow)")
    parser.add_argument("--model", default="smollm2:135m")
    parser.add_argument("--keep", type=Path, help="keep the workspace and logs in this folder")
    parser.add_argument("--carol", type=int, default=2500, help="characters of A Christmas Carol to add (0: none)")
    parser.add_argument("--chunk-tokens", type=int, default=400)
    args = parser.parse_args()
    if args.carol and CAROL.is_file():
        story = CAROL.read_text(encoding="utf-8-sig")
        start = story.index("MARLEY'S GHOST", story.index("STAVE ONE\n"))
        CORPUS["carol.txt"] = story[start:start + args.carol]
    work = args.keep or Path(tempfile.mkdtemp(prefix="docatlas-real-"))
    work.mkdir(parents=True, exist_ok=True)
    docs = work / "docs"
    docs.mkdir(exist_ok=True)
    for name, text in CORPUS.items():
        (docs / name).write_text(text, encoding="utf-8")
    server, host = start_server(work, args.model)
    started = time.monotonic()
    try:
        env = {**os.environ, "OLLAMA_HOST": host, "PYTHONPATH": str(ROOT / "desktop"),
               "XDG_CONFIG_HOME": str(work / "config")}
        run = subprocess.run(
            [sys.executable, "-m", "docatlas", "--data-dir", str(work / "ws"), "ingest", str(docs),
             "--model", args.model, "--embed-model", EMBED, "--parallel", "1", "--gleaning", "0",
             "--profile", args.profile, "--chunk-tokens", str(args.chunk_tokens)],
            capture_output=True, text=True, env=env)
        wall = time.monotonic() - started
    finally:
        server.terminate()
        server.wait(timeout=30)
    report(work, run, wall, args)


def report(work: Path, run: subprocess.CompletedProcess, wall: float, args: argparse.Namespace) -> None:
    """Print the measured figures."""
    texts = [folded(t) for t in CORPUS.values()]
    with Store(work / "ws" / "docatlas.sqlite") as store:
        health = [dict(r) for r in store.query("SELECT * FROM chunk_health")]
        held = [dict(r) for r in store.query("SELECT kind, name, target, reason FROM ungrounded_records")]
        names = [r["name"] for r in store.query("SELECT name FROM entities ORDER BY name")]
        relations = store.query("SELECT COUNT(*) AS n FROM relations")[0]["n"]
        ratio = store.query("SELECT model, token_ratio FROM model_facts")
        chunks = store.query("SELECT COUNT(*) AS n, SUM(tokens) AS t FROM chunks")[0]
    log = [json.loads(line) for line in (work / "real.jsonl").read_text().splitlines() if line.strip()]
    chats = [e for e in log if e.get("path") == "/api/chat"]
    absent = [n for n in names if not any(f" {folded(n)} " in f" {t} " for t in texts)]
    truth = {folded(n) for n in TRUTH}  # of the two synthetic documents
    found = sorted(truth & {folded(n) for n in names})
    print(f"model {args.model}, profile {args.profile}, {len(CORPUS)} documents "
          f"({sum(len(t) for t in CORPUS.values())} characters), {chunks['n']} chunks of at most "
          f"{args.chunk_tokens} tokens ({chunks['t']} tokens in all), gleaning 0, parallel 1")
    print(f"wall time: {wall:.1f} s for the whole `docatlas ingest` (exit code {run.returncode})")
    print(f"model calls (server log): {len(chats)} chat, "
          f"{sum(1 for e in chats if e.get('done_reason') == 'length')} ended by the length limit, "
          f"reply limits asked: {sorted({(e.get('options') or {}).get('num_predict') for e in chats})}")
    print(f"records found {sum(h['found'] for h in health)}, grounded {sum(h['grounded'] for h in health)}, "
          f"ungrounded {sum(h['ungrounded'] for h in health)}, types remapped {sum(h['remapped'] for h in health)}, "
          f"cut replies kept {sum(h['cut'] for h in health)}, re-asked {sum(h['retries'] for h in health)}, "
          f"reply formats {sorted({h['reply_format'] for h in health})}")
    reasons: dict[str, int] = {}
    for h in held:
        reasons[h["reason"]] = reasons.get(h["reason"], 0) + 1
    print(f"ungrounded by reason: {reasons or 'none'}")
    print(f"ungrounded entity names: {sorted({h['name'] for h in held if h['kind'] == 'entity'})}")
    print(f"graph: {len(names)} entities, {relations} relations; entities absent from the text "
          f"(plain word-for-word check): {len(absent)} {absent}")
    print(f"known names of the synthetic documents found: {len(found)} of {len(truth)} "
          f"(recall {len(found) / len(truth):.2f}): {found}")
    learned = ", ".join(f"{r['model']} {r['token_ratio']:.3f}" for r in ratio if r["token_ratio"])
    print(f"learned token ratio (model tokens per cl100k token): {learned or 'none'}")
    print("CLI output:")
    for line in (run.stdout + run.stderr).splitlines():
        if line.strip() and not line.startswith("\r"):
            print(f"  {line.strip()[:240]}")


if __name__ == "__main__":
    main()
