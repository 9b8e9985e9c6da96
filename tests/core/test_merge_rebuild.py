"""`docatlas rebuild`: the graph re-derived from stored records and cached replies, with no
request to the model; and the ingest flags for entity types, language and the loop check."""

from __future__ import annotations

import pytest
from docatlas.cli import main
from docatlas.core.base import paths
from docatlas.core.base.settings import save_settings
from docatlas.core.jobs.reextract import rederive
from docatlas.core.storage.database import Store
from fixtures.scripted_model import PROFILES, responder_for
from helpers import docatlas, expected_graph, settings_for, write_corpus


@pytest.fixture
def model(fake_ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    fake_ollama.responder = responder_for(None)
    return fake_ollama



def graph(ws: str) -> tuple[list[dict], list[dict]]:
    with Store(paths.database_path(paths.data_dir(ws))) as store:
        return (store.query("SELECT * FROM entities ORDER BY key"),
                store.query("SELECT * FROM relations ORDER BY source_key, target_key"))


def chat_count(server) -> int:
    return sum(r["path"] == "/api/chat" for r in server.requests)


def ingest(capsys, tmp_path, *flags: str) -> str:
    ws = str(tmp_path / "ws")
    code, _, err = docatlas(capsys, "--data-dir", ws, "ingest", str(write_corpus(tmp_path / "docs")), *flags)
    assert code == 0, err
    return ws


def damage(ws: str) -> None:
    """What an older parser or older merge rules might have left: a lost record, odd keys."""
    with Store(paths.database_path(paths.data_dir(ws))) as store, store.transaction() as conn:
        conn.execute("DELETE FROM chunk_entities WHERE key = 'maria lopez'")
        conn.execute("UPDATE chunk_relations SET source_key = upper(source_key)")


@pytest.mark.parametrize("profile", PROFILES)
def test_rebuild_reparses_cached_replies_without_a_request(model, capsys, tmp_path, profile):
    ws = ingest(capsys, tmp_path, "--profile", profile)
    before_graph, before = graph(ws), chat_count(model)
    damage(ws)
    code, out, _ = docatlas(capsys, "--data-dir", ws, "rebuild")
    assert code == 0
    assert "3 chunks (3 re-read from cached replies, 1 changed, 0 kept their records)" in out
    assert chat_count(model) == before  # not one request
    assert graph(ws) == before_graph


def test_rebuild_with_kept_records_rekeys_and_remerges(model, capsys, tmp_path):
    ws = ingest(capsys, tmp_path)
    before_graph, before = graph(ws), chat_count(model)
    with Store(paths.database_path(paths.data_dir(ws))) as store, store.transaction() as conn:
        conn.execute("UPDATE chunk_entities SET key = upper(key)")  # keys from other normalisation rules
        conn.execute("DELETE FROM entities")
    code, out, _ = docatlas(capsys, "--data-dir", ws, "rebuild", "--keep-records")
    assert code == 0 and "0 re-read" in out
    assert graph(ws) == before_graph and chat_count(model) == before


def test_chunks_without_cached_replies_keep_their_records(model, capsys, tmp_path):
    ws = ingest(capsys, tmp_path)
    before_graph = graph(ws)
    with Store(paths.database_path(paths.data_dir(ws))) as store, store.transaction() as conn:
        conn.execute("DELETE FROM llm_cache")
        conn.execute("DELETE FROM relations")
    before = chat_count(model)
    code, out, _ = docatlas(capsys, "--data-dir", ws, "rebuild")
    assert code == 0 and "0 re-read from cached replies, 0 changed, 3 kept their records" in out
    assert graph(ws) == before_graph and chat_count(model) == before


def test_rebuild_replays_loop_checks_too(model, tmp_path):
    settings = settings_for(model, loop_check=True, gleaning=2, glean_min_missing=0)  # every round asked
    save_settings(settings, paths.settings_path())
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        from docatlas.core.jobs.ingest import index

        list(index(store, [write_corpus(tmp_path / "docs")], settings))
        assert chat_count(model) == 12  # per chunk: first pass, YES, glean, NO
        entities = store.query("SELECT * FROM entities ORDER BY key")
        with store.transaction() as conn:
            conn.execute("DELETE FROM chunk_relations")
        # settings changed since: no loop check, no gleaning; the replay still follows what happened
        report = rederive(store, settings_for(model, gleaning=0))
        assert (report.reparsed, report.changed, report.kept) == (3, 3, 0)
        assert store.query("SELECT * FROM entities ORDER BY key") == entities
        assert {frozenset((r["source_key"], r["target_key"])) for r in store.query("SELECT * FROM relations")} == (
            expected_graph()[1])
    assert chat_count(model) == 12


def test_ingest_flags_reach_the_prompt(model, capsys, tmp_path):
    ingest(capsys, tmp_path, "--profile", "compact", "--entity-types", "Scientist, lab,scientist",
           "--language", "Portuguese", "--loop-check", "--gleaning", "2")
    bodies = [r["body"] for r in model.requests if r["path"] == "/api/chat"]
    first = bodies[0]["messages"][0]["content"]
    assert "one of: scientist, lab." in first and "in Portuguese" in first
    assert any("YES or NO" in b["messages"][-1]["content"] for b in bodies)


@pytest.mark.parametrize(("flags", "message"), [(("--entity-types", " , "), "at least one type")])
def test_bad_ingest_flags_are_refused(model, capsys, tmp_path, flags, message):
    with pytest.raises(SystemExit):
        main(["ingest", str(tmp_path), *flags])
    assert message in capsys.readouterr().err
