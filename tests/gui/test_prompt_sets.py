"""Prompt sets in the Prompts tab: import (DocAtlas sets, LightRAG/GraphRAG files, refusals),
export, and the banner that offers to extract again after an extraction prompt changed."""

from __future__ import annotations

import json

from core.test_prompt_import import seed
from docatlas.core.prompts import store as prompt_store
from gui_helpers import wait_idle
from PySide6.QtCore import Qt
from test_prompt_editor import open_prompts, save, select_prompt, wait_prompts


def test_a_lightrag_file_is_imported_after_the_user_saw_the_report(qtbot, make_window):
    window = make_window(extraction__profile="lightrag")
    panel = open_prompts(qtbot, window)
    path = seed('PROMPTS["entity_extraction"] = ')
    asked: list[tuple] = []

    def confirm(title, text, action="OK", details=""):
        asked.append((title, text, action, details))
        return True

    panel.files.choose_import = lambda: path
    window.interaction.confirm = confirm
    with qtbot.waitSignal(panel.changed, timeout=10_000):
        qtbot.mouseClick(panel.import_button, Qt.MouseButton.LeftButton)
    ((title, text, action, details),) = asked
    assert (title, action) == ("Import Prompts", "Import")
    assert text == f"{path.name} holds 9 prompts DocAtlas can use; import them?"
    assert "PROMPTS[\"rag_response\"] -> query/answer" in details and "Not imported (3):" in details
    mine = prompt_store.overrides(window.workspace.store)
    assert len(mine) == 9 and "{context}" in mine["query/answer"]
    assert window.statusBar().currentMessage() == f"Imported 9 prompts from {path.name}."
    assert panel._items["query/answer"].text(0) == "Answer (all modes) — yours"
    assert panel.editor.text() == mine["lightrag/extract"]  # the prompt shown was reloaded
    (version,) = prompt_store.versions(window.workspace.store, "lightrag/extract")
    assert version.note == f"Imported from {path.name}"


def test_declining_the_import_changes_nothing(qtbot, make_window):
    window = make_window()
    panel = open_prompts(qtbot, window)
    panel.files.choose_import = lambda: seed("GRAPH_EXTRACTION_PROMPT = ")
    window.interaction.confirm = lambda *args, **kw: False
    panel.sets.import_prompts()
    assert panel.sets.last_import is not None and panel.sets.last_import.profile == "graphrag"
    assert panel.write_task is None and prompt_store.overrides(window.workspace.store) == {}


def test_a_file_that_is_not_python_is_refused_in_one_sentence(qtbot, make_window):
    window = make_window()
    panel = open_prompts(qtbot, window)
    told: list[tuple] = []
    panel.files.choose_import = lambda: seed("export const ENTITY_EXTRACTION_SYSTEM")
    window.interaction.inform = lambda title, text, warning=True: told.append((title, text))
    panel.sets.import_prompts()
    ((title, text),) = told
    assert title == "Cannot Import Prompts" and "is not a Python prompt module" in text
    assert "TypeScript" in text and prompt_store.overrides(window.workspace.store) == {}


def test_export_writes_a_set_that_another_workspace_imports(qtbot, make_window, tmp_path):
    window = make_window()
    panel = open_prompts(qtbot, window)
    select_prompt(qtbot, panel, "query/keywords")
    panel.editor.text_edit.setPlainText("Search phrases for: {question}\n{history}")
    save(qtbot, panel, "short")
    out = tmp_path / "mine.json"
    panel.files.choose_export = lambda suggested: out
    qtbot.mouseClick(panel.export_button, Qt.MouseButton.LeftButton)
    wait_prompts(qtbot, panel)  # the set is read in the background, then written
    data = json.loads(out.read_text(encoding="utf-8"))
    assert [(p["key"], p["note"]) for p in data["prompts"]] == [("query/keywords", "short")]
    assert window.statusBar().currentMessage() == f"Wrote 1 prompts to {out}."

    assert window.open_workspace(tmp_path / "other")
    other = open_prompts(qtbot, window)
    assert other is not panel and prompt_store.overrides(window.workspace.store) == {}
    other.files.choose_import = lambda: out
    window.interaction.confirm = lambda *args, **kw: True
    with qtbot.waitSignal(other.changed, timeout=10_000):
        other.sets.import_prompts()
    keywords = prompt_store.effective(window.workspace.store, "query/keywords")
    assert keywords == "Search phrases for: {question}\n{history}"


