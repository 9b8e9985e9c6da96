"""The command line under hostile text and odd hosts: a clean terminal, real reasons, one sentence.

Each test runs `docatlas` (cli.main, or a real subprocess) against FakeOllama over HTTP.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from docatlas.core.base import paths
from docatlas.core.storage.database import Store
from fixtures.scripted_model import lightrag_responder
from helpers import docatlas, write_corpus
from test_retrieval_helpers import Script, build_graph

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "Hello \x1b[2J\x1b]0;owned\x07\x1b]52;c;aGk=\x07world\x9b31m done\r\x07"
CONTROLS = ("\x1b", "\x07", "\x9b", "\x9d", "\r")


@pytest.fixture
def model(fake_ollama, monkeypatch):
    fake_ollama.responder = lightrag_responder
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    return fake_ollama



def fast_settings(**ollama: object) -> None:
    path = paths.settings_path()
    path.write_text(json.dumps({"ollama": {"retries": 0, "backoff_s": 0.01, **ollama}}), encoding="utf-8")


def assert_clean(text: str) -> None:
    assert not any(c in text for c in CONTROLS), repr(text)


def graph_workspace(tmp_path: Path, corpus: dict | None = None) -> str:
    ws = tmp_path / "ws"
    with Store(paths.database_path(ws)) as store:
        build_graph(store, corpus)
    return str(ws)


# -- output hygiene ---------------------------------------------------------------------------
def test_query_never_sends_the_models_control_sequences_to_the_terminal(fake_ollama, monkeypatch, capsys,
                                                                        tmp_path):
    fake_ollama.responder = Script(answer=HOSTILE)
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    ws = graph_workspace(tmp_path)
    code, out, err = docatlas(capsys, "--data-dir", ws, "query", "Who founded Harbor?", "--mode", "local")
    assert code == 0, err
    assert_clean(out + err)
    assert "Hello" in out and "world" in out and "owned" not in out
    code, out, _ = docatlas(capsys, "--data-dir", ws, "query", "Who founded Harbor?", "--mode", "local", "--json")
    assert not any(c in out for c in ("\x1b", "\x9b", "\x07"))  # escaped in the JSON text ...
    assert json.loads(out)["answer"] == HOSTILE.strip()  # ... and nothing lost


def test_status_shows_hostile_file_names_and_reasons_without_their_controls(model, capsys, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "evil\x1b]0;title\x07name.txt").write_text("Maria Lopez founded Harbor Analytics.", encoding="utf-8")
    (docs / "bad\x1b[2J.pdf").write_bytes(b"not a pdf at all")
    ws = str(tmp_path / "ws")
    code, out, err = docatlas(capsys, "--data-dir", ws, "ingest", str(docs))
    assert code == 1 and "failed:" in err
    assert_clean(out + err)
    code, out, err = docatlas(capsys, "--data-dir", ws, "status")
    assert code == 0 and "evil" in out and "name.txt" in out
    assert_clean(out + err)


def test_csv_cells_that_would_start_a_formula_are_neutralised(model, capsys, tmp_path):
    corpus = {"sheet.txt": [("A sheet.", None, None,
                             [('=HYPERLINK("http://evil")', "organization", "+cmd|' /C calc'!A0"),
                              ("Plain Name", "person", "@SUM(1+1)")],
                             [('=HYPERLINK("http://evil")', "Plain Name", "-2+3", "desc")])]}
    ws = graph_workspace(tmp_path, corpus)
    code, _, err = docatlas(capsys, "--data-dir", ws, "export", "--format", "csv", str(tmp_path / "csv"))
    assert code == 0, err
    with (tmp_path / "csv" / "entities.csv").open(encoding="utf-8", newline="") as handle:
        rows = {r["name"]: r for r in csv.DictReader(handle)}
    assert set(rows) == {"'=HYPERLINK(\"http://evil\")", "Plain Name"}
    assert rows["Plain Name"]["description"] == "'@SUM(1+1)"
    with (tmp_path / "csv" / "relations.csv").open(encoding="utf-8", newline="") as handle:
        (relation,) = list(csv.DictReader(handle))
    assert relation["source"].startswith("'=") and relation["keywords"] == "'-2+3"
    assert relation["description"] == "desc" and float(relation["weight"]) > 0
    code, out, _ = docatlas(capsys, "--data-dir", ws, "export", "--format", "json", "-")
    names = {e["name"] for e in json.loads(out)["entities"]}
    assert '=HYPERLINK("http://evil")' in names  # the JSON export keeps the name as it is


def test_the_cell_filter_covers_tab_and_carriage_return_and_keeps_numbers():
    from docatlas.core.base.text import for_spreadsheet

    assert [for_spreadsheet(v) for v in ("\tx", "\rx", "=1", "+1", "-1", "@a", "a=b", -2.5, 3)] == [
        "'\tx", "'\rx", "'=1", "'+1", "'-1", "'@a", "a=b", -2.5, 3]


# -- reasons, not "Some chunks failed" -------------------------------------------------------
def test_ingest_prints_why_chunks_failed_grouped(model, capsys, tmp_path):
    fast_settings()
    model.fail_next("http500", times=3)
    code, _out, err = docatlas(capsys, "--data-dir", str(tmp_path / "ws"), "ingest", str(write_corpus(tmp_path / "d")))
    assert code == 1
    assert ("3 chunks failed: Ollama could not answer with qwen2.5:7b: an error was encountered while "
            "running the model.") in err
    assert "the reasons are above" in err


def test_a_proxys_502_is_a_reason(model, capsys, tmp_path):
    fast_settings()
    model.fail_next("bad_gateway", times=3)
    code, _, err = docatlas(capsys, "--data-dir", str(tmp_path / "ws"), "ingest", str(write_corpus(tmp_path / "d")))
    assert code == 1 and "3 chunks failed:" in err and "answered 502 Bad Gateway" in err


def test_a_plain_web_server_is_one_sentence(model, capsys, tmp_path):
    fast_settings()
    model.web_page = True
    code, _, err = docatlas(capsys, "--data-dir", str(tmp_path / "ws"), "ingest", str(write_corpus(tmp_path / "d")))
    assert code == 1 and "did not answer like Ollama" in err
    assert "<" not in err and "It works" not in err and "Traceback" not in err
    assert err.count("did not answer like Ollama") == 1 and err.strip().splitlines()[-1].startswith("The server at")


def test_the_breaker_stops_an_ingest_against_a_hung_ollama(model, capsys, tmp_path):
    fast_settings(timeout_s=0.5, retries=3)
    model.fail_next("stall", times=100)
    model.hang_s = 60
    docs = write_corpus(tmp_path / "d", {f"doc{i}.txt": f"Person{i} Name{i} met Other{i}." for i in range(12)})
    code, _, err = docatlas(capsys, "--data-dir", str(tmp_path / "ws"), "ingest", str(docs), "--parallel", "1")
    assert code == 1 and "timed out 3 times in a row, so the run stopped" in err
    assert sum(1 for p in model.paths() if p == "/api/chat") == 3  # not 12 x (retries + 1)


def test_an_embedding_model_that_is_not_pulled_fails_the_ingest_plainly(model, capsys, tmp_path):
    code, out, err = docatlas(capsys, "--data-dir", str(tmp_path / "ws"), "ingest", str(write_corpus(tmp_path / "d")),
                              "--embed-model", "not-pulled-embed")
    assert code == 1
    assert "warning: The embedding model not-pulled-embed is not installed" in err
    assert "ollama pull not-pulled-embed" in err and "graph:" in out


# -- errors as one sentence ------------------------------------------------------------------
def test_an_unusable_log_or_data_folder_is_one_sentence(model, capsys, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    code, _, err = docatlas(capsys, "--data-dir", str(blocker / "ws"), "status")
    assert code == 1 and "cannot use the workspace folder" in err and "--data-dir" in err
    assert len(err.strip().splitlines()) == 1
    monkeypatch.setenv("DOCATLAS_LOG_DIR", str(blocker / "logs"))
    code, _, err = docatlas(capsys, "status")
    assert code == 1 and "cannot use the log folder" in err and "DOCATLAS_LOG_DIR" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_closed_pipe_ends_quietly_with_no_traceback(model, tmp_path):
    ws = graph_workspace(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "desktop")}
    process = subprocess.Popen([sys.executable, "-m", "docatlas.cli", "--data-dir", ws, "status", "--json"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # like `| head -1` that already quit: every write meets a closed pipe
    err = process.stderr.read().decode()
    assert process.wait(timeout=60) != 0
    assert "Traceback" not in err and "Exception ignored" not in err
    assert len(err.strip().splitlines()) == 1


# -- arguments are checked before anything is created ---------------------------------------
def test_a_missing_path_or_a_folder_without_documents_creates_nothing(model, capsys, tmp_path):
    ws = tmp_path / "ws"
    code, _, err = docatlas(capsys, "--data-dir", str(ws), "ingest", str(tmp_path / "missing"))
    assert code == 1 and "does not exist" in err and not ws.exists()
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / "data.xyz").write_text("nothing DocAtlas reads")
    code, _, err = docatlas(capsys, "--data-dir", str(ws), "ingest", str(odd))
    assert code == 1 and "holds no document DocAtlas reads" in err and ".pdf" in err
    assert not ws.exists()
