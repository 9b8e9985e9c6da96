"""The `docatlas` process ends as soon as its command is done (`cli/finish.py`).

Python's teardown is skipped, yet the atexit work runs and the output is flushed; a thread that
is still working is waited for; the window and a closed pipe end as they always did.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from docatlas.core.base import paths
from docatlas.core.storage.database import Store
from test_retrieval_helpers import Script, build_graph

ROOT = Path(__file__).resolve().parents[2]


def _probe(code: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, str(ROOT / "desktop"), *args], capture_output=True,
                          text=True, timeout=120, env=env)


@pytest.fixture
def graph_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    with Store(paths.database_path(ws)) as store:
        build_graph(store)
    return ws


QUERY_PROBE = """import atexit, sys, threading, time
sys.path.insert(0, sys.argv[1])
class Torn:
    def __del__(self):
        print("torn down", flush=True)
keep = Torn()
atexit.register(lambda: print("atexit ran", flush=True))
if sys.argv[2] == "busy":
    threading.Thread(target=lambda: (time.sleep(0.5), print("thread finished", flush=True))).start()
from docatlas.cli import run
sys.argv = ["docatlas", *sys.argv[3:]]
run()
"""


def test_a_query_ends_at_once_with_its_output_flushed(fake_ollama, graph_workspace):
    fake_ollama.responder = Script(answer="Maria Lopez founded it [E1].")
    env = {**os.environ, "OLLAMA_HOST": fake_ollama.host}
    probe = _probe(QUERY_PROBE, "idle", "--data-dir", str(graph_workspace), "query", "Who founded Harbor?",
                   "--mode", "mix", "--json", env=env)
    assert probe.returncode == 0, probe.stderr
    *answer, last = probe.stdout.strip().splitlines()
    assert json.loads("\n".join(answer))["answer"] == "Maria Lopez founded it [E1]."  # all of it, flushed
    assert last == "atexit ran" and "torn down" not in probe.stdout  # the atexit work ran; no teardown


def test_a_command_that_leaves_a_thread_working_waits_for_it(fake_ollama, graph_workspace):
    env = {**os.environ, "OLLAMA_HOST": fake_ollama.host}
    probe = _probe(QUERY_PROBE, "busy", "--data-dir", str(graph_workspace), "status", env=env)
    assert probe.returncode == 0, probe.stderr
    assert "thread finished" in probe.stdout and "torn down" in probe.stdout  # the usual exit, after the thread
    assert "Workspace" in probe.stdout


def test_the_window_is_left_to_tear_itself_down():
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from docatlas.cli.finish import must_tear_down\n"
            "print(must_tear_down()); import docatlas.gui.app; print(must_tear_down())\n")
    probe = _probe(code)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split() == ["False", "True"]


def test_a_reader_that_went_away_gets_the_pipes_exit_code(graph_workspace):
    code = "import sys; sys.path.insert(0, sys.argv[1]); sys.argv = ['docatlas', *sys.argv[2:]]\n" \
           "from docatlas.cli import run; run()\n"
    process = subprocess.Popen([sys.executable, "-c", code, str(ROOT / "desktop"), "--data-dir",
                                str(graph_workspace), "status", "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # the reader quit before a byte was read
    err = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141
    assert "Traceback" not in err and "Exception ignored" not in err
    assert len(err.strip().splitlines()) == 1
