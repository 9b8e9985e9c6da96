"""The Prompts tab: editing with live checks and highlighting, token counts, saving, reset,
drafts, versions and their diffs."""

from __future__ import annotations

import pytest
from docatlas.core.prompts import store as prompt_store
from docatlas.core.prompts.catalog import spec, token_count
from docatlas.gui.prompts.editor import DEFAULT_TAB, VERSIONS_TAB
from docatlas.gui.prompts.highlighter import KNOWN_COLOR
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCharFormat

EXTRACT = spec("lightrag/extract").default_text()
MINE = "Keep every description under twenty words.\n" + EXTRACT


def open_prompts(qtbot, window):
    """Show the Prompts tab and wait until the model's context length is known."""
    window.tabs.setCurrentWidget(window.prompts_tab)
    panel = window.prompts_tab
    qtbot.waitUntil(lambda: panel.context_length is not None and panel.context_task is None, timeout=10_000)
    wait_prompts(qtbot, panel)
    return panel


def wait_prompts(qtbot, panel) -> None:
    """Wait until the tab's background reads have landed (the editor shows what was asked for)."""
    qtbot.waitUntil(lambda: not panel.reading, timeout=10_000)


def select_prompt(qtbot, panel, key: str) -> None:
    """Pick a prompt in the list and wait until the editor shows it."""
    panel.select(key)
    wait_prompts(qtbot, panel)


def save(qtbot, panel, note: str = "") -> None:
    """Type a note and press Save; wait until the store has it and the tab shows it."""
    panel.editor.note_edit.setText(note)
    with qtbot.waitSignal(panel.changed, timeout=10_000):
        qtbot.mouseClick(panel.editor.save_button, Qt.MouseButton.LeftButton)


def formats_of(editor, line: int) -> list:
    """The highlighter's format ranges on one line of the editor."""
    return editor.text_edit.document().findBlockByNumber(line).layout().formats()


@pytest.fixture
def panel(qtbot, make_window):
    return open_prompts(qtbot, make_window(extraction__profile="lightrag"))


def test_the_tab_lists_every_prompt_and_opens_on_the_extraction_prompt_in_use(panel):
    editor = panel.editor
    assert editor.key == "lightrag/extract" and editor.text() == EXTRACT
    assert editor.state_label.text() == "Default" and not editor.save_button.isEnabled()
    assert not editor.reset_button.isEnabled() and not editor.problems_label.isVisibleTo(editor)
    assert "{input_text}" in editor.purpose_label.text()
    titles = {panel.tree.topLevelItem(i).text(0) for i in range(panel.tree.topLevelItemCount())}
    assert {"Extraction: lightrag (in use)", "Extraction: compact", "Merging", "Questions"} <= titles
    assert len(panel._items) == 36  # six profiles of four prompts, two merge prompts, ten for questions
    editor.tabs.setCurrentIndex(DEFAULT_TAB)
    assert editor.default_view.isReadOnly() and editor.default_view.toPlainText() == EXTRACT


def test_problems_are_listed_with_line_and_column_marked_and_block_saving(panel):
    editor = panel.editor
    editor.text_edit.setPlainText("Records for {input_txt}\nand {input_text")
    assert not editor.save_button.isEnabled() and editor.problems_label.isVisibleTo(editor)
    shown = editor.problems_label.text().splitlines()
    assert shown[0] == ("Line 1, column 13: {input_txt} is not a placeholder of this prompt "
                        "(did you mean {input_text}?).")
    assert "Line 2, column 5: this { is never closed." in shown
    assert shown[-1].startswith("This prompt must contain {input_text}")
    wavy = QTextCharFormat.UnderlineStyle.WaveUnderline
    assert any((f.start, f.length) == (12, 11) and f.format.underlineStyle() == wavy for f in formats_of(editor, 0))
    assert any(f.start == 4 and f.format.underlineStyle() == wavy for f in formats_of(editor, 1))

    editor.text_edit.setPlainText("Records for {input_text} in {language}")
    assert editor.save_button.isEnabled() and not editor.problems_label.isVisibleTo(editor)
    known = [f for f in formats_of(editor, 0) if f.format.foreground().color() == KNOWN_COLOR]
    assert [(f.start, f.length) for f in known] == [(12, 12), (28, 10)]


