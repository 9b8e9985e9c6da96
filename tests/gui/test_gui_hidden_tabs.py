"""A hidden Prompts tab builds nothing when the workspace changes: its reads wait until the person
opens the tab, which then shows what the run added (the chunks to try on, one list however many)."""

from __future__ import annotations

import test_gui_tab_reads
from gui_helpers import wait_idle
from PySide6.QtCore import Qt
from test_prompt_editor import wait_prompts

log = test_gui_tab_reads.log  # traces every Store opened from now on


def click_tab(qtbot, window, title: str) -> None:
    """Click a tab of the window's tab bar by its title, as a person does."""
    bar = window.tabs.tabBar()
    index = next(i for i in range(bar.count()) if bar.tabText(i) == title)
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())


def test_the_prompts_tab_reads_the_run_when_it_is_opened_not_while_hidden(qtbot, make_window, corpus, log):
    statements = log
    window = make_window()
    panel = window.prompts_tab
    assert window.tabs.currentWidget() is window.documents_panel
    statements.recording = True
    window.documents_panel.add_paths([corpus])
    wait_idle(qtbot, window)
    trial = panel.editor.trial
    assert trial.chunk_combo.count() == 0 and panel.reading  # asked for, waiting for the tab to be shown
    ran = statements.on_gui_thread + statements.elsewhere
    assert any("INSERT INTO chunks" in sql for sql in ran)  # the run's own statements are traced
    assert not any("d.title FROM chunks" in sql for sql in ran)  # the tab's chunk list was not read

    click_tab(qtbot, window, "Prompts")
    wait_prompts(qtbot, panel)
    assert window.tabs.currentWidget() is panel
    assert any("d.title FROM chunks" in sql for sql in statements.elsewhere)  # read now, on the runner
    assert trial.chunk_combo.count() == 3  # the corpus's chunks, read now
    assert trial.chunk_combo.currentText().startswith("alpha · chunk 1")
    trial.chunk_combo.setCurrentIndex(2)
    wait_prompts(qtbot, panel)
    assert trial.chunk_id() is not None and trial.chunk_combo.currentText().split(" (")[0] \
        in panel.editor.tokens_label.text()


def test_the_graph_is_loaded_when_its_tab_is_first_opened(qtbot, make_window, corpus):
    window = make_window()
    window.documents_panel.add_paths([corpus])
    wait_idle(qtbot, window)
    explorer = window.graph_tab
    assert explorer.model is None  # the window opened on the Documents tab: no graph was loaded or laid out

    with qtbot.waitSignal(explorer.loaded, timeout=20_000):
        click_tab(qtbot, window, "Graph")
    assert window.tabs.currentWidget() is explorer
    assert explorer.model.size > 1 and explorer.visible_nodes().size > 1  # the canvas draws the corpus's graph
    assert set(explorer.model.names) <= set(explorer.toolbar.names.stringList())  # the find box knows them
