"""Editing from the explorer: every edit applies, undoes, redoes, and survives re-deriving the graph."""

from __future__ import annotations

import pytest
from core.test_edits_helpers import add_document, entity, rebuild_with_overrides, relation, snapshot
from docatlas.core.graph import edits
from docatlas.core.graph.suggest import suggest_merges
from docatlas.gui.graph import GraphExplorer
from PySide6.QtGui import QImage
from test_graph_helpers import (  # noqa: F401  (fixtures, used by name)
    LOAD_MS,
    answers_fixture,
    edit_and_reload,
    explorer_fixture,
    select,
    settings_fixture,
    store_fixture,
)

HARBOR, LTD = "harbor analytics", "harbor analytics ltd"


def undo(qtbot, explorer) -> None:
    edit_and_reload(qtbot, explorer, explorer.editor.stack.undo)


def redo(qtbot, explorer) -> None:
    edit_and_reload(qtbot, explorer, explorer.editor.stack.redo)


def name_of(explorer, key: str) -> str:
    return explorer.model.names[explorer.model.index[key]]


@pytest.mark.parametrize(("action", "kind", "answer", "column", "expected"), [
    ("rename", "text", "Lisboa", "name", "Lisboa"),
    ("retype", "choose", "City", "type", "city"),
    ("describe", "long_text", "Written by hand.", "description", "Written by hand."),
])
def test_attribute_edits_apply_undo_redo_and_survive_a_rebuild(qtbot, explorer, answers, store, action, kind,
                                                               answer, column, expected):
    before = snapshot(store)
    select(qtbot, explorer, ["lisbon"])
    answers.add(kind, answer)
    edit_and_reload(qtbot, explorer, lambda: explorer.panel.buttons[action].click())
    assert entity(store, "lisbon")[column] == expected
    if column != "description":
        index = explorer.model.index["lisbon"]
        assert (explorer.model.names if column == "name" else explorer.model.types)[index] == expected
    assert explorer.panel.title.text() == entity(store, "lisbon")["name"]  # the panel follows
    rebuild_with_overrides(store)
    assert entity(store, "lisbon")[column] == expected
    undo(qtbot, explorer)
    assert snapshot(store) == before
    redo(qtbot, explorer)
    assert entity(store, "lisbon")[column] == expected


def test_delete_asks_first_and_undo_brings_the_entity_back(qtbot, explorer, answers, store):
    before = snapshot(store)
    select(qtbot, explorer, ["tomas berg"])
    answers.add("confirm", False)
    explorer.panel.buttons["delete"].click()
    assert entity(store, "tomas berg") is not None and not explorer.editor.stack.count()
    answers.add("confirm", True)
    edit_and_reload(qtbot, explorer, lambda: explorer.panel.buttons["delete"].click())
    assert "tomas berg" not in explorer.model.index and explorer.selected_keys == []
    assert relation(store, "tomas berg", "northwind labs") is None
    undo(qtbot, explorer)
    assert snapshot(store) == before and "tomas berg" in explorer.model.index


def test_merging_selected_entities_and_undoing_it(qtbot, explorer, answers, store):
    before = snapshot(store)
    positions = explorer.model.xy.copy()
    old_index = dict(explorer.model.index)
    select(qtbot, explorer, [LTD, HARBOR])
    assert explorer.panel.title.text() == "2 entities selected"
    answers.add("choose", "Harbor Analytics")
    edit_and_reload(qtbot, explorer, lambda: explorer.panel.buttons["merge"].click())
    assert LTD not in explorer.model.index and explorer.selected_keys == [HARBOR]
    merged = entity(store, HARBOR)
    assert merged["mentions"] == 3 and "Employer of Jonas Weber." in merged["description"]
    assert relation(store, "jonas weber", HARBOR) is not None
    assert explorer.panel.passages.count() == 3  # provenance of both
    for key, i in explorer.model.index.items():  # nothing moved
        assert tuple(explorer.model.xy[i]) == pytest.approx(tuple(positions[old_index[key]]))
    undo(qtbot, explorer)
    assert snapshot(store) == before and LTD in explorer.model.index


def test_merge_with_one_selected_asks_for_the_other_by_name(qtbot, explorer, answers, store):
    select(qtbot, explorer, [HARBOR])
    answers.add("entity", "harbor analytics ltd")
    answers.add("confirm", True)
    edit_and_reload(qtbot, explorer, lambda: explorer.panel.buttons["merge"].click())
    assert answers.described.startswith("Will merge with: Harbor Analytics Ltd (organization")
    assert "Harbor Analytics Ltd" in answers.offered and "Harbor Analytics" not in answers.offered
    confirm = next(args for kind, args in answers.asked if kind == "confirm")
    assert "Merge “Harbor Analytics Ltd” into “Harbor Analytics”?" in confirm[2]
    assert entity(store, LTD) is None and entity(store, HARBOR)["mentions"] == 3


