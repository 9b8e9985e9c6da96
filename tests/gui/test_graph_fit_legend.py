"""Fit in the window's Graph tab leaves the legend and the counts clear, on both laptop sizes."""

from __future__ import annotations

import pytest
from core.test_edits_helpers import build_graph
from docatlas.core.base import paths
from docatlas.core.storage.database import Store
from docatlas.gui.graph.fit_area import fitted_view, free_areas
from PySide6.QtCore import QPoint, QRectF, Qt
from PySide6.QtWidgets import QApplication
from test_gui_fit import LAPTOPS

LOAD_MS = 20_000


def fitted_nodes(canvas) -> QRectF:
    """The shown nodes (with their radii) in the canvas's pixels."""
    return canvas.view_transform().mapRect(canvas.node_bounds())


@pytest.mark.parametrize("laptop", sorted(LAPTOPS))
def test_fit_keeps_the_nodes_clear_of_the_legend_and_the_counts(qtbot, make_window, workspace_dir, laptop):
    with Store(paths.database_path(workspace_dir)) as store:
        build_graph(store)
    window = make_window()
    width, height = LAPTOPS[laptop]
    window.resize(width, height)
    qtbot.waitUntil(lambda: window.width() == width and window.height() == height, timeout=5000)
    tab_bar = window.tabs.tabBar()
    graph_index = next(i for i in range(window.tabs.count()) if window.tabs.tabText(i) == "Graph")
    qtbot.mouseClick(tab_bar, Qt.MouseButton.LeftButton, pos=tab_bar.tabRect(graph_index).center())
    explorer = window.graph_tab
    qtbot.waitUntil(lambda: explorer.model is not None and explorer.canvas.look is not None
                    and bool(explorer.legend.entries), timeout=LOAD_MS)
    canvas = explorer.canvas
    canvas.zoom_by(0.5)  # the person looked around first
    canvas.pan_by(-200, 120)
    explorer.toolbar.fit.trigger()  # the Fit button
    QApplication.processEvents()
    nodes = fitted_nodes(canvas)
    legend = QRectF(explorer.legend.geometry())
    counts = QRectF(explorer.status.geometry())
    assert explorer.legend.isVisible() and explorer.status.isVisible()
    assert QRectF(canvas.rect()).contains(nodes)  # the whole graph is in view...
    assert not nodes.intersects(legend)  # ...and none of it under the legend
    assert not nodes.intersects(counts)
    assert nodes.width() > 0.5 * canvas.width() or nodes.height() > 0.5 * canvas.height()  # still large

    window.resize(width - 200, height - 100)  # a fitted view is fitted again when the window changes
    qtbot.waitUntil(lambda: window.width() == width - 200, timeout=5000)
    QApplication.processEvents()
    assert not fitted_nodes(canvas).intersects(QRectF(explorer.legend.geometry()))
    assert canvas.mapTo(window, QPoint(0, 0)).y() > 0


def test_the_free_areas_avoid_each_cover_and_the_largest_view_wins():
    legend = QRectF(8, 452, 120, 40)  # bottom-left of a 600 x 500 canvas
    counts = QRectF(420, 474, 170, 20)  # bottom-right
    areas = free_areas(600, 500, [legend, counts])
    assert areas and all(not a.intersects(legend) and not a.intersects(counts) for a in areas)
    wide = QRectF(0, 0, 300, 100)  # a wide graph gives up a strip at the bottom
    centre, scale = fitted_view(wide, 600, 500, [legend, counts], 1.0)
    shown = QRectF(300 + (wide.left() - centre.x()) * scale, 250 + (wide.top() - centre.y()) * scale,
                   wide.width() * scale, wide.height() * scale)
    assert not shown.intersects(legend) and not shown.intersects(counts)
    assert abs(shown.width() - 600) < 1e-6  # the full width: only height was given up
