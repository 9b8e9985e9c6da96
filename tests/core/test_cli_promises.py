"""The command line the README promises: models per workspace, --reports, -, prompt sets, the
progress line on a real terminal, the note for a remote Ollama, and Ctrl-C (a real SIGINT).
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from docatlas.core.base import paths
from docatlas.core.storage import communities
from docatlas.core.storage.database import Store
from fixtures.scripted_model import lightrag_responder
from helpers import docatlas, long_document, write_corpus
from test_retrieval_helpers import Script

ROOT = Path(__file__).resolve().parents[2]
OTHER_MODEL = "llama3.1:8b"


@pytest.fixture
def model(fake_ollama, monkeypatch):
    fake_ollama.responder = lightrag_responder
    fake_ollama.models[OTHER_MODEL] = {"context_length": 8192, "family": "llama"}
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    return fake_ollama



def chat_models(server) -> list[str]:
    return [r["body"]["model"] for r in server.requests if r["path"] == "/api/chat"]


def both(request: dict) -> str:
    """Extraction replies, and the retrieval replies (keywords, answer, reports) by their format."""
    return Script()(request) if isinstance(request.get("format"), dict) or "question" in json.dumps(
        request.get("messages", [])[-1:]).lower() else lightrag_responder(request)


def test_query_and_rebuild_use_the_models_the_workspace_was_built_with(model, capsys, tmp_path):
    ws = str(tmp_path / "ws")
    docs = str(write_corpus(tmp_path / "d"))
    code, _, err = docatlas(capsys, "--data-dir", ws, "ingest", docs, "--model", OTHER_MODEL)
    assert code == 0, err
    assert set(chat_models(model)) == {OTHER_MODEL}
    model.requests.clear()
    model.responder = Script()
    code, _, err = docatlas(capsys, "--data-dir", ws, "query", "Who founded Harbor Analytics?", "--mode", "local")
    assert code == 0, err
    assert chat_models(model) and set(chat_models(model)) == {OTHER_MODEL}  # not the settings' qwen2.5:7b
    model.requests.clear()
    code, _, err = docatlas(capsys, "--data-dir", ws, "query", "Who else?", "--mode", "local",
                            "--model", "qwen2.5:7b", "--embed-model", "nomic-embed-text")
    assert code == 0, err
    assert set(chat_models(model)) == {"qwen2.5:7b"}
    code, out, err = docatlas(capsys, "--data-dir", ws, "rebuild", "--model", OTHER_MODEL)
    assert code == 0 and "Re-derived the graph" in out, err
    code, out, err = docatlas(capsys, "--data-dir", ws, "prompts", "reextract", "--model", OTHER_MODEL)
    assert code == 0 and "nothing to do" in out, err


def test_ingest_reports_writes_community_reports(model, capsys, tmp_path):
    model.responder = both
    ws = tmp_path / "ws"
    code, _, err = docatlas(capsys, "--data-dir", str(ws), "ingest", str(write_corpus(tmp_path / "d")), "--reports")
    assert code == 0, err
    with Store(paths.database_path(ws)) as store:
        assert communities.written_reports(store)
    asked = [r["body"]["format"] for r in model.requests if r["path"] == "/api/chat"
             and isinstance(r["body"].get("format"), dict)]
    assert any("title" in f.get("properties", {}) for f in asked)


def test_a_dash_means_standard_output_and_no_file_is_made(model, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ws = str(tmp_path / "ws")
    docatlas(capsys, "--data-dir", ws, "ingest", str(write_corpus(tmp_path / "d")))
    code, out, _ = docatlas(capsys, "--data-dir", ws, "export", "--format", "json", "-")
    assert code == 0 and {"documents", "entities", "relations"} == set(json.loads(out))
    code, out, _ = docatlas(capsys, "--data-dir", ws, "export", "--format", "graphml", "-")
    assert code == 0 and out.lstrip().startswith("<?xml") and "<graphml" in out
    code, _, err = docatlas(capsys, "--data-dir", ws, "export", "--format", "csv", "-")
    assert code == 1 and "csv writes a folder" in err
    code, out, _ = docatlas(capsys, "--data-dir", ws, "prompts", "export", "-")
    assert code == 0 and json.loads(out)["prompts"]
    assert not (tmp_path / "-").exists()


def test_prompts_export_writes_every_prompt_in_use_or_only_the_changed(model, capsys, tmp_path, monkeypatch):
    ws = str(tmp_path / "ws")
    code, out, _ = docatlas(capsys, "--data-dir", ws, "prompts", "list", "--json")
    in_use = {r["key"] for r in json.loads(out) if r["in_use"]}
    code, out, _ = docatlas(capsys, "--data-dir", ws, "prompts", "export", "-")
    assert code == 0
    exported = json.loads(out)["prompts"]
    assert {p["key"] for p in exported} == in_use and all(p["text"].strip() for p in exported)
    assert not any(p["edited"] for p in exported)
    _, out, _ = docatlas(capsys, "--data-dir", ws, "prompts", "export", "-", "--changed")
    assert json.loads(out)["prompts"] == []


def test_a_remote_ollama_gets_one_note_and_a_local_one_none(model, capsys, tmp_path, monkeypatch):
    docs = write_corpus(tmp_path / "d")
    code, _, err = docatlas(capsys, "--data-dir", str(tmp_path / "ws"), "ingest", str(docs))
    assert code == 0 and "not this computer" not in err
    paths.settings_path().write_text(json.dumps({"ollama": {"retries": 0, "connect_timeout_s": 0.3,
                                                            "timeout_s": 1}}), encoding="utf-8")
    monkeypatch.setenv("OLLAMA_HOST", "10.255.255.1:11434")
    code, _, err = docatlas(capsys, "--data-dir", str(tmp_path / "ws2"), "ingest", str(docs))
    assert code == 1  # nothing answers like Ollama there
    assert err.count("note: Ollama at http://10.255.255.1:11434 is not this computer") == 1


def _env(server) -> dict:
    return {**os.environ, "OLLAMA_HOST": server.host, "PYTHONPATH": str(ROOT / "desktop")}


def test_the_progress_line_fits_an_80_column_terminal_and_redraws_in_place(model, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "long.txt").write_text(long_document(60), encoding="utf-8")
    controller, terminal = pty.openpty()
    command = [sys.executable, "-m", "docatlas.cli", "--data-dir", str(tmp_path / "ws"), "ingest", str(docs),
               "--chunk-tokens", "100"]
    process = subprocess.Popen(command, env={**_env(model), "COLUMNS": "80"}, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=terminal)
    os.close(terminal)
    seen = b""
    while True:
        ready, _, _ = select.select([controller], [], [], 60)
        if not ready:
            break
        try:
            piece = os.read(controller, 4096)
        except OSError:  # the child closed the terminal
            break
        if not piece:
            break
        seen += piece
    process.wait(timeout=60)
    os.close(controller)
    text = seen.decode("utf-8", "replace")
    redraws = [re.sub(r"\x1b\[K", "", part) for part in text.replace("\r\n", "\n").split("\r") if part]
    bars = [r for r in redraws if "chunks" in r]
    assert len(bars) > 3, text
    assert all(len(line.rstrip("\n")) <= 79 for line in redraws), redraws
    assert text.count("\n") <= 3  # redrawn in place, not one line per update


def test_plain_lines_when_not_a_terminal_one_per_stage(model, tmp_path):
    command = [sys.executable, "-m", "docatlas.cli", "--data-dir", str(tmp_path / "ws"), "ingest",
               str(write_corpus(tmp_path / "d"))]
    result = subprocess.run(command, env=_env(model), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert "\r" not in result.stderr and "\x1b" not in result.stderr
    stages = [line.split(":")[0] for line in lines]
    assert stages[:2] == ["load", "extract"] and len(stages) == len(set(stages))


def _start_slow_ingest(server, tmp_path) -> subprocess.Popen:
    server.latency = 600.0  # every call would take ten minutes: only a cut ends it sooner
    command = [sys.executable, "-m", "docatlas.cli", "--data-dir", str(tmp_path / "ws"), "ingest",
               str(write_corpus(tmp_path / "d")), "--parallel", "2"]
    process = subprocess.Popen(command, env=_env(server), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    deadline = time.monotonic() + 60
    while server.in_flight < 2 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    assert server.in_flight == 2, "the calls never started"
    return process


def test_ctrl_c_ends_an_ingest_with_calls_in_flight(model, tmp_path):
    process = _start_slow_ingest(model, tmp_path)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)  # a generous wait; the calls alone would take 10 minutes
    assert process.returncode == 130
    assert "Stopped; finished work is kept" in err and "Traceback" not in err


def test_a_second_ctrl_c_exits_at_once_without_a_traceback(model, tmp_path):
    process = _start_slow_ingest(model, tmp_path)
    process.send_signal(signal.SIGINT)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130
    assert "Stopped" in err and "Traceback" not in err and "KeyboardInterrupt" not in err
