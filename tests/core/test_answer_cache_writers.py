"""The answer cache with two writers on one workspace: real connections and real processes.

Queries write the answer cache (and the reply cache) without the workspace lock, so that
they run during an ingestion. Another writer must neither lose its work to them nor make
them lose their answer: a busy database leaves the answer uncached, and an answer made
while another process changed the graph does not prune the newer answers it keeps.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from docatlas.core.jobs.ingest import remove_document
from docatlas.core.retrieval.answer import ask
from docatlas.core.storage.database import Store
from test_retrieval_helpers import ANSWER, Script, build_graph, client, open_store, settings_for

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "What did Maria Lopez found?"
ABSENT = "Who founded Zorblatt Industries?"  # names nowhere in the documents: answered without a model

# A second DocAtlas process in the middle of a write: its transaction stays open until stdin closes.
HOLDER = """import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from docatlas.core.storage.database import Store
with Store(Path(sys.argv[2])) as store, store.transaction() as conn:
    conn.execute("INSERT INTO meta(key, value) VALUES ('held_write', 'kept')")
    print("held", flush=True)
    sys.stdin.read()
"""


@pytest.fixture
def workspace(fake_ollama, tmp_path) -> Path:
    fake_ollama.responder = Script()
    ws = tmp_path / "ws"
    with Store(ws / "docatlas.sqlite") as store:
        build_graph(store)
    return ws


def test_a_query_while_another_process_writes_gives_its_answer_and_the_writer_keeps_its_write(
        workspace, fake_ollama, tmp_path):
    database = workspace / "docatlas.sqlite"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(ROOT / "desktop"), str(database)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        env = {**os.environ, "OLLAMA_HOST": fake_ollama.host, "PYTHONPATH": str(ROOT / "desktop")}
        query = subprocess.run([sys.executable, "-m", "docatlas", "--data-dir", str(workspace), "query", QUESTION,
                                "--mode", "local"], env=env, capture_output=True, text=True, timeout=120)
        assert holder.poll() is None  # the other write was open the whole time
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    assert holder.returncode == 0
    assert query.returncode == 0, query.stderr
    assert query.stdout.startswith(ANSWER) and "Sources:" in query.stdout
    assert "Traceback" not in query.stderr and "busy" not in query.stderr
    with Store(database) as store:
        assert store.get_meta("held_write") == "kept"  # the other process's write is whole
        assert store.query("SELECT COUNT(*) AS n FROM answers")[0]["n"] == 0  # left uncached, not half-kept
        settings = settings_for(fake_ollama)
        asked = len(fake_ollama.requests)
        again = ask(store, client(fake_ollama, store), QUESTION, settings, mode="local")
        assert not again.cached and again.answer == ANSWER and len(fake_ollama.requests) > asked
        assert ask(store, client(fake_ollama), QUESTION, settings, mode="local").cached  # kept once it was free


def test_an_answer_made_while_another_writer_changed_the_graph_keeps_the_newer_answers(fake_ollama, tmp_path):
    """Two connections: while the first waits for its answer, the second changes the graph and caches an
    answer of its own at the new version; the first's stale answer must not prune it."""
    with open_store(tmp_path) as first, Store(first.path) as second:
        build_graph(first)
        settings = settings_for(fake_ollama)
        script = Script()
        changed = threading.Event()

        def respond(request: dict) -> str:
            reply = script(request)
            if not request.get("format") and not changed.is_set():  # the first's answer call, once
                changed.set()
                harbor = second.query("SELECT id FROM documents WHERE path LIKE '%garden.txt'")[0]["id"]
                remove_document(second, harbor)  # a real edit of the graph by the other writer
                assert ask(second, client(fake_ollama), ABSENT, settings, mode="local").computed == "absent"
            return reply

        fake_ollama.responder = respond
        made = ask(first, client(fake_ollama), QUESTION, settings, mode="local")
        assert changed.is_set() and made.answer == ANSWER

        newer = ask(second, client(fake_ollama), ABSENT, settings, mode="local")
        assert newer.cached  # the other writer's answer survived the stale one
        versions = {r["version"] for r in second.query("SELECT version FROM answers")}
        assert len(versions) == 1
        fresh = ask(first, client(fake_ollama), QUESTION, settings, mode="local")
        assert not fresh.cached  # made for a graph that is gone, so never kept
