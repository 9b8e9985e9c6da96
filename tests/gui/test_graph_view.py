"""The explorer's view: search, filters, focus, colouring, selection, pan/zoom, minimap, labels."""

from __future__ import annotations

import numpy as np
from docatlas.gui.graph import labels
from docatlas.gui.graph.palette import BACKGROUND, BY_COMMUNITY
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QNativeGestureEvent, QPointingDevice, QTextDocumentFragment, QWheelEvent
from PySide6.QtWidgets import QApplication
from test_graph_helpers import (  # noqa: F401  (fixtures, used by name)
    LOAD_MS,
    answers_fixture,
    explorer_fixture,
    screen_point,
    select,
    settings_fixture,
    shown_keys,
    store_fixture,
)

HARBOR, LTD = "harbor analytics", "harbor analytics ltd"


def test_search_selects_and_centres_the_best_match(qtbot, explorer):
    with qtbot.waitSignal(explorer.selectionChanged):
        hits = explorer.search("harbor")
    assert [explorer.model.keys[i] for i in hits] == [HARBOR, LTD]  # exact-prefix and better connected first
    assert explorer.selected_keys == [HARBOR]
    centre = explorer.centre_of_view()
    assert np.allclose([centre.x(), centre.y()], explorer.model.xy[explorer.model.index[HARBOR]])
    assert explorer.panel.title.text() == "Harbor Analytics"
    assert explorer.search("MARÍA lópez") and explorer.selected_keys == ["maria lopez"]  # case and accents
    assert explorer.search("nobody at all") == [] and "nobody at all" in explorer.status.text()


def test_the_search_box_finds_on_enter(qtbot, explorer):
    explorer.toolbar.search.setText("Tomas")
    with qtbot.waitSignal(explorer.selectionChanged):
        qtbot.keyClick(explorer.toolbar.search, Qt.Key.Key_Return)
    assert explorer.selected_keys == ["tomas berg"]


def test_filters_by_type_document_and_degree(qtbot, explorer):
    everything = set(explorer.model.keys)
    assert shown_keys(explorer) == everything
    with qtbot.waitSignal(explorer.sceneReady):
        explorer.toolbar.types.set_checked("person", False)
    assert shown_keys(explorer) == {k for k, t in zip(explorer.model.keys, explorer.model.types) if t != "person"}
    with qtbot.waitSignal(explorer.sceneReady):
        explorer.toolbar.types.set_checked("person", True)
    bar = explorer.toolbar
    with qtbot.waitSignal(explorer.sceneReady):
        bar.document.setCurrentIndex(bar.document.findText("northwind"))
    assert shown_keys(explorer) == {"priya nair", "northwind labs", HARBOR, LTD, "tomas berg"}
    with qtbot.waitSignal(explorer.sceneReady):
        bar.document.setCurrentIndex(0)
    with qtbot.waitSignal(explorer.sceneReady):
        bar.min_degree.setValue(2)
    assert shown_keys(explorer) == {HARBOR, "northwind labs", LTD}


def test_neighbours_to_a_depth_and_focus_mode(qtbot, explorer):
    select(qtbot, explorer, ["tomas berg"])
    bar = explorer.toolbar
    with qtbot.waitSignal(explorer.sceneReady):
        bar.neighbours.setChecked(True)
    assert shown_keys(explorer) == {"tomas berg", "northwind labs"}
    with qtbot.waitSignal(explorer.sceneReady):
        bar.depth.setValue(2)
    assert shown_keys(explorer) == {"tomas berg", "northwind labs", "priya nair", HARBOR, LTD}
    with qtbot.waitSignal(explorer.sceneReady):
        bar.neighbours.setChecked(False)
    with qtbot.waitSignal(explorer.sceneReady):
        bar.focus.setChecked(True)
    look = explorer.canvas.look
    dimmed = {explorer.model.keys[i] for i in np.nonzero(look.dimmed)[0]}
    assert dimmed == {"maria lopez", "lisbon", "jonas weber"}
    assert look.shown.all()  # focus dims, it does not hide


