"""The `docatlas` command: every subcommand, its errors, a kill mid-run, and the offline guard."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import networkx as nx
import pytest
from docatlas import __version__
from docatlas.cli import main
from docatlas.core.base import paths
from docatlas.core.storage.database import Store
from fixtures.scripted_model import lightrag_responder
from helpers import docatlas, expected_graph, long_document, write_corpus

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def model(fake_ollama, monkeypatch):
    fake_ollama.responder = lightrag_responder
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    return fake_ollama



def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert f"DocAtlas {__version__}" in capsys.readouterr().out


def test_ingest_status_export_delete(model, capsys, tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    ws = str(tmp_path / "ws")
    code, out, err = docatlas(capsys, "--data-dir", ws, "ingest", str(corpus), "--parallel", "2")
    assert code == 0, err
    assert "3 documents" in out and "6 model calls" in out

    code, out, _ = docatlas(capsys, "--data-dir", ws, "status", "--json")
    status = json.loads(out)
    entities, pairs = expected_graph()
    assert code == 0 and status["entities"] == len(entities) and status["relations"] == len(pairs)
    assert status["chunks_pending"] == 0
    assert [d["status"] for d in status["documents"]] == ["done"] * 3

    code, out, _ = docatlas(capsys, "--data-dir", ws, "export", "--format", "json", str(tmp_path / "g.json"))
    data = json.loads((tmp_path / "g.json").read_text(encoding="utf-8"))
    assert set(data) == {"documents", "entities", "relations"}
    assert set(data["documents"][0]) == {"id", "path", "title", "chunks"}
    assert set(data["entities"][0]) == {"name", "type", "description", "layer", "sources", "mentions"}
    assert set(data["relations"][0]) == {"source", "target", "keywords", "description", "weight", "layer", "sources",
                                         "mentions"}

    docatlas(capsys, "--data-dir", ws, "export", "--format", "graphml", str(tmp_path / "g.graphml"))
    graph = nx.read_graphml(tmp_path / "g.graphml")
    assert graph.number_of_nodes() == len(entities) and graph.number_of_edges() == len(data["relations"])
    docatlas(capsys, "--data-dir", ws, "export", "--format", "gexf", str(tmp_path / "g.gexf"))
    assert nx.read_gexf(tmp_path / "g.gexf").number_of_nodes() == len(entities)
    docatlas(capsys, "--data-dir", ws, "export", "--format", "csv", str(tmp_path / "csv"))
    assert (tmp_path / "csv" / "entities.csv").read_text(encoding="utf-8").count("\n") == len(entities) + 1

    code, out, _ = docatlas(capsys, "--data-dir", ws, "delete", "alpha.txt")
    assert code == 0 and "alpha.txt" in out
    code, out, _ = docatlas(capsys, "--data-dir", ws, "status", "--json")
    assert len(json.loads(out)["documents"]) == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ingest", "/no/such/folder"], "does not exist"),
        (["delete", "nothing.txt"], "No document matches 'nothing.txt'"),
    ],
)
def test_user_mistakes_get_one_sentence(model, capsys, args, message):
    code, _out, err = docatlas(capsys, *args)
    assert code == 1 and message in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_ollama_down_is_one_sentence_and_work_is_kept(fake_ollama, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    fake_ollama.stop()
    code, _, err = docatlas(capsys, "ingest", str(write_corpus(tmp_path / "docs")))
    assert code == 1 and "Ollama is not reachable" in err and "Traceback" not in err
    code, out, _ = docatlas(capsys, "status", "--json")
    assert json.loads(out)["chunks_pending"] == 3


def test_unexpected_errors_go_to_the_log(model, capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = docatlas(capsys, "--data-dir", str(blocker / "ws"), "status")
    assert code == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_kill_mid_run_loses_nothing_and_redoes_nothing(fake_ollama, tmp_path):
    """SIGKILL the CLI in the middle of extraction; the next run sends no finished chunk again."""
    fake_ollama.responder = lightrag_responder
    fake_ollama.latency = 0.1
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "long.txt").write_text(long_document(300), encoding="utf-8")
    ws = tmp_path / "ws"
    env = {**os.environ, "OLLAMA_HOST": fake_ollama.host, "PYTHONPATH": str(ROOT / "desktop")}
    command = [sys.executable, "-m", "docatlas.cli", "--data-dir", str(ws), "ingest", str(docs),
               "--chunk-tokens", "150", "--parallel", "2"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db = ws / "docatlas.sqlite"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.05)
        if db.exists():
            with Store(db) as store:
                if store.counts()["chunks_done"] >= 3:
                    break
    process.send_signal(signal.SIGKILL)
    process.wait()

    with Store(db) as store:
        counts = store.counts()
        done = {r["text"] for r in store.query("SELECT text FROM chunks WHERE status IN ('done','empty')")}
        orphans = store.query("SELECT COUNT(*) AS n FROM chunk_entities ce JOIN chunks c ON c.id = ce.chunk_id"
                              " WHERE c.status NOT IN ('done', 'empty') AND ce.layer = 'model'")[0]["n"]
    assert 3 <= len(done) < counts["chunks"] and orphans == 0
    fake_ollama.requests.clear()
    fake_ollama.latency = 0
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    asked = [r["body"]["messages"][0]["content"] for r in fake_ollama.requests if r["path"] == "/api/chat"]
    assert asked and not any(text in prompt for prompt in asked for text in done)
    with Store(db) as store:
        assert store.counts()["chunks_pending"] == 0 and store.counts()["entities"] == 10


def test_ingest_and_export_touch_no_host_but_ollama(model, capsys, tmp_path):
    """An audit hook fails any connection other than the Ollama host's."""
    allowed = ("127.0.0.1", int(model.host.rsplit(":", 1)[1]))
    seen: list[tuple] = []

    def guard(event: str, args: tuple) -> None:
        if event == "socket.connect" and guard.active:
            address = args[1]
            if isinstance(address, tuple) and tuple(address[:2]) != allowed:
                seen.append(address)
                raise ConnectionRefusedError(f"DocAtlas tried to reach {address}")

    guard.active = True
    sys.addaudithook(guard)
    try:
        corpus = write_corpus(tmp_path / "docs")
        assert docatlas(capsys, "ingest", str(corpus))[0] == 0
        assert docatlas(capsys, "export", "--format", "json", str(tmp_path / "out.json"))[0] == 0
        # the guard really watches: a stray connection is caught
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.2", 9), timeout=1)
    finally:
        guard.active = False  # audit hooks cannot be removed; disarm it
    assert seen == [("127.0.0.2", 9)]


def test_the_cli_prints_the_settings_warnings_to_stderr(capsys):
    paths.settings_path().write_text(json.dumps({"ollama": {"parallel": "4"}}), encoding="utf-8")
    assert main(["status"]) == 0
    err = capsys.readouterr().err
    assert err.strip() == 'note: settings.json: "parallel" must be a whole number from 1 to 16; using 2.'
