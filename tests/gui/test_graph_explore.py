"""Exploring the graph with the mouse and keys: hover, drag-and-pin, communities from afar, theme, Fit,
legend counts, minimap. Every test drives the real widget with QTest events and looks at what is drawn."""

from __future__ import annotations

import numpy as np
import pytest
from core.test_edits_helpers import build_graph, open_store, star_corpus
from docatlas.core.graph import layout
from docatlas.gui.graph import GraphExplorer
from docatlas.gui.graph.palette import DARK, LIGHT
from docatlas.gui.jobs import graph as graph_jobs
from docatlas.gui.theme import apply_theme
from PySide6.QtCore import QPoint, QPointF, QSettings, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication
from test_graph_helpers import (  # noqa: F401  (fixtures, used by name)
    LOAD_MS,
    answers_fixture,
    explorer_fixture,
    screen_point,
    settings_fixture,
    store_fixture,
)


def distance(a: QColor, b: QColor) -> int:
    return abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue())


def pixel(explorer: GraphExplorer, key: str) -> QColor:
    x, y = screen_point(explorer, key).toPoint().toTuple()
    return explorer.canvas.grab().toImage().pixelColor(x, y)


def open_explorer(qtbot, store, settings, size=(1200, 800)) -> GraphExplorer:
    widget = GraphExplorer(store, settings=settings)
    qtbot.addWidget(widget)
    widget.resize(*size)
    widget.show()
    with qtbot.waitSignal(widget.loaded, timeout=LOAD_MS):
        widget.reload()
    qtbot.waitUntil(lambda: widget.canvas.settled, timeout=LOAD_MS)
    return widget


@pytest.fixture(name="stars")
def stars_fixture(tmp_path):
    """A bigger graph: 8 hubs of 14 leaves, hubs chained (clear communities)."""
    with open_store(tmp_path / "stars") as s:
        yield build_graph(s, star_corpus(8, 14))


def test_hovering_a_node_dims_all_but_it_and_its_neighbours(qtbot, explorer):
    canvas = explorer.canvas
    canvas.fit()
    qtbot.waitUntil(lambda: canvas.settled, timeout=LOAD_MS)
    model = explorer.model
    hub = model.index["harbor analytics"]
    neighbour = model.keys[int(model.neighbours_of(hub)[0])]
    stranger = next(k for k in model.keys if model.index[k] not in model.neighbours_of(hub) and k != model.keys[hub])
    far, near = pixel(explorer, stranger), pixel(explorer, neighbour)
    background = QColor(canvas.theme.background)
    qtbot.mouseMove(canvas, screen_point(explorer, "harbor analytics").toPoint())
    assert canvas.hovered == hub
    assert distance(pixel(explorer, stranger), background) < distance(far, background) / 2  # dimmed
    assert pixel(explorer, neighbour) == near  # drawn again on top, as bright as before
    qtbot.mouseMove(canvas, QPoint(2, 2))
    assert canvas.hovered is None and pixel(explorer, stranger) == far


def test_dragging_a_node_moves_and_pins_it_and_unpin_all_releases(qtbot, explorer, store, settings):
    canvas = explorer.canvas
    start = screen_point(explorer, "lisbon")
    target = start + QPointF(60, 40)
    before = explorer.model.xy[explorer.model.index["lisbon"]].copy()
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=start.toPoint())
    for step in range(1, 7):
        qtbot.mouseMove(canvas, (start + (target - start) * (step / 6)).toPoint())
    with qtbot.waitSignal(explorer.pinned, timeout=LOAD_MS):
        qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=target.toPoint())
    moved = explorer.model.xy[explorer.model.index["lisbon"]]
    assert np.linalg.norm(moved - before) * canvas.scale == pytest.approx(np.hypot(60, 40), abs=2)
    assert layout.pinned(store) == {"lisbon"} and "Pinned" in explorer.status.text()
    again = open_explorer(qtbot, store, settings)  # reopened: the node is where it was dropped
    assert again.model.xy[again.model.index["lisbon"]] == pytest.approx(moved)
    with qtbot.waitSignal(again.loaded, timeout=LOAD_MS):
        again.toolbar.relayout.trigger()  # a fresh layout keeps the pin
    assert again.model.xy[again.model.index["lisbon"]] == pytest.approx(moved, abs=1e-6)
    again.toolbar.unpin.trigger()
    qtbot.waitUntil(lambda: layout.pinned(store) == set(), timeout=LOAD_MS)
    assert again.shutdown()