def test_a_changed_extraction_prompt_offers_to_extract_again(qtbot, make_window, corpus):
    window = make_window(extraction__profile="lightrag")
    window.documents_panel.add_paths([corpus])
    wait_idle(qtbot, window)
    panel = open_prompts(qtbot, window)
    store = window.workspace.store
    graph = store.counts()
    assert not panel.stale_banner.isVisibleTo(panel)

    select_prompt(qtbot, panel, "compact/glean")  # a profile not in use: the graph is not older for it
    panel.editor.text_edit.setPlainText("More records please, then {completion_delimiter}")
    save(qtbot, panel)
    assert not panel.stale_banner.isVisibleTo(panel)

    select_prompt(qtbot, panel, "lightrag/glean")
    panel.editor.text_edit.setPlainText("Write only the missing records, then {completion_delimiter}")
    save(qtbot, panel, "shorter")
    assert panel.stale_banner.isVisibleTo(panel)
    assert panel.stale_label.text().startswith("3 of 3 extracted chunks were built with other extraction prompts")

    asked: list[str] = []
    window.interaction.confirm = lambda title, text, action="OK", details="": asked.append(text) or True
    busy: list[bool] = []  # the run may end before the tab's read does: note every state it passes
    window.ingestion.state_changed.connect(lambda: busy.append(window.ingestion.busy))
    with qtbot.waitSignal(panel.changed, timeout=10_000):
        qtbot.mouseClick(panel.reextract_button, Qt.MouseButton.LeftButton)
    assert asked == ["Extract 3 chunks again with the lightrag prompts in use?"]
    wait_idle(qtbot, window)
    assert True in busy  # the run started as soon as the chunks were pending
    assert not panel.stale_banner.isVisibleTo(panel)
    assert prompt_store.staleness(store, "lightrag") == (0, 3)
    after = store.counts()
    assert (after["entities"], after["relations"], after["chunks_pending"]) == (graph["entities"],
                                                                               graph["relations"], 0)


def test_extract_again_waits_for_a_run_in_progress(qtbot, make_window, corpus):
    window = make_window()
    panel = open_prompts(qtbot, window)
    window.documents_panel.add_paths([corpus])
    assert window.ingestion.busy
    panel.sets.extract_again()
    assert window.statusBar().currentMessage().startswith("Wait for the current run to finish")
    wait_idle(qtbot, window)


def test_a_file_with_several_sets_asks_which_and_says_which_profile(qtbot, make_window):
    window = make_window()
    panel = open_prompts(qtbot, window)
    path = seed("PROMPTS_OPTIMIZED")
    offered: list[list[str]] = []
    asked: list[str] = []
    panel.files.choose_import = lambda: path
    panel.files.choose_source = lambda name, sources: offered.append(sources) or "PROMPTS_BALANCED"
    window.interaction.confirm = lambda title, text, action="OK", details="": asked.append(text) or True
    with qtbot.waitSignal(panel.changed, timeout=10_000):
        panel.sets.import_prompts()
    assert offered == [["PROMPTS_OPTIMIZED", "PROMPTS_BALANCED"]]
    assert asked[0].endswith("Its extraction prompts are for the compact profile; choose that profile to "
                             "extract with them.")
    assert "BOTH concrete and abstract" in prompt_store.effective(window.workspace.store, "compact/extract")
    assert panel._items["compact/extract"].text(0) == "Extraction — yours"


def test_choosing_another_profile_is_saved_and_dates_the_graph(qtbot, make_window, corpus):
    from docatlas.core.base import paths
    from docatlas.core.base.settings import load_settings

    window = make_window(extraction__profile="lightrag")
    window.documents_panel.add_paths([corpus])
    wait_idle(qtbot, window)
    panel = open_prompts(qtbot, window)
    assert panel.profile_combo.currentText() == "lightrag"
    panel.profile_combo.setCurrentIndex(panel.profile_combo.findData("compact"))
    panel.profile_combo.activated.emit(panel.profile_combo.currentIndex())
    wait_prompts(qtbot, panel)
    assert window.settings.extraction.profile == "compact"
    assert load_settings(paths.settings_path()).extraction.profile == "compact"
    assert panel._groups["compact"].text(0) == "Extraction: compact (in use)"
    assert panel.stale_banner.isVisibleTo(panel) and "the compact prompts in use" in panel.stale_label.text()
