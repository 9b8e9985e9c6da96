"""The explorer's tables, context menus, local graph, toolbar fit, exports, plain-text names and merge
questions, driven through the widgets a person touches (QTest clicks, the toolbar's actions)."""

from __future__ import annotations

import csv

import pytest
from core.test_edits_helpers import add_document, entity
from docatlas.core.graph.merge import rebuild
from docatlas.gui.graph.menus import EDGE_ITEMS, NODE_ITEMS
from docatlas.gui.graph.plain import plain_tooltip
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QContextMenuEvent, QImage, QTextDocumentFragment
from PySide6.QtWidgets import QApplication, QToolButton, QWidget
from test_graph_helpers import (  # noqa: F401  (fixtures, used by name)
    LOAD_MS,
    answers_fixture,
    edit_and_reload,
    explorer_fixture,
    screen_point,
    select,
    settings_fixture,
    store_fixture,
)

HARBOR, LTD = "harbor analytics", "harbor analytics ltd"


def right_click(canvas, point: QPointF) -> None:
    """What a right-click sends a widget: the context-menu event (offscreen QTest clicks do not make one)."""
    pos = point.toPoint()
    QApplication.sendEvent(canvas, QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, canvas.mapToGlobal(pos)))


def row_point(view, row: int) -> QPoint:
    return view.visualRect(view.model().index(row, 0)).center()


def show_table(qtbot, explorer) -> None:
    qtbot.mouseClick(explorer.toolbar.table, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: explorer.tables.isVisible() and explorer.tables.entities.rowCount() > 0, timeout=LOAD_MS)
    qtbot.waitUntil(lambda: explorer.tables.export.y() > 0 and explorer.tables.entity_view.viewport().height() > 60,
                    timeout=LOAD_MS)  # laid out


def test_the_tables_sort_filter_and_share_the_selection_with_the_canvas(qtbot, explorer):
    show_table(qtbot, explorer)
    tables, model = explorer.tables, explorer.model
    view = tables.entity_view
    assert tables.entities.rowCount() == model.size and tables.relations.rowCount() == len(model.sources)
    header = view.horizontalHeader()
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(header.sectionViewportPosition(0) + 5, 5))
    names = [tables.entities.data(tables.entities.index(r, 0)) for r in range(tables.entities.rowCount())]
    assert names == sorted(names, key=str.casefold) or names == sorted(names, key=str.casefold, reverse=True)
    row = names.index("Tomas Berg")
    with qtbot.waitSignal(explorer.selectionChanged, timeout=LOAD_MS):
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=row_point(view, row))
    assert explorer.selected_keys == ["tomas berg"] and explorer.canvas.selection == [model.index["tomas berg"]]
    with qtbot.waitSignal(explorer.selectionChanged, timeout=LOAD_MS):  # and back: a canvas click selects the row
        qtbot.mouseClick(explorer.canvas, Qt.MouseButton.LeftButton, pos=screen_point(explorer, "lisbon").toPoint())
    chosen = [i.row() for i in view.selectionModel().selectedRows()]
    assert [tables.entities.data(tables.entities.index(r, 0)) for r in chosen] == ["Lisbon"]
    person = next(a for a in explorer.toolbar.types.menu().actions() if a.text() == "person")
    with qtbot.waitSignal(explorer.sceneReady, timeout=LOAD_MS):
        person.trigger()  # the tables are filtered like the canvas
    shown = {tables.entities.data(tables.entities.index(r, 1)) for r in range(tables.entities.rowCount())}
    assert "person" not in shown and tables.entities.rowCount() == int(explorer.canvas.look.shown.sum())
    tables.tabs.setCurrentIndex(1)
    rel = tables.relation_view
    with qtbot.waitSignal(explorer.selectionChanged, timeout=LOAD_MS):
        qtbot.mouseClick(rel.viewport(), Qt.MouseButton.LeftButton, pos=row_point(rel, 0))
    assert explorer.selected_edge is not None and explorer.canvas.selected_edge is not None