def test_far_away_a_big_graph_is_drawn_as_communities_that_expand(qtbot, stars, settings, monkeypatch):
    monkeypatch.setattr(graph_jobs, "DETAIL_LATER_FROM", 50)  # "big" from 50 nodes, for this graph of 120
    explorer = open_explorer(qtbot, stars, settings)
    canvas = explorer.canvas
    canvas.aggregate_from, canvas.detail_nodes = 50, 30
    qtbot.waitUntil(lambda: canvas.scene is not None, timeout=LOAD_MS)  # the full scene followed the overview
    explorer.toolbar.fit.trigger()
    assert canvas.collapsed and canvas.node_at(screen_point(explorer, "hub 0")) is None
    overview = explorer.overview
    assert len(overview.members) == 8 and sorted(overview.members.tolist()) == [15] * 8
    assert all(label.startswith("Hub ") for label in overview.labels)  # named by their top entity
    qtbot.waitUntil(lambda: canvas.settled, timeout=LOAD_MS)
    centre = canvas.view_transform().map(QPointF(*overview.centres[0])).toPoint()
    disc = canvas.grab().toImage().pixelColor(centre)
    assert distance(disc, QColor(canvas.theme.background)) > 100  # a filled disc where the community is
    qtbot.mouseDClick(canvas, Qt.MouseButton.LeftButton, pos=centre)
    assert not canvas.collapsed  # zoomed in on that community: its members, one by one
    members = np.nonzero(explorer.model.community == overview.community[0])[0]
    inside = canvas.visible_rect()
    assert all(inside.contains(QPointF(*explorer.model.xy[i])) for i in members)
    qtbot.keyClick(canvas, Qt.Key.Key_0)
    assert canvas.collapsed
    for _ in range(12):  # the wheel expands it too
        qtbot.keyClick(canvas, Qt.Key.Key_Plus)
    assert not canvas.collapsed
    assert explorer.shutdown()


def test_the_community_first_layout_keeps_each_community_together(stars):
    graph = layout.read_graph(stars)
    found = layout.communities(stars, graph)
    xy = layout.cached_layout(stars, graph, relayout=True).xy
    labels = found.labels
    centres = np.array([xy[labels == c].mean(axis=0) for c in range(labels.max() + 1)])
    own = np.linalg.norm(xy - centres[labels], axis=1).max()
    apart = min(np.linalg.norm(centres[i] - centres[j]) for i in range(len(centres)) for j in range(i))
    assert own < apart  # every member is nearer its own community's centre than any two centres are


def test_the_canvas_legend_and_minimap_follow_the_theme(qtbot, explorer):
    app = QApplication.instance()
    canvas = explorer.canvas
    assert canvas.grab().toImage().pixelColor(3, 3) == QColor(LIGHT.background)
    try:
        with qtbot.waitSignal(explorer.sceneReady, timeout=LOAD_MS):
            apply_theme(app, "dark")
        qtbot.waitUntil(lambda: canvas.settled, timeout=LOAD_MS)
        image = canvas.grab().toImage()
        assert image.pixelColor(3, 3) == QColor(DARK.background)
        assert explorer.legend.theme is DARK and explorer.minimap.grab().toImage().pixelColor(
            30, 150) == QColor(DARK.background)
        text = QColor(DARK.text)
        assert any(distance(image.pixelColor(x, y), text) < 60 for x in range(image.width())
                   for y in range(0, image.height(), 2))  # labels in the dark theme's text colour
    finally:
        apply_theme(app, "light")
    qtbot.waitUntil(lambda: canvas.look.theme is LIGHT and canvas.settled, timeout=LOAD_MS)


