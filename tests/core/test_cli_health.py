"""The CLI's extraction health: the summary `ingest` ends with, `status` per document,
`ungrounded` (list and accept), and `--profile auto` remembered per model."""

from __future__ import annotations

import json

import pytest
from docatlas.cli.review import terminal_safe
from docatlas.core.storage import health
from docatlas.core.storage.database import Store
from fixtures.scripted_model import detect_profile, invented_responder, responder_for
from helpers import DOCUMENTS, docatlas, write_corpus


@pytest.fixture
def host(fake_ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    return fake_ollama


def test_a_run_where_no_chunk_gives_an_entity_says_so_and_is_not_a_success(host, capsys, tmp_path):
    host.responder = lambda request: "I am sorry, I could not find any entities in this passage."
    ws = str(tmp_path / "ws")
    code, out, err = docatlas(capsys, "--data-dir", ws, "ingest", str(write_corpus(tmp_path / "docs")))
    assert code == 3
    assert "0 of 3 chunks gave entities" in out
    assert ("3 of 3 chunks gave no entity: the model may be too small or the profile unsuited; "
            "try the typing profile (--profile typing).") in err
    code, out, _ = docatlas(capsys, "--data-dir", ws, "status")
    assert code == 0 and out.count("health: 0 of 1 chunks gave entities") == 3 and "replies: prose" in out
    status = json.loads(docatlas(capsys, "--data-dir", ws, "status", "--json")[1])
    assert [d["health"]["no_entity"] for d in status["documents"]] == [1, 1, 1]


def test_a_healthy_run_ends_with_its_figures_and_exit_zero(host, capsys, tmp_path):
    host.responder = responder_for("lightrag")
    code, out, err = docatlas(capsys, "--data-dir", str(tmp_path / "ws"), "ingest", str(write_corpus(tmp_path / "d")))
    assert code == 0, err
    assert "Extraction health: 3 of 3 chunks gave entities" in out and "0 held back for review" in out


def test_ungrounded_lists_what_was_held_back_and_accept_adds_it(host, capsys, tmp_path):
    host.responder = invented_responder("Felix Mexopolar")
    ws = str(tmp_path / "ws")
    docatlas(capsys, "--data-dir", ws, "ingest", str(write_corpus(tmp_path / "docs")))
    code, out, _ = docatlas(capsys, "--data-dir", ws, "ungrounded")
    assert code == 0 and f"{2 * len(DOCUMENTS)} records wait for review" in out
    assert terminal_safe("Felix\x1b[31m\x07") == "Felix?[31m?"  # model output never reaches a terminal raw
    records = json.loads(docatlas(capsys, "--data-dir", ws, "ungrounded", "--json")[1])
    first = next(r for r in records if r["kind"] == "entity")
    code, out, _ = docatlas(capsys, "--data-dir", ws, "ungrounded", "--accept", str(first["id"]))
    assert code == 0 and out.startswith("Added entity Felix Mexopolar (person) to the graph.")
    status = json.loads(docatlas(capsys, "--data-dir", ws, "status", "--json")[1])
    export = tmp_path / "g.json"
    docatlas(capsys, "--data-dir", ws, "export", str(export))
    assert "Felix Mexopolar" in {e["name"] for e in json.loads(export.read_text())["entities"]}
    assert status["entities"] > 0
    code, _, err = docatlas(capsys, "--data-dir", ws, "ungrounded", "--accept", "99999")
    assert code != 0 and "no ungrounded record 99999" in err


def test_profile_auto_keeps_the_profile_with_most_grounded_records_and_remembers_it(host, capsys, tmp_path):
    honest = responder_for(None)

    def json_only(request: dict) -> str:  # like SmolLM2: records only under a JSON grammar
        return honest(request) if detect_profile(request) == "json" else "Here are the entities you asked for."

    host.responder = json_only
    ws = tmp_path / "ws"
    code, out, err = docatlas(capsys, "--data-dir", str(ws), "ingest", str(write_corpus(tmp_path / "docs")),
                              "--profile", "auto")
    assert code == 0, err
    assert "(profile json)" in out
    chats = len([r for r in host.requests if r["path"] == "/api/chat"])
    assert f"{chats} model calls" in out  # the trial's calls are counted too
    with Store(ws / "docatlas.sqlite") as store:
        assert health.chosen_profile(store, "qwen2.5:7b") == "json"
        assert {r["profile"] for r in store.query("SELECT profile FROM chunks")} == {"json"}
    calls = len(host.requests)
    more = write_corpus(tmp_path / "more", {"x.txt": "Ada Byron met Alan Turing."})
    docatlas(capsys, "--data-dir", str(ws), "ingest", str(more), "--profile", "auto")
    later = [r["body"] for r in host.requests[calls:] if r["path"] == "/api/chat"]
    assert later and all(isinstance(b.get("format"), dict) for b in later)  # no second trial: json straight away


def test_profile_auto_takes_the_profile_with_the_shortest_replies_among_those_as_good_as_the_best(
        host, capsys, tmp_path):
    host.responder = responder_for(None, varied=True)  # every profile grounds the same records
    ws = tmp_path / "ws"
    code, out, err = docatlas(capsys, "--data-dir", str(ws), "ingest", str(write_corpus(tmp_path / "docs")),
                              "--profile", "auto")
    assert code == 0, err
    assert "(profile lean)" in out  # names, types and links: the fewest reply tokens for the same graph
    with Store(ws / "docatlas.sqlite") as store:
        assert health.chosen_profile(store, "qwen2.5:7b") == "lean"


def test_profile_auto_passes_over_the_cheap_profile_when_it_grounds_less(host, capsys, tmp_path):
    honest = responder_for(None, varied=True)

    def skimming_when_lean(request: dict) -> str:  # under lean, this model drops all but the first line
        reply = honest(request)
        if detect_profile(request) != "lean":
            return reply
        return reply.splitlines()[0] + "\n<|COMPLETE|>"

    host.responder = skimming_when_lean
    ws = tmp_path / "ws"
    code, out, err = docatlas(capsys, "--data-dir", str(ws), "ingest", str(write_corpus(tmp_path / "docs")),
                              "--profile", "auto")
    assert code == 0, err
    with Store(ws / "docatlas.sqlite") as store:
        chosen = health.chosen_profile(store, "qwen2.5:7b")
    assert chosen not in (None, "lean") and f"(profile {chosen})" in out


def test_profile_auto_remembers_nothing_when_no_profile_grounds_a_record(host, capsys, tmp_path):
    host.responder = lambda request: "Nothing to extract here."
    ws = tmp_path / "ws"
    code, out, _ = docatlas(capsys, "--data-dir", str(ws), "ingest", str(write_corpus(tmp_path / "docs")),
                            "--profile", "auto")
    assert code == 3 and "(profile json)" in out
    with Store(ws / "docatlas.sqlite") as store:
        assert health.chosen_profile(store, "qwen2.5:7b") is None  # the next run tries again