def test_colour_by_community_with_a_legend(qtbot, explorer):
    if (explorer.model.community < 0).all():
        qtbot.waitSignal(explorer.communitiesReady, timeout=LOAD_MS).wait()
    with qtbot.waitSignal(explorer.sceneReady):
        explorer.toolbar.colour.setCurrentIndex(explorer.toolbar.colour.findData(BY_COMMUNITY))
    entries = explorer.legend.entries
    assert entries and {label for label, _, _ in entries} == {  # named by their two best-connected members
        "Harbor Analytics · Lisbon", "Northwind Labs · Priya Nair", "Harbor Analytics Ltd · Jonas Weber"}
    assert sum(count for _, _, count in entries) == explorer.model.size
    assert explorer.legend.isVisible()


def test_clicks_select_nodes_add_with_ctrl_and_select_edges(qtbot, explorer):
    canvas = explorer.canvas
    canvas.fit()
    with qtbot.waitSignal(explorer.selectionChanged):
        qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=screen_point(explorer, "lisbon").toPoint())
    assert explorer.selected_keys == ["lisbon"] and explorer.panel.title.text() == "Lisbon"
    with qtbot.waitSignal(explorer.selectionChanged):
        qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier,
                         screen_point(explorer, "priya nair").toPoint())
    assert explorer.selected_keys == ["lisbon", "priya nair"]
    assert explorer.panel.title.text() == "2 entities selected"
    a, b = screen_point(explorer, "tomas berg"), screen_point(explorer, "northwind labs")
    middle = (a + b) / 2
    assert canvas.node_at(middle) is None
    with qtbot.waitSignal(explorer.selectionChanged):
        qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=middle.toPoint())
    assert explorer.selected_edge == ("northwind labs", "tomas berg")
    assert "Tomas Berg" in explorer.panel.title.text() and "audits" in explorer.panel.subtitle.text()
    with qtbot.waitSignal(explorer.selectionChanged):
        qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=QPoint(2, 2))
    assert explorer.selected_keys == [] and explorer.panel.title.text() == "Nothing selected"


def test_a_passage_click_asks_the_window_to_open_it(qtbot, explorer, store):
    select(qtbot, explorer, ["jonas weber"])
    chunk = store.query("SELECT chunk_id, c.document_id AS doc FROM chunk_entities e JOIN chunks c "
                        "ON c.id = e.chunk_id WHERE key = 'jonas weber'")[0]
    passages = explorer.panel.passages
    assert passages.count() == 1 and "lisbon" in passages.item(0).text()
    (text,) = store.query("SELECT text FROM chunks WHERE id = ?", (chunk["chunk_id"],))
    quotes = [line.strip()[1:-1] for line in passages.item(0).text().splitlines()[1:]]
    assert quotes and all("Jonas Weber" in q and q in " ".join(text["text"].split()) for q in quotes)
    with qtbot.waitSignal(explorer.open_passage) as opened:
        passages.itemClicked.emit(passages.item(0))
    assert opened.args[:2] == [chunk["doc"], chunk["chunk_id"]]
    assert opened.args[2] == {"names": ["Jonas Weber"], "quote": quotes[0]}  # what the viewer highlights


def test_neighbours_in_the_panel_select_on_click(qtbot, explorer):
    select(qtbot, explorer, ["northwind labs"])
    neighbours = explorer.panel.neighbours
    names = {neighbours.item(i).text().split("  (")[0] for i in range(neighbours.count())}
    assert names == {"Priya Nair", "Harbor Analytics", "Harbor Analytics Ltd", "Tomas Berg"}
    item = next(neighbours.item(i) for i in range(neighbours.count()) if neighbours.item(i).text().startswith("Priya"))
    with qtbot.waitSignal(explorer.selectionChanged):
        neighbours.itemClicked.emit(item)
    assert explorer.selected_keys == ["priya nair"]


