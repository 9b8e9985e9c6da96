"""The user's prompts in the workspace database: overrides, versions, resets, sets, migration 4."""

from __future__ import annotations

import json
import sqlite3

import pytest
from docatlas.core.prompts import store as ps
from docatlas.core.prompts.catalog import spec
from docatlas.core.prompts.importer import import_file
from docatlas.core.storage.database import MIGRATIONS, SCHEMA_VERSION, Store

EXTRACT = spec("lightrag/extract").default_text()


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "ws" / "docatlas.sqlite") as opened:
        yield opened


def test_a_saved_prompt_is_used_and_kept_as_a_version(store):
    assert ps.effective(store, "lightrag/extract") == EXTRACT and ps.overrides(store) == {}
    mine = "Keep names short.\n" + EXTRACT
    version = ps.save_prompt(store, "lightrag/extract", mine, "shorter names")
    assert version is not None and version.note == "shorter names" and not version.is_reset
    assert ps.effective(store, "lightrag/extract") == mine
    assert ps.profile_for(store, "lightrag").prompts["extract"] == mine
    assert ps.profile_for(store, "compact").prompts["extract"] == spec("compact/extract").default_text()
    assert ps.save_prompt(store, "lightrag/extract", mine, "again") is None  # nothing changed: no version
    assert [v.note for v in ps.versions(store, "lightrag/extract")] == ["shorter names"]


def test_windows_line_endings_are_kept_as_plain_newlines(store):
    ps.save_prompt(store, "merge/same_entity", "Same?\r\n{first}\r\n{second}")
    assert ps.effective(store, "merge/same_entity") == "Same?\n{first}\n{second}"


def test_an_invalid_prompt_is_refused_with_its_problems(store):
    with pytest.raises(ps.PromptError) as refused:
        ps.save_prompt(store, "lightrag/extract", "Read {input_txt} {")
    problems = refused.value.problems
    assert [(p.line, p.column) for p in problems[:2]] == [(1, 6), (1, 18)]
    assert "did you mean {input_text}?" in problems[0].message
    assert "must contain {input_text}" in problems[-1].message
    assert refused.value.message.startswith("The lightrag/extract prompt was not saved: Line 1, column 6")
    assert ps.overrides(store) == {} and ps.versions(store, "lightrag/extract") == []
    with pytest.raises(ps.PromptError, match=r"no prompt called 'lightrag/extrct'\. Did you mean lightrag/extract"):
        ps.save_prompt(store, "lightrag/extrct", EXTRACT)


def test_reset_goes_back_to_the_default_and_is_a_version_too(store):
    assert ps.reset_prompt(store, "merge/summarize") is None  # nothing to reset
    ps.save_prompt(store, "merge/summarize", "Combine {descriptions}.", "terse")
    reset = ps.reset_prompt(store, "merge/summarize", "")
    assert reset is not None and reset.is_reset and reset.note == ps.RESET_NOTE
    assert ps.effective(store, "merge/summarize") == spec("merge/summarize").default_text()
    history = ps.versions(store, "merge/summarize")
    assert [(v.text is None, v.note) for v in history] == [(True, ps.RESET_NOTE), (False, "terse")]
    assert history[0].id > history[1].id and history[1].label.startswith(f"v{history[1].id} ")


def test_saving_the_default_text_again_is_a_reset(store):
    ps.save_prompt(store, "merge/summarize", "Combine {descriptions}.")
    again = ps.save_prompt(store, "merge/summarize", spec("merge/summarize").default_text(), "back")
    assert again is not None and again.is_reset and again.note == "back"
    assert ps.overrides(store) == {}