def test_deleting_a_relation_from_the_edge_panel(qtbot, explorer, answers, store):
    with qtbot.waitSignal(explorer.selectionChanged, timeout=LOAD_MS):
        explorer.select_edge(explorer.model.edge_between(explorer.model.index["tomas berg"],
                                                           explorer.model.index["northwind labs"]))
    assert explorer.panel.buttons["delete_relation"].isVisible()
    answers.add("confirm", True)
    edges = len(explorer.model.sources)
    edit_and_reload(qtbot, explorer, lambda: explorer.panel.buttons["delete_relation"].click())
    assert relation(store, "tomas berg", "northwind labs") is None and len(explorer.model.sources) == edges - 1
    undo(qtbot, explorer)
    assert relation(store, "tomas berg", "northwind labs") is not None


def test_merge_suggestions_are_reviewed_and_undone(qtbot, explorer, store):
    suggest_merges(store)
    dialog = explorer.editor.show_suggestions()
    qtbot.waitUntil(lambda: not dialog.reading, timeout=LOAD_MS)  # the list is read in the background
    pair = next(i for i, s in enumerate(dialog.suggestions) if {s.a_key, s.b_key} == {HARBOR, LTD})
    dialog.table.selectRow(pair)
    keep = dialog.keep_first if dialog.suggestions[pair].a_key == HARBOR else dialog.keep_second
    edit_and_reload(qtbot, explorer, keep.click)
    assert entity(store, LTD) is None and LTD not in explorer.model.index
    assert all({s.a_key, s.b_key} != {HARBOR, LTD} for s in dialog.suggestions)
    undo(qtbot, explorer)
    qtbot.waitUntil(lambda: not dialog.reading, timeout=LOAD_MS)  # read again after the reload
    assert entity(store, LTD) is not None
    assert any({s.a_key, s.b_key} == {HARBOR, LTD} for s in dialog.suggestions)  # open again
    dialog.close()


def test_a_failed_edit_is_reported_and_leaves_no_undo_step(qtbot, explorer, answers, store):
    select(qtbot, explorer, ["lisbon"])
    edits.delete(store, "lisbon")  # someone else deleted it meanwhile; the view is stale
    answers.add("text", "Lisboa")
    with qtbot.waitSignal(explorer.editor.editFailed, timeout=LOAD_MS) as failed:
        explorer.panel.buttons["rename"].click()
    assert "no longer" in failed.args[0]
    assert ("inform" in [kind for kind, _ in answers.asked])
    qtbot.waitUntil(lambda: explorer.editor.stack.count() == 0, timeout=LOAD_MS)


def test_edits_survive_new_documents_and_the_layout_is_reused(qtbot, explorer, answers, store, tmp_path):
    select(qtbot, explorer, ["lisbon"])
    answers.add("text", "Lisboa")
    edit_and_reload(qtbot, explorer, lambda: explorer.panel.buttons["rename"].click())
    old = {k: tuple(explorer.model.xy[i]) for k, i in explorer.model.index.items()}
    touched = add_document(store, "porto.txt", [("Lisbon is near Porto.", [("Porto", "location", "A city.")],
                                                 [("Lisbon", "Porto", "near", "Lisbon is near Porto.")])])
    rebuild_with_overrides(store, touched)
    edit_and_reload(qtbot, explorer, explorer.reload)
    assert explorer.model.placed == 1 and name_of(explorer, "lisbon") == "Lisboa"
    for key, xy in old.items():
        assert tuple(explorer.model.xy[explorer.model.index[key]]) == pytest.approx(xy)

    again = GraphExplorer(store, prompter=answers)  # reopening: everything from the cache
    qtbot.addWidget(again)
    again.show()  # a hidden explorer loads nothing until it is shown
    with qtbot.waitSignal(again.loaded, timeout=LOAD_MS):
        again.reload()
    assert again.model.placed == 0 and again.model.layout_seconds == 0.0
    assert again.shutdown()


def test_exports_of_the_view_and_of_the_graph(qtbot, explorer, answers, tmp_path):
    qtbot.waitUntil(lambda: explorer.canvas.settled, timeout=LOAD_MS)
    png, svg, graphml = tmp_path / "view.png", tmp_path / "view.svg", tmp_path / "graph.graphml"
    answers.add("save_path", str(png))
    with qtbot.waitSignal(explorer.editor.exported) as done:
        explorer.toolbar.exportRequested.emit("png")
    assert done.args == [str(png)] and not QImage(str(png)).isNull()
    with qtbot.waitSignal(explorer.editor.exported):
        explorer.editor.export("svg", str(svg))
    assert svg.read_text(encoding="utf-8").count("<path") > 0 and "Harbor Analytics" in svg.read_text(encoding="utf-8")
    with qtbot.waitSignal(explorer.editor.exported, timeout=LOAD_MS):
        explorer.editor.export("graphml", str(graphml))
    assert "Northwind Labs" in graphml.read_text(encoding="utf-8")