def test_wheel_zooms_at_the_pointer_drag_pans_and_fit_shows_everything(qtbot, explorer):
    canvas = explorer.canvas
    canvas.fit()
    bounds = canvas.scene.bounds
    assert canvas.visible_rect().contains(bounds)
    scale = canvas.scale
    anchor = screen_point(explorer, "lisbon")
    canvas.zoom_by(2.0, anchor)
    assert canvas.scale == 2 * scale
    assert (screen_point(explorer, "lisbon") - anchor).manhattanLength() < 1e-6  # the point under the pointer stays
    before = canvas.visible_rect().center()
    start = next(QPoint(x, 300) for x in range(300, 600, 10) if canvas.node_at(QPointF(x, 300)) is None)
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=start)  # on the background: a pan, not a node moved
    qtbot.mouseMove(canvas, start + QPoint(50, 20))
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=start + QPoint(50, 20))
    moved = before - canvas.visible_rect().center()
    assert abs(moved.x() * canvas.scale - 50) < 1 and abs(moved.y() * canvas.scale - 20) < 1
    qtbot.keyClick(canvas, Qt.Key.Key_0)
    qtbot.waitUntil(lambda: canvas.settled, timeout=LOAD_MS)
    assert canvas.visible_rect().contains(bounds)


def test_the_rendered_image_shows_the_nodes(qtbot, explorer):
    canvas = explorer.canvas
    qtbot.waitUntil(lambda: canvas.settled, timeout=LOAD_MS)
    picture = canvas.grab().toImage()
    x, y = screen_point(explorer, HARBOR).toPoint().toTuple()
    assert picture.pixelColor(x, y) != QColor(BACKGROUND)
    assert picture.pixelColor(2, canvas.height() - 2) == QColor(BACKGROUND)


def test_the_minimap_moves_the_view(qtbot, explorer):
    minimap, canvas = explorer.minimap, explorer.canvas
    canvas.zoom_by(4.0)
    qtbot.mouseClick(minimap, Qt.MouseButton.LeftButton, pos=QPoint(5, 5))
    assert not canvas.visible_rect().contains(canvas.scene.bounds.center())
    corner = canvas.visible_rect().center()
    assert corner.x() < canvas.scene.bounds.left() + canvas.scene.bounds.width() / 4


def test_labels_never_overlap_and_selected_ones_always_show():
    rng = np.random.default_rng(3)
    screen = rng.uniform(0, 400, (300, 2))
    placed = labels.place(screen, np.full(300, 5.0), lambda i: 60.0, 14.0, (400, 400), limit=80, forced=2)
    assert [p[0] for p in placed[:2]] == [0, 1]
    rects = [(left, top, left + 60.0, top + 14.0) for _, left, top in placed]
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
    tiny = labels.place(screen, np.full(300, 1.0), lambda i: 60.0, 14.0, (400, 400), limit=80)
    assert tiny == []  # nodes too small on screen get no label


def test_hovering_a_node_names_it(qtbot, explorer):
    point = screen_point(explorer, "priya nair")
    qtbot.mouseMove(explorer.canvas, point.toPoint())
    assert explorer.canvas.hovered == explorer.model.index["priya nair"]
    assert QTextDocumentFragment.fromHtml(explorer.canvas.toolTip()).toPlainText() == "Priya Nair"
    qtbot.mouseMove(explorer.canvas, QPointF(3, 3).toPoint())
    assert explorer.canvas.hovered is None


