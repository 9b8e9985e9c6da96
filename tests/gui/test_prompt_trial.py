"""Trying a prompt on a chunk from the Prompts tab: the raw reply beside the records read from it,
a comparison with another version (records, tokens, time), and the graph left as it was."""

from __future__ import annotations

import json

import pytest
from docatlas.core.prompts.catalog import spec
from docatlas.gui.prompts.editor import TRIAL_TAB
from docatlas.gui.prompts.trial import NO_CHUNKS, NOT_EXTRACTION
from gui_helpers import wait_idle
from PySide6.QtCore import Qt
from test_prompt_editor import open_prompts, select_prompt

EXTRACT = spec("lightrag/extract").default_text()
BRIEF = "Write short descriptions.\n" + EXTRACT


@pytest.fixture
def ready(qtbot, make_window, corpus):
    """A window whose workspace holds the extracted corpus, on the Prompts tab."""
    window = make_window()
    window.documents_panel.add_paths([corpus])
    wait_idle(qtbot, window)
    panel = open_prompts(qtbot, window)
    panel.editor.tabs.setCurrentIndex(TRIAL_TAB)
    return panel


def graph_rows(store) -> tuple:
    """Everything of the graph (the reply cache may grow: trying fills it, so re-extraction is free)."""
    counts = {k: v for k, v in store.counts().items() if k != "cached_replies"}
    return (counts, store.query("SELECT * FROM chunk_entities ORDER BY rowid"),
            store.query("SELECT status, prompt_hash FROM chunks ORDER BY id"))


def try_it(qtbot, panel) -> None:
    with qtbot.waitSignal(panel.trial_finished, timeout=20_000):
        qtbot.mouseClick(panel.editor.trial.run_button, Qt.MouseButton.LeftButton)


def test_a_prompt_is_tried_on_a_chunk_without_touching_the_graph(qtbot, ready, server):
    trial = ready.editor.trial
    store = ready.workspace.store
    assert trial.chunk_combo.count() == 3 and trial.chunk_combo.currentText().startswith("alpha · chunk 1")
    assert trial.run_button.isEnabled() and not trial.note_label.isVisibleTo(trial)
    before = graph_rows(store)
    ready.editor.text_edit.setPlainText(BRIEF)  # unsaved: the editor's text is what is tried
    calls = len(server.requests)
    try_it(qtbot, ready)

    (run,) = ready.trial_runs
    result = trial.result_a
    assert result.title_label.text() == "This text" and not run.cached and run.result.calls == 2
    assert result.stats_label.text().startswith(f"{len(run.result.entities)} entities, ")
    assert "2 model calls" in result.stats_label.text()
    assert "--- reply 1 ---" in result.raw_view.toPlainText() and '("entity"<|>Maria Lopez' in \
        result.raw_view.toPlainText()
    names = {result.entity_table.item(r, 0).text() for r in range(result.entity_table.rowCount())}
    assert {"Maria Lopez", "Harbor Analytics", "Jonas Weber"} <= names
    assert result.relation_table.rowCount() == len(run.result.relations) > 0
    assert not trial.result_b.isVisibleTo(trial)
    assert trial.status_label.text() == "Done; nothing was added to the graph."
    sent = [r for r in server.requests[calls:] if r["path"] == "/api/chat"]
    assert sent[0]["body"]["messages"][0]["content"].startswith("Write short descriptions.")
    assert graph_rows(store) == before
    assert ready.editor.is_dirty()  # still unsaved


def test_two_versions_are_compared_side_by_side(qtbot, ready):
    trial = ready.editor.trial
    ready.editor.text_edit.setPlainText(BRIEF)
    trial.compare_combo.setCurrentIndex(trial.compare_combo.findText("The default"))
    try_it(qtbot, ready)
    mine, default = ready.trial_runs
    assert (mine.label, default.label) == ("This text", "The default")
    assert trial.result_b.isVisibleTo(trial) and trial.result_b.title_label.text() == "The default"
    # the default prompt is what ingestion used: its replies come from the cache
    assert default.cached and "(from the cache)" in trial.result_b.stats_label.text()
    assert mine.prompt_tokens > default.prompt_tokens
    assert f"prompt {mine.prompt_tokens:,} tokens" in trial.result_a.stats_label.text()


def test_asking_again_skips_the_cache(qtbot, ready, server):
    trial = ready.editor.trial
    trial.fresh_check.setChecked(True)
    try_it(qtbot, ready)  # the default prompt, which ingestion already asked
    (run,) = ready.trial_runs
    assert not run.cached and run.result.calls == 2


def test_a_gleaning_prompt_is_tried_with_a_gleaning_round(qtbot, ready, server):
    select_prompt(qtbot, ready, "lightrag/glean")
    ready.editor.text_edit.setPlainText("Anything left? Write only those records, then {completion_delimiter}")
    calls = len(server.requests)
    try_it(qtbot, ready)
    prompts = [json.dumps(r["body"]["messages"]) for r in server.requests[calls:] if r["path"] == "/api/chat"]
    assert any("Anything left?" in p for p in prompts)


def test_only_extraction_prompts_can_be_tried(qtbot, ready):
    select_prompt(qtbot, ready, "merge/summarize")
    trial = ready.editor.trial
    assert not trial.run_button.isEnabled() and trial.note_label.text() == NOT_EXTRACTION


def test_trying_needs_a_document(qtbot, make_window):
    panel = open_prompts(qtbot, make_window())
    trial = panel.editor.trial
    assert trial.chunk_combo.count() == 0 and not trial.run_button.isEnabled()
    assert trial.note_label.text() == NO_CHUNKS


def test_a_model_failure_is_one_sentence(qtbot, ready, server):
    server.fail_next("http500", times=10)
    ready.editor.text_edit.setPlainText("Once more.\n" + EXTRACT)
    try_it(qtbot, ready)
    assert ready.trial_runs == []
    status = ready.editor.trial.status_label.text()
    assert status and status.count(". ") == 0 and status.endswith(".")
