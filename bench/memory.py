"""Memory benchmark: peak RSS of `docatlas ingest` on a large text file, one huge line and a zip bomb.

Each case runs the real command (`python -m docatlas.cli --data-dir WS ingest FILE`) in a
child process against our Ollama-API test server on 127.0.0.1, and reads the child's peak
resident set size from the kernel (`os.wait4` -> ru_maxrss). Loading and cutting the file is
what grows with its size, so the child is stopped (SIGKILL) once it reports the extract
stage; a refused file ends by itself. Generated inputs (sizes are printed):

- text: a .txt of `--text-mb` MB of ordinary sentences in paragraphs (default 200 MB);
- line: one line of `--line-mb` MB (default 50 MB), words but no newline;
- bomb: a .docx of about 4 MB whose document part inflates to `--bomb-gb` GB of zeros.

    python bench/memory.py                 # all three, at the sizes above
    python bench/memory.py --cases bomb    # just one
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fixtures.ollama_fixture import default_models
from fixtures.ollama_server import FakeOllama
from fixtures.scripted_model import lightrag_responder

NAMES = ["Ada Byron", "Alan Turing", "Grace Hopper", "Edsger Dijkstra", "Barbara Liskov", "Donald Knuth"]


def make_text(path: Path, megabytes: int, newlines: bool = True) -> Path:
    """Sentences naming people, in paragraphs (or one line), up to `megabytes` MB."""
    target = megabytes << 20
    with open(path, "w", encoding="utf-8") as handle:
        written, i = 0, 0
        while written < target:
            lines = []
            for _ in range(200):
                a, b = NAMES[i % len(NAMES)], NAMES[(i * 5 + 1) % len(NAMES)]
                lines.append(f"In year {1900 + i % 120} {a} wrote to {b} about problem {i} and its proof.")
                i += 1
            block = ("\n".join(lines) + "\n\n") if newlines else (" ".join(lines) + " ")
            handle.write(block)
            written += len(block)
    return path


def make_bomb(path: Path, gigabytes: float) -> Path:
    """A .docx whose word/document.xml inflates to `gigabytes` GB of zeros."""
    block = b"\0" * (1 << 20)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("word/document.xml", "w", force_zip64=True) as part:
            for _ in range(int(gigabytes * 1024)):
                part.write(block)
    return path


def peak_rss(file: Path, host: str, workspace: Path) -> tuple[float, float, str]:
    """(peak RSS in MB, seconds, how it ended) of one `docatlas ingest FILE`."""
    env = {**os.environ, "OLLAMA_HOST": host, "PYTHONPATH": str(ROOT / "desktop"),
           "DOCATLAS_LOG_DIR": str(workspace / "logs"), "DOCATLAS_CONFIG_DIR": str(workspace / "config")}
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "docatlas.cli", "--data-dir", str(workspace / "ws"),
                              "ingest", str(file)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
    assert child.stderr is not None
    ended, lines = "exited", []
    for line in child.stderr:
        lines.append(line.strip())
        if line.startswith("extract") and not line.startswith("extract: 0 chunks"):
            ended = f"stopped at the extract stage ({line.strip()})"
            child.send_signal(signal.SIGKILL)
            break
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if ended == "exited":
        said = next((x for x in lines if x.startswith("failed:")), lines[-1] if lines else "")
        ended = f"exited {child.returncode}: {said}"
    return usage.ru_maxrss / 1024, time.perf_counter() - started, ended


def main() -> None:
    """Generate each input, run the command on it, print what the kernel measured."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="text,line,bomb")
    parser.add_argument("--text-mb", type=int, default=200)
    parser.add_argument("--line-mb", type=int, default=50)
    parser.add_argument("--bomb-gb", type=float, default=4.0)
    args = parser.parse_args()
    server = FakeOllama(default_models()).start()
    server.responder = lightrag_responder
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for case in args.cases.split(","):
                folder = Path(tmp) / case
                folder.mkdir()
                if case == "text":
                    file = make_text(folder / "big.txt", args.text_mb)
                elif case == "line":
                    file = make_text(folder / "line.txt", args.line_mb, newlines=False)
                else:
                    file = make_bomb(folder / "bomb.docx", args.bomb_gb)
                size = file.stat().st_size / (1 << 20)
                rss, seconds, ended = peak_rss(file, server.host, folder)
                print(f"{case}: {file.name} {size:,.1f} MB on disk -> peak RSS {rss:,.0f} MB, "
                      f"{seconds:,.1f} s, {ended}", flush=True)
                file.unlink()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