def test_a_table_exports_as_csv_what_it_shows(qtbot, explorer, answers, tmp_path):
    show_table(qtbot, explorer)
    out = tmp_path / "entities.csv"
    answers.add("save_path", str(out))
    with qtbot.waitSignal(explorer.editor.exported, timeout=LOAD_MS):
        qtbot.mouseClick(explorer.tables.export, Qt.MouseButton.LeftButton)
    rows = list(csv.reader(out.open(encoding="utf-8")))
    assert rows[0] == ["Name", "Type", "Links", "Mentions", "Documents"] and len(rows) == explorer.model.size + 1
    assert f"Wrote {out}" in explorer.status.text()


def test_context_menus_on_a_node_and_an_edge(qtbot, explorer, answers, store):
    canvas = explorer.canvas
    right_click(canvas, screen_point(explorer, "lisbon"))
    menu = explorer.context_menu
    assert menu is not None and [a.text() for a in menu.actions()] == list(NODE_ITEMS)
    assert explorer.selected_keys == ["lisbon"]
    next(a for a in menu.actions() if a.text() == "Focus").trigger()
    assert explorer.toolbar.focus.isChecked()
    next(a for a in menu.actions() if a.text() == "Local graph…").trigger()
    local = explorer.local_view
    qtbot.waitUntil(lambda: local.local is not None, timeout=LOAD_MS)
    assert local.isVisible() and local.local.keys[0] == "lisbon"
    a, b = screen_point(explorer, "tomas berg"), screen_point(explorer, "northwind labs")
    right_click(canvas, (a + b) / 2)
    menu = explorer.context_menu
    assert [x.text() for x in menu.actions()] == list(EDGE_ITEMS)
    assert explorer.selected_edge == ("northwind labs", "tomas berg")
    image = canvas.grab().toImage()  # the edge is drawn thick in the selection colour, both ends ringed
    ring = QColor(canvas.theme.selection)
    mid = ((a + b) / 2).toPoint()
    assert any(abs(image.pixelColor(mid.x() + dx, mid.y() + dy).lightness() - ring.lightness()) < 40
               for dx in (-1, 0, 1) for dy in (-1, 0, 1))
    answers.add("confirm", True)
    edit_and_reload(qtbot, explorer, next(x for x in menu.actions() if x.text() == "Delete relation…").trigger)
    assert explorer.model.edge_between(explorer.model.index["tomas berg"], explorer.model.index["northwind labs"]) \
        is None


def test_double_click_opens_a_local_graph_to_a_chosen_depth(qtbot, explorer):
    qtbot.mouseDClick(explorer.canvas, Qt.MouseButton.LeftButton, pos=screen_point(explorer, "tomas berg").toPoint())
    local_ready = explorer.local_view
    qtbot.waitUntil(lambda: local_ready.local is not None, timeout=LOAD_MS)
    assert set(local_ready.local.keys) == {"tomas berg", "northwind labs"}
    with qtbot.waitSignal(local_ready.ready, timeout=LOAD_MS):
        local_ready.depth.setValue(2)
    assert set(local_ready.local.keys) == {"tomas berg", "northwind labs", "priya nair", HARBOR, LTD}
    qtbot.waitUntil(lambda: local_ready.canvas.settled, timeout=LOAD_MS)
    with qtbot.waitSignal(explorer.selectionChanged, timeout=LOAD_MS):  # a click there selects here too
        x, y = local_ready.local.xy[local_ready.local.index["priya nair"]]
        point = local_ready.canvas.view_transform().map(QPointF(x, y)).toPoint()
        qtbot.mouseClick(local_ready.canvas, Qt.MouseButton.LeftButton, pos=point)
    assert explorer.selected_keys == ["priya nair"]


@pytest.mark.parametrize("width", [680, 1260, 1346])  # the tab beside the chat on a 1366 screen; alone at 1280, 1366
def test_no_graph_control_hides_in_an_overflow_menu(qtbot, explorer, width):
    explorer.resize(width, 600)
    qtbot.waitUntil(lambda: all(row.height() >= row.heightForWidth(row.width()) for row in explorer.toolbar.rows),
                    timeout=2000)
    shown = 0
    for row in explorer.toolbar.rows:
        assert row.findChild(QToolButton, "qt_toolbar_ext_button") is None, row.windowTitle()
        for widget in row.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly):
            assert widget.isVisible(), widget
            assert row.rect().contains(widget.geometry()), (widget, widget.geometry(), row.rect())
            shown += 1
        for action in row.actions():
            assert row.widgetForAction(action).isVisible(), action.text()
    assert shown >= 20  # every control of both groups, none left out


