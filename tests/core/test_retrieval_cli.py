"""`docatlas query`: streamed answer with sources, `--json` in the contract's shape, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from docatlas.cli import main
from docatlas.core.base import paths
from docatlas.core.storage.database import Store
from helpers import docatlas
from test_retrieval_helpers import ANSWER, Script, build_graph


@pytest.fixture
def workspace(fake_ollama, monkeypatch, tmp_path) -> str:
    fake_ollama.responder = Script()
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    settings = paths.settings_path()  # give up fast when Ollama is down
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"ollama": {"retries": 1, "backoff_s": 0.01}}), encoding="utf-8")
    ws = tmp_path / "ws"
    with Store(paths.database_path(Path(ws))) as store:
        build_graph(store)
    return str(ws)



def test_query_prints_the_answer_and_its_sources(workspace, capsys):
    code, out, err = docatlas(capsys, "--data-dir", workspace, "query", "What did Maria Lopez found?",
                              "--mode", "local")
    assert code == 0, err
    assert out.startswith(ANSWER)
    assert "Sources:" in out and "[C1] /docs/harbor.txt (chunk" in out
    assert "full-text search only" in err  # nothing embedded in this workspace yet


def test_query_json_has_the_contract_shape(workspace, capsys):
    code, out, _ = docatlas(capsys, "--data-dir", workspace, "query", "Who", "buys", "tide", "sensors?",
                            "--mode", "naive", "--json")
    data = json.loads(out)
    assert code == 0 and data["mode"] == "naive" and data["answer"] == ANSWER
    assert {"entities", "relations", "chunks"} <= set(data["context"])
    ref = data["references"][0]
    assert {"document", "page", "chunk"} <= set(ref)
    assert (ref["document"], ref["page"]) == ("/docs/northwind.pdf", 2)
    assert data["question"] == "Who buys tide sensors?"


def test_unknown_mode_is_refused_by_the_parser(workspace, capsys):
    with pytest.raises(SystemExit) as info:
        main(["--data-dir", workspace, "query", "x", "--mode", "fast"])
    assert info.value.code == 2 and "invalid choice" in capsys.readouterr().err


def test_ollama_down_is_one_sentence_and_exit_one(workspace, fake_ollama, capsys):
    fake_ollama.stop()
    code, _, err = docatlas(capsys, "--data-dir", workspace, "query", "What did Maria Lopez found?")
    assert code == 1 and "Ollama is not reachable" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
