"""No SQL on the GUI thread in the Prompts and Graph tabs, on a small workspace (the corpus).

Every statement on every connection is recorded with the thread that ran it (`StatementLog`, at
the Python call) while a run ends (the tabs read the workspace again), the Prompts tab opens, a prompt
is picked in its list, a chunk is picked and the prompt tried on it, a node and then an edge
are clicked in the Graph tab and its merge suggestions opened: what the tabs show is read on
the runner's threads.
"""

from __future__ import annotations

import pytest
from docatlas.core.storage.database import Store
from gui_helpers import wait_idle
from PySide6.QtCore import QPointF, Qt
from test_graph_helpers import LOAD_MS
from test_gui_reads import StatementLog
from test_prompt_editor import open_prompts, wait_prompts


@pytest.fixture
def log(monkeypatch) -> StatementLog:
    """Traces every `Store` opened from now on."""
    statements = StatementLog()
    opened = Store.__init__

    def traced(store: Store, *args: object, **kwargs: object) -> None:
        opened(store, *args, **kwargs)
        statements.trace(store)
    monkeypatch.setattr(Store, "__init__", traced)
    return statements


def screen_point(canvas, model, node: int) -> QPointF:
    """Where a node is on the canvas."""
    x, y = model.xy[node]
    return canvas.view_transform().map(QPointF(x, y))


def test_the_prompts_and_graph_tabs_run_no_sql_on_the_gui_thread(qtbot, make_window, corpus, log):
    window = make_window()
    log.trace(window.workspace.store)
    log.recording = True
    window.documents_panel.add_paths([corpus])
    wait_idle(qtbot, window)

    panel = open_prompts(qtbot, window)  # the tab opens on the extraction prompt in use
    tree = panel.tree
    glean = panel._items["lightrag/glean"]
    tree.scrollToItem(glean)
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=tree.visualItemRect(glean).center())
    wait_prompts(qtbot, panel)
    assert panel.editor.key == "lightrag/glean"
    trial = panel.editor.trial
    assert trial.chunk_combo.count() == 3  # the trial chunk list was read on the runner
    trial.chunk_combo.setCurrentIndex(1)
    wait_prompts(qtbot, panel)
    assert trial.chunk_combo.currentText().split(" (")[0] in panel.editor.tokens_label.text()
    with qtbot.waitSignal(panel.trial_finished, timeout=20_000):
        qtbot.mouseClick(trial.run_button, Qt.MouseButton.LeftButton)
    assert panel.trial_runs and trial.status_label.text() == "Done; nothing was added to the graph."

    explorer = window.graph_tab
    with qtbot.waitSignal(explorer.loaded, timeout=LOAD_MS):
        window.tabs.setCurrentWidget(explorer)  # it reloads on show: the run changed the graph
    model, canvas = explorer.model, explorer.canvas
    assert model.size > 1 and len(model.sources) > 0
    canvas.fit()
    node = int(model.sources[0])
    with qtbot.waitSignal(explorer.selectionChanged, timeout=LOAD_MS):
        qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=screen_point(canvas, model, node).toPoint())
    assert explorer.selected_keys == [model.keys[node]]
    assert explorer.panel.title.text() == model.names[node]
    edge, middle = next((e, m) for e in range(len(model.sources))
                        if canvas.node_at(m := (screen_point(canvas, model, int(model.sources[e]))
                                                + screen_point(canvas, model, int(model.targets[e]))) / 2) is None
                        and canvas.edge_at(m) == e)
    with qtbot.waitSignal(explorer.selectionChanged, timeout=LOAD_MS):
        qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=middle.toPoint())
    pair = {model.keys[int(model.sources[edge])], model.keys[int(model.targets[edge])]}
    assert explorer.selected_edge is not None and set(explorer.selected_edge) == pair
    assert model.names[int(model.sources[edge])] in explorer.panel.title.text()
    explorer.toolbar.suggestions.trigger()  # the merge suggestions dialog reads its list on the runner
    dialog = explorer.editor.dialog
    qtbot.waitUntil(lambda: not dialog.reading, timeout=LOAD_MS)
    assert dialog.status.text().endswith("open suggestions.") or dialog.status.text() == "1 open suggestion."
    dialog.close()
    log.recording = False

    assert log.on_gui_thread == [], "SQL on the GUI thread:\n" + "\n".join(log.on_gui_thread)
    assert any("FROM chunks c JOIN documents d" in sql for sql in log.elsewhere)  # the trial chunk list
    assert any("relations" in sql for sql in log.elsewhere)  # the edge's details