def test_a_hostile_entity_name_is_shown_as_the_characters_it_is(qtbot, explorer, store):
    hostile = "<img src=file:///x.png>Acme"
    add_document(store, "evil.txt", [("Acme.", [(hostile, "organization", "<b>bold</b> text")], [])])
    rebuild(store)
    with qtbot.waitSignal(explorer.loaded, timeout=LOAD_MS):
        explorer.reload()
    key = next(k for k, n in zip(explorer.model.keys, explorer.model.names) if n == hostile)
    select(qtbot, explorer, [key])
    title = explorer.panel.title
    assert title.text() == hostile and title.textFormat() == Qt.TextFormat.PlainText
    assert explorer.panel.description.toPlainText() == "<b>bold</b> text"
    assert QTextDocumentFragment.fromHtml(plain_tooltip(hostile)).toPlainText() == hostile


def test_merge_with_lists_names_and_renaming_onto_a_name_offers_the_merge(qtbot, explorer, answers, store):
    select(qtbot, explorer, [HARBOR])
    answers.add("entity", "harbor")  # two entities match: the user picks one, then confirms
    answers.add("choose", "Harbor Analytics Ltd (organization, 2 links)")
    answers.add("confirm", False)
    qtbot.mouseClick(explorer.panel.buttons["merge"], Qt.MouseButton.LeftButton)
    assert "choose one" in answers.described or "Will merge" in answers.described
    assert entity(store, LTD) is not None  # not confirmed: nothing merged
    select(qtbot, explorer, [LTD])
    answers.add("text", "Harbor Analytics")
    answers.add("confirm", True)
    edit_and_reload(qtbot, explorer, lambda: qtbot.mouseClick(explorer.panel.buttons["rename"],
                                                              Qt.MouseButton.LeftButton))
    offer = [args for kind, args in answers.asked if kind == "confirm"][-1]
    assert "“Harbor Analytics” is already an entity" in offer[2]
    assert entity(store, LTD) is None and LTD not in explorer.model.index


def test_pictures_and_the_shown_graph_export_and_say_where(qtbot, explorer, answers, tmp_path):
    qtbot.waitUntil(lambda: explorer.canvas.settled, timeout=LOAD_MS)
    png, svg, graphml, gexf = (tmp_path / f"view.{x}" for x in ("png", "svg", "graphml", "gexf"))
    answers.add("save_path", str(png))
    export = explorer.toolbar.export.menu().actions()
    with qtbot.waitSignal(explorer.editor.exported, timeout=LOAD_MS):
        next(a for a in export if a.text().startswith("View as PNG")).trigger()
    picture = QImage(str(png))
    assert picture.width() == 2 * explorer.canvas.width() and picture.height() == 2 * explorer.canvas.height()
    assert f"Wrote {png}" in explorer.status.text()
    person = next(a for a in explorer.toolbar.types.menu().actions() if a.text() == "person")
    with qtbot.waitSignal(explorer.sceneReady, timeout=LOAD_MS):
        person.trigger()
    for path, text in ((svg, "View as SVG"), (graphml, "Shown graph as GraphML"), (gexf, "Shown graph as GEXF")):
        answers.add("save_path", str(path))
        with qtbot.waitSignal(explorer.editor.exported, timeout=LOAD_MS):
            next(a for a in export if a.text().startswith(text)).trigger()
        assert f"Wrote {path}" in explorer.status.text()
    assert "<svg" in svg.read_text(encoding="utf-8")
    for path in (graphml, gexf):
        written = path.read_text(encoding="utf-8")
        assert "Northwind Labs" in written and "Maria Lopez" not in written  # people are hidden