def test_the_wheel_and_a_touchpad_pinch_zoom_at_the_pointer(qtbot, explorer):
    canvas = explorer.canvas
    scale = canvas.scale
    at = QPointF(400, 300)
    wheel = QWheelEvent(at, canvas.mapToGlobal(at), QPoint(0, 0), QPoint(0, 120), Qt.MouseButton.NoButton,
                        Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(canvas, wheel)
    assert abs(canvas.scale / scale - 1.25) < 1e-9
    pinch = QNativeGestureEvent(Qt.NativeGestureType.ZoomNativeGesture, QPointingDevice.primaryPointingDevice(),
                                2, at, at, canvas.mapToGlobal(at), 0.5, QPointF(0, 0), 0)
    QApplication.sendEvent(canvas, pinch)
    assert abs(canvas.scale / scale - 1.25 * 1.5) < 1e-9
    before = canvas.visible_rect().center()
    swipe = QWheelEvent(at, canvas.mapToGlobal(at), QPoint(30, 0), QPoint(0, 0), Qt.MouseButton.NoButton,
                        Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.ScrollUpdate, False)
    QApplication.sendEvent(canvas, swipe)  # two fingers on a touchpad pan
    assert abs((before - canvas.visible_rect().center()).x() * canvas.scale - 30) < 1e-6


def test_a_hidden_explorer_reloads_when_shown(qtbot, explorer, store):
    from core.test_edits_helpers import add_document
    from docatlas.core.graph.merge import rebuild

    add_document(store, "more.txt", [("Porto.", [("Porto", "location", "A city.")], [])])
    rebuild(store)
    explorer.hide()
    explorer.reload()
    assert "porto" not in explorer.model.index
    with qtbot.waitSignal(explorer.loaded, timeout=LOAD_MS):
        explorer.show()
    assert "porto" in explorer.model.index


def test_the_toolbar_actions_reach_the_explorer(qtbot, explorer):
    with qtbot.waitSignal(explorer.loaded, timeout=LOAD_MS):
        explorer.toolbar.relayout.trigger()  # lays the graph out again
    explorer.toolbar.suggestions.trigger()
    dialog = explorer.editor.dialog
    assert dialog is not None and dialog.isVisible()
    qtbot.waitUntil(lambda: not dialog.reading, timeout=LOAD_MS)
    dialog.close()


def test_label_candidates_come_from_the_cells_in_view_most_important_first():
    rng = np.random.default_rng(5)
    xy = rng.uniform(0, 1000, (5000, 2))
    order = np.argsort(-rng.random(5000))  # importance order
    index = labels.LabelIndex(xy, order)
    found = index.candidates(100, 100, 300, 300, 1000)
    cell = index.cell
    assert len(found) and ((xy[found] >= 100 - cell) & (xy[found] <= 300 + cell)).all()  # near the rectangle
    rank = np.empty(5000, np.int64)
    rank[order] = np.arange(5000)
    assert (np.diff(rank[found]) > 0).all()  # most important first
    inside = np.nonzero(((xy >= 100) & (xy <= 300)).all(axis=1))[0]
    best = inside[np.argsort(rank[inside])][:20]
    assert set(best) <= set(found)  # the most important nodes in view are all candidates


def test_the_document_filter_holds_on_reopen_and_follows_a_new_document(qtbot, explorer, store):
    from core.test_edits_helpers import add_document
    from docatlas.core.graph.merge import rebuild

    bar = explorer.toolbar

    def shown_for(title: str) -> set[str]:
        with qtbot.waitSignal(explorer.sceneReady):
            bar.document.setCurrentIndex(bar.document.findText(title))
        keys = shown_keys(explorer)
        with qtbot.waitSignal(explorer.sceneReady):
            bar.document.setCurrentIndex(0)
        return keys

    first = shown_for("northwind")
    with qtbot.waitSignal(explorer.loaded, timeout=LOAD_MS):
        explorer.reload()  # the document map now comes from its cache
    assert shown_for("northwind") == first
    add_document(store, "porto.txt", [("Porto, where Tomas Berg lives.",
                                       [("Porto", "location", "A city."), ("Tomas Berg", "person", "A man.")], [])])
    rebuild(store)
    with qtbot.waitSignal(explorer.loaded, timeout=LOAD_MS):
        explorer.reload()  # the graph moved on: the cached map is not used
    assert shown_for("porto") == {"porto", "tomas berg"}
    assert shown_for("northwind") == first