def test_an_empty_graph_says_so_on_the_canvas(qtbot, tmp_path, settings):
    with open_store(tmp_path / "empty") as empty:
        explorer = open_explorer(qtbot, empty, settings)
        image = explorer.canvas.grab().toImage()
        centre = image.pixelColor(image.width() // 2, image.height() // 2)
        row = [image.pixelColor(x, image.height() // 2) for x in range(image.width())]
        assert centre == QColor(LIGHT.background) or any(distance(c, QColor(LIGHT.text)) < 80 for c in row)
        assert any(distance(c, QColor(LIGHT.text)) < 80 for c in row)  # the hint is drawn, in the middle
        assert explorer.shutdown()


def test_fit_fills_the_canvas(qtbot, stars, settings):
    explorer = open_explorer(qtbot, stars, settings)
    canvas = explorer.canvas
    canvas.zoom_by(0.3)
    explorer.toolbar.fit.trigger()
    xy = explorer.model.xy
    lo = canvas.view_transform().map(QPointF(*xy.min(axis=0)))
    hi = canvas.view_transform().map(QPointF(*xy.max(axis=0)))
    span = max((hi.x() - lo.x()) / canvas.width(), (hi.y() - lo.y()) / canvas.height())
    assert 0.85 <= span <= 1.0
    assert explorer.shutdown()


def test_a_fitted_view_stays_fitted_when_the_window_changes_size_but_a_moved_one_keeps_its_place(
        qtbot, stars, settings):
    explorer = open_explorer(qtbot, stars, settings)
    canvas = explorer.canvas
    explorer.toolbar.fit.trigger()
    xy = explorer.model.xy

    def span() -> float:
        lo = canvas.view_transform().map(QPointF(*xy.min(axis=0)))
        hi = canvas.view_transform().map(QPointF(*xy.max(axis=0)))
        return max((hi.x() - lo.x()) / canvas.width(), (hi.y() - lo.y()) / canvas.height())

    explorer.resize(explorer.width() // 2, explorer.height() * 3 // 4)  # a laptop: the chat takes half
    qtbot.waitUntil(lambda: 0.85 <= span() <= 1.0, timeout=2000)
    qtbot.keyClick(canvas, Qt.Key.Key_Plus)  # the person zooms in: a resize no longer refits
    zoomed = canvas.scale
    explorer.resize(explorer.width() + 100, explorer.height())
    QApplication.processEvents()
    assert canvas.scale == zoomed
    assert explorer.shutdown()


def test_legend_and_counts_follow_a_hidden_type(qtbot, explorer):
    everyone = sum(count for _, _, count in explorer.legend.entries)
    assert everyone == explorer.model.size
    person = next(a for a in explorer.toolbar.types.menu().actions() if a.text() == "person")
    with qtbot.waitSignal(explorer.sceneReady, timeout=LOAD_MS):
        person.trigger()  # unchecks it
    people = explorer.model.types.count("person")
    assert "person" not in [label for label, _, _ in explorer.legend.entries]
    assert sum(count for _, _, count in explorer.legend.entries) == everyone - people
    assert explorer.status.text().startswith(f"{everyone - people:,} of {everyone:,} entities")


def test_the_minimap_appears_only_when_the_graph_is_larger_than_the_view(qtbot, explorer):
    explorer.toolbar.fit.trigger()
    assert not explorer.minimap.isVisible()
    for _ in range(4):
        qtbot.keyClick(explorer.canvas, Qt.Key.Key_Plus)
    assert explorer.minimap.isVisible()
    explorer.toolbar.minimap.click()
    assert not explorer.minimap.isVisible()


def test_the_view_is_restored_on_reopen(qtbot, explorer, store, settings):
    bar = explorer.toolbar
    with qtbot.waitSignal(explorer.sceneReady, timeout=LOAD_MS):
        bar.colour.setCurrentIndex(1)
    with qtbot.waitSignal(explorer.sceneReady, timeout=LOAD_MS):
        bar.min_degree.setValue(2)
    qtbot.keyClick(explorer.canvas, Qt.Key.Key_Plus)
    qtbot.keyClick(explorer.canvas, Qt.Key.Key_Right)
    qtbot.waitUntil(lambda: not explorer._save_view.isActive(), timeout=LOAD_MS)
    centre, scale = explorer.canvas.visible_rect().center(), explorer.canvas.scale
    again = open_explorer(qtbot, store, QSettings(settings.fileName(), QSettings.Format.IniFormat))
    assert again.toolbar.colour.currentIndex() == 1 and again.toolbar.min_degree.value() == 2
    assert again.canvas.scale == pytest.approx(scale)
    assert (again.canvas.visible_rect().center() - centre).manhattanLength() < 1e-6
    assert again.shutdown()