def test_answer_modes_fall_back_to_the_users_all_modes_answer(store):
    ps.save_prompt(store, "query/answer", "Answer from {context}.")
    assert ps.default_for(store, "query/answer_naive") == "Answer from {context}."
    assert ps.answer_template(store, "naive") == "Answer from {context}."
    ps.save_prompt(store, "query/answer_naive", "Naive answer from {context}.")
    prompts = ps.query_prompts(store)
    assert prompts["answer_naive"] == "Naive answer from {context}."
    assert prompts["answer_mix"] == "Answer from {context}."
    assert prompts["answer"] == "Answer from {context}."
    # resetting the mode's own prompt returns to the all-modes one, not to the bundled text
    ps.reset_prompt(store, "query/answer_naive")
    assert ps.effective(store, "query/answer_naive") == "Answer from {context}."


def test_the_fingerprint_of_all_prompts_moves_with_any_change(store):
    before = ps.prompts_fingerprint(store)
    ps.save_prompt(store, "query/keywords", "Keywords of: {question}")
    assert ps.prompts_fingerprint(store) != before
    ps.reset_prompt(store, "query/keywords")
    assert ps.prompts_fingerprint(store) == before


def test_diff_between_versions():
    diff = ps.diff_texts("one\ntwo\nthree", "one\n2\nthree", "v1", "v2")
    assert diff.splitlines()[:2] == ["--- v1", "+++ v2"]
    assert "-two" in diff and "+2" in diff
    assert ps.diff_texts("same", "same", "a", "b") == ""


def test_a_prompt_set_travels_to_another_workspace(store, tmp_path):
    ps.save_prompt(store, "query/answer", "Answer from {context}.", "plain")
    ps.save_prompt(store, "lightrag/glean", "More records, then {completion_delimiter}")
    data = ps.export_set(store)
    assert data["format"] == ps.SET_FORMAT and [p["key"] for p in data["prompts"]] == ["lightrag/glean", "query/answer"]
    assert data["prompts"][1]["note"] == "plain"
    data["prompts"].append({"key": "query/nothing", "text": "x"})
    data["prompts"].append({"key": "merge/summarize", "text": "no placeholder"})
    path = tmp_path / "set.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with Store(tmp_path / "other" / "docatlas.sqlite") as other:
        report, saved = import_file(other, path)
        assert sorted(saved) == ["lightrag/glean", "query/answer"]
        assert ps.effective(other, "query/answer") == "Answer from {context}."
        assert ps.versions(other, "query/answer")[0].note == "Imported from set.json"
        reasons = dict(report.skipped)
        assert "no prompt called 'query/nothing'" in reasons["query/nothing"]
        assert "must contain {descriptions}" in reasons["merge/summarize"]


def test_a_set_file_must_be_a_docatlas_set():
    with pytest.raises(ValueError, match="not a DocAtlas prompt set"):
        ps.read_set({"prompts": []})
    with pytest.raises(ValueError, match="newer DocAtlas"):
        ps.read_set({"format": ps.SET_FORMAT, "version": 99, "prompts": []})


def test_a_version_three_workspace_gets_the_prompt_tables(tmp_path):
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    for migration in MIGRATIONS[:3]:
        conn.executescript(migration)
    conn.executescript("""
        INSERT INTO documents VALUES (1, '/docs/a.txt', 'a', 'txt', 'h', 1, 'done', NULL, 0, 0);
        INSERT INTO chunks(document_id, idx, text, tokens, status, profile, updated_at)
            VALUES (1, 0, 'Jonas Weber builds tide sensors in Lisbon.', 9, 'done', 'lightrag', 0);
        PRAGMA user_version = 3;
    """)
    conn.close()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION >= 4
        assert store.query("SELECT prompt_hash FROM chunks") == [{"prompt_hash": None}]
        # extracted before prompts could change: counted as built with the bundled prompts
        assert ps.staleness(store, "lightrag") == (0, 1)
        assert ps.staleness(store, "compact") == (1, 1)
        ps.save_prompt(store, "lightrag/loop_check", "Anything missing? YES or NO.")
        assert ps.stale_chunks(store, "lightrag") == [1]
