"""`docatlas prompts list|show|set|reset|import|export|reextract`: the same checks, one-sentence errors."""

from __future__ import annotations

import io
import json

import pytest
from docatlas.core.prompts.catalog import spec
from fixtures.scripted_model import lightrag_responder
from helpers import docatlas, write_corpus
from test_prompt_import import seed


@pytest.fixture
def ws(tmp_path) -> str:
    return str(tmp_path / "ws")



def test_list_show_set_from_a_file_and_reset(capsys, ws, tmp_path):
    code, out, _ = docatlas(capsys, "--data-dir", ws, "prompts", "list")
    assert code == 0 and "lightrag/extract" in out and "query/answer_naive" in out
    assert out.rstrip().endswith("0 of 36 prompts changed; extraction uses the lean profile.")

    code, out, _ = docatlas(capsys, "--data-dir", ws, "prompts", "show", "summarize")
    assert code == 0 and out == spec("merge/summarize").default_text()

    mine = tmp_path / "answer.txt"
    mine.write_text("Answer from {context} as {response_type}.\n", encoding="utf-8")
    code, out, _ = docatlas(capsys, "--data-dir", ws, "prompts", "set", "answer", str(mine), "--note", "plain")
    assert code == 0 and out.startswith("Saved query/answer as version ")
    code, out, _ = docatlas(capsys, "--data-dir", ws, "prompts", "show", "query/answer_mix")
    assert out == "Answer from {context} as {response_type}.\n"  # a mode without its own: the all-modes one
    code, out, _ = docatlas(capsys, "--data-dir", ws, "prompts", "list", "--json")
    rows = {r["key"]: r for r in json.loads(out)}
    assert rows["query/answer"]["edited"] and rows["query/answer"]["versions"] == 1
    assert not rows["query/answer_mix"]["edited"]

    code, out, _ = docatlas(capsys, "--data-dir", ws, "prompts", "reset", "query/answer")
    assert (code, out) == (0, "query/answer is back to its default.\n")
    code, out, _ = docatlas(capsys, "--data-dir", ws, "prompts", "show", "answer", "--versions")
    assert "[default] Reset to the default" in out and "plain" in out and "2 saved versions" in out
    first = out.split()[0]
    code, out, _ = docatlas(capsys, "--data-dir", ws, "prompts", "show", "answer", "--diff", first[1:])
    assert out == "No difference.\n"  # the reset version is the default, which is in use now


def test_set_reads_stdin_and_refuses_a_broken_prompt_in_one_sentence(capsys, ws, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("Records for {input_txt} and {input_text\n"))
    code, out, err = docatlas(capsys, "--data-dir", ws, "prompts", "set", "lightrag/extract")
    assert code == 1 and out == ""
    assert err == ("lightrag/extract was not saved: Line 1, column 13: {input_txt} is not a placeholder of this "
                   "prompt (did you mean {input_text}?) (and 2 more problems).\n")

    monkeypatch.setattr("sys.stdin", io.StringIO("Same? {first} / {second}"))
    code, out, err = docatlas(capsys, "--data-dir", ws, "prompts", "set", "same_entity", "-")
    assert code == 0 and out.startswith("Saved merge/same_entity as version 1.")

    code, _, err = docatlas(capsys, "--data-dir", ws, "prompts", "show", "lightrag/extrakt")
    assert code == 1 and err == "There is no prompt called 'lightrag/extrakt'. Did you mean lightrag/extract?\n"
    code, _, err = docatlas(capsys, "--data-dir", ws, "prompts", "set", "answer", "/no/such/file.txt")
    assert code == 1 and err.startswith("/no/such/file.txt could not be read")
    code, _, err = docatlas(capsys, "--data-dir", ws, "prompts", "show", "answer", "--version", "9")
    assert code == 1 and "has no version 9" in err


def test_export_then_import_into_another_workspace(capsys, ws, tmp_path, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("Keywords of {question}"))
    docatlas(capsys, "--data-dir", ws, "prompts", "set", "keywords")
    out_file = tmp_path / "mine.json"
    code, out, _ = docatlas(capsys, "--data-dir", ws, "prompts", "export", str(out_file), "--changed")
    assert code == 0 and out == f"Wrote 1 prompts (1 changed here) to {out_file}.\n"
    other = str(tmp_path / "other")
    code, out, _ = docatlas(capsys, "--data-dir", other, "prompts", "import", str(out_file))
    assert code == 0 and "query/keywords -> query/keywords" in out and "Imported 1 prompts." in out
    code, out, _ = docatlas(capsys, "--data-dir", other, "prompts", "show", "keywords")
    assert out == "Keywords of {question}\n"


def test_import_of_seed_files(capsys, ws):
    lightrag = seed('PROMPTS["entity_extraction"] = ')
    code, out, _ = docatlas(capsys, "--data-dir", ws, "prompts", "import", str(lightrag), "--dry-run")
    assert code == 0 and "Can import 9:" in out and "Imported" not in out
    code, out, _ = docatlas(capsys, "--data-dir", ws, "prompts", "list", "--json")
    assert not any(r["edited"] for r in json.loads(out))

    optimized = seed("PROMPTS_OPTIMIZED")
    code, out, err = docatlas(capsys, "--data-dir", ws, "prompts", "import", str(optimized),
                              "--source", "PROMPTS_BALANCED")
    assert code == 0 and "Imported 3 prompts." in out
    assert "take effect with `ingest --profile compact`" in err

    rust = seed("pub const ENTITY_EXTRACTION_PROMPT")
    code, out, err = docatlas(capsys, "--data-dir", ws, "prompts", "import", str(rust))
    assert code == 1 and out == "" and err.count("\n") == 1 and "is not a Python prompt module" in err


def test_reextract_after_an_extraction_prompt_changed(capsys, ws, tmp_path, fake_ollama, monkeypatch):
    fake_ollama.responder = lightrag_responder
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    code, _, err = docatlas(capsys, "--data-dir", ws, "ingest", str(write_corpus(tmp_path / "docs")))
    assert code == 0, err
    code, out, _ = docatlas(capsys, "--data-dir", ws, "prompts", "reextract")
    assert out.startswith("Every extracted chunk was built with the extraction prompts in use")

    monkeypatch.setattr("sys.stdin", io.StringIO("Any record missing? YES or NO."))
    code, _, err = docatlas(capsys, "--data-dir", ws, "prompts", "set", "loop_check")
    assert code == 0 and "note: 3 of 3 extracted chunks were built with other extraction prompts" in err
    code, out, err = docatlas(capsys, "--data-dir", ws, "prompts", "reextract")
    assert code == 0 and "Extracted 3 of 3 chunks again" in out
    code, out, err = docatlas(capsys, "--data-dir", ws, "prompts", "list")
    assert "note:" not in err
