"""Grounded records per chunk with a REAL small model: the plain profiles against `typing`.

Starts `../shared/tools/real-ollama/server.py` (its README; setup.sh builds the venv once)
with `--clamp-predict`, and sends each chunk of two short texts whose names are known
(`real_model.CORPUS`, one chunk each) through `extract_chunk` once per profile, without
gleaning, as `--profile auto`'s trial does. Prints per profile and text: records found,
grounded records, grounded entities, the known names among them (judged by a plain
casefolded comparison with the text's list, not by grounding) and how many of those have the
type a reader gives them, the model's own prompt and reply tokens, calls and seconds. Slow:
about 10-25 s a call on 2 cores.

    python bench/candidate_typing.py [--model smollm2:135m] [--clamp-predict 400]
                                     [--profiles lean,lightrag,compact,graphrag,json,typing]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "desktop"), str(ROOT / "bench")]

from docatlas.core.base.settings import Settings
from docatlas.core.ingest.extract import extract_chunk
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.prompts.catalog import load_profile
from real_model import CORPUS, REAL, TRUTH, folded

PROFILES = ("lean", "lightrag", "compact", "graphrag", "json", "typing")
SHORT = ("harbor.txt", "northwind.txt")
PLACES = {"Lisbon", "Rotterdam", "Port of Rotterdam", "Utrecht", "Rhine", "Oslo"}
ORGS = {"Harbor Analytics", "Siemens", "Northwind Labs"}  # the other known names are people


def true_type(name: str) -> str:
    """The type a reader gives a known name of the two texts."""
    return "location" if name in PLACES else "organization" if name in ORGS else "person"


def start_real(work: Path, clamp: int) -> tuple[subprocess.Popen, str]:
    """The real server on a free port, every reply capped at `clamp` tokens; it and its host:port."""
    setup = subprocess.run(["bash", str(REAL / "setup.sh")], capture_output=True, text=True)
    if setup.returncode != 0:
        raise SystemExit(f"setup.sh failed ({setup.returncode}): {setup.stderr.strip()[-400:]}")
    python = setup.stdout.strip().splitlines()[-1]
    port_file = work / "real.port"
    server = subprocess.Popen(
        [python, str(REAL / "server.py"), "--port-file", str(port_file), "--log", str(work / "real.jsonl"),
         "--model-dir", str(Path.home() / ".cache" / "docatlas-real-ollama" / "models"), "--no-prompt-cache",
         "--clamp-predict", str(clamp)],
        stdout=subprocess.DEVNULL, stderr=open(work / "server.err", "w"))
    deadline = time.monotonic() + 120
    while not (port_file.exists() and port_file.read_text().strip()):
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the real server did not start; see {work / 'server.err'}")
        time.sleep(0.2)
    return server, f"127.0.0.1:{port_file.read_text().strip()}"


def real_settings(host: str, model: str, profile: str) -> Settings:
    """Settings for one profile against the real server, gleaning off."""
    base = Settings().with_overrides(ollama__host=host, ollama__model=model, ollama__timeout_s=600.0)
    return replace(base, extraction=replace(base.extraction, profile=profile, gleaning=0))


def main() -> None:
    """Run the two texts through every profile and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2:135m")
    parser.add_argument("--clamp-predict", type=int, default=400)
    parser.add_argument("--profiles", default=",".join(PROFILES))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="docatlas-typing-"))
    server, host = start_real(work, args.clamp_predict)
    print(f"model {args.model} on the real-ollama server (CPU, --clamp-predict {args.clamp_predict}), "
          f"{len(SHORT)} short texts, one chunk each, gleaning 0; the machine was shared with other work")
    print(f"  {'profile':<9} {'text':<14} {'found':>5} {'grounded':>8} {'entities':>8} {'known':>7} "
          f"{'typed':>7} {'prompt':>6} {'reply':>5} {'calls':>5} {'s':>5}")
    try:
        for profile in args.profiles.split(","):
            totals = [0, 0, 0]
            for name in SHORT:
                text = CORPUS[name]
                settings = real_settings(host, args.model, profile)
                llm = OllamaLLM(settings.ollama)
                started = time.monotonic()
                try:
                    result = extract_chunk(llm, load_profile(profile), text, settings.extraction)
                finally:
                    llm.close()
                seconds = time.monotonic() - started
                truth = {folded(n) for n in TRUTH if f" {folded(n)} " in f" {folded(text)} "}
                known = truth & {folded(e.name) for e in result.entities}
                right = sum(1 for e in result.entities for n in TRUTH
                            if folded(e.name) == folded(n) and folded(n) in known and e.type == true_type(n))
                h = result.health
                totals = [totals[0] + h.grounded, totals[1] + h.grounded_entities, totals[2] + len(known)]
                print(f"  {profile:<9} {name:<14} {h.found:>5} {h.grounded:>8} {h.grounded_entities:>8} "
                      f"{len(known):>3}/{len(truth):<3} {right:>3}/{len(known):<3} "
                      f"{result.prompt_tokens:>6} {result.completion_tokens:>5} "
                      f"{result.calls:>5} {seconds:>5.0f}", flush=True)
            print(f"  {profile:<9} {'per chunk':<14} {'':>5} {totals[0] / len(SHORT):>8.1f} "
                  f"{totals[1] / len(SHORT):>8.1f} {totals[2] / len(SHORT):>7.1f}", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