def test_save_keeps_a_version_and_reset_goes_back(qtbot, panel):
    window = panel.window()
    editor = panel.editor
    editor.text_edit.setPlainText(MINE)
    assert editor.discard_button.isEnabled()
    save(qtbot, panel, "shorter descriptions")
    store = window.workspace.store
    assert prompt_store.effective(store, "lightrag/extract") == MINE
    (version,) = prompt_store.versions(store, "lightrag/extract")
    assert version.note == "shorter descriptions"
    assert editor.state_label.text() == f"Yours, {version.label}" and editor.reset_button.isEnabled()
    assert not editor.save_button.isEnabled() and editor.note_edit.text() == ""
    assert panel._items["lightrag/extract"].text(0) == "Extraction — yours"
    assert window.statusBar().currentMessage() == "Saved Extraction (lightrag/extract)."

    with qtbot.waitSignal(panel.changed, timeout=10_000):
        qtbot.mouseClick(editor.reset_button, Qt.MouseButton.LeftButton)
    assert editor.text() == EXTRACT and editor.state_label.text() == "Default"
    assert prompt_store.overrides(store) == {}
    assert [v.is_reset for v in prompt_store.versions(store, "lightrag/extract")] == [True, False]
    assert panel._items["lightrag/extract"].text(0) == "Extraction"


def test_unsaved_edits_stay_as_drafts_while_looking_at_other_prompts(qtbot, panel):
    editor = panel.editor
    editor.text_edit.setPlainText(MINE)
    assert panel._items["lightrag/extract"].text(0) == "Extraction •"
    select_prompt(qtbot, panel, "lightrag/glean")
    assert editor.key == "lightrag/glean" and editor.text() == spec("lightrag/glean").default_text()
    select_prompt(qtbot, panel, "lightrag/extract")
    assert editor.text() == MINE and editor.save_button.isEnabled()
    editor.discard_button.click()
    assert editor.text() == EXTRACT and panel._items["lightrag/extract"].text(0) == "Extraction"


def test_versions_show_diffs_and_an_old_one_can_be_loaded_back(qtbot, panel):
    editor = panel.editor
    select_prompt(qtbot, panel, "merge/same_entity")
    editor.text_edit.setPlainText("Same thing?\n{first}\n{second}\nYES or NO.")
    save(qtbot, panel, "first try")
    editor.text_edit.setPlainText("Are these one thing?\n{first}\n{second}\nAnswer YES or NO.")
    save(qtbot, panel, "second try")
    editor.tabs.setCurrentIndex(VERSIONS_TAB)
    versions = editor.versions
    labels = [versions.version_list.item(i).text() for i in range(versions.version_list.count())]
    assert labels[0].endswith("— second try") and labels[1].endswith("— first try") and labels[2] == "Default"

    versions.select(0)
    assert versions.diff_view.toPlainText().startswith("The editor holds the same text as v")
    versions.select(0, 1)
    diff = versions.diff_view.toPlainText().splitlines()
    assert diff[0].startswith("--- v") and diff[0].endswith("first try") and diff[1].endswith("second try")
    assert "-Same thing?" in diff and "+Are these one thing?" in diff
    versions.select(2)
    assert "+Are these one thing?" in versions.diff_view.toPlainText()  # default -> the editor

    versions.select(1)
    qtbot.mouseClick(versions.load_button, Qt.MouseButton.LeftButton)
    assert editor.tabs.currentIndex() == 0 and editor.text() == "Same thing?\n{first}\n{second}\nYES or NO."
    save(qtbot, panel, "back to the first")
    assert [v.note for v in prompt_store.versions(panel.workspace.store, "merge/same_entity")] == [
        "back to the first", "second try", "first try"]


def test_token_counts_follow_the_text_and_warn_past_the_context(qtbot, panel):
    editor = panel.editor
    label = editor.tokens_label.text()
    assert label.startswith(f"Prompt: {token_count(EXTRACT):,} tokens · filled in with a made-up passage of 1200")
    assert "of the 32,768 qwen2.5:7b reads, with 2,048 kept for the reply." in label
    editor.text_edit.setPlainText("Short {input_text}")
    assert editor.tokens_label.text().startswith(f"Prompt: {token_count('Short {input_text}')} tokens")
    editor.text_edit.setPlainText("word " * 33_000 + "{input_text}")
    assert "too long, it needs about" in editor.tokens_label.text()
    assert editor.tokens_label.styleSheet() != ""
    select_prompt(qtbot, panel, "query/answer")
    assert "with 1,024 kept for the reply" in editor.tokens_label.text()


def test_an_answer_mode_uses_the_all_modes_prompt_until_it_has_its_own(qtbot, panel):
    editor = panel.editor
    select_prompt(qtbot, panel, "query/answer")
    editor.text_edit.setPlainText("Answer from {context} as {response_type}.")
    save(qtbot, panel)
    select_prompt(qtbot, panel, "query/answer_naive")
    assert editor.state_label.text() == "Uses the all-modes answer prompt"
    assert editor.text() == "Answer from {context} as {response_type}."
    assert "uses the all-modes answer prompt" in editor.default_note.text()
    editor.text_edit.setPlainText("Naive: {context}\nEarlier: {history}")
    save(qtbot, panel, "naive only")
    prompts = prompt_store.query_prompts(panel.workspace.store)
    assert prompts["answer_naive"] == "Naive: {context}\nEarlier: {history}"
    assert prompts["answer_mix"] == "Answer from {context} as {response_type}."
