"""Background renders never hold up a pan or zoom: moving the view makes a render under way
stale (it stops at its next batch and delivers nothing), and no render starts until the view rests."""

from __future__ import annotations

import threading

from docatlas.gui.graph.render import paint_scene, render_image
from docatlas.gui.jobs.graph import render_job
from docatlas.gui.task_context import TaskContext
from PySide6.QtCore import QPoint, QRectF, Qt
from PySide6.QtGui import QImage, QPainter
from test_graph_helpers import (  # noqa: F401  (fixtures, used by name)
    LOAD_MS,
    answers_fixture,
    explorer_fixture,
    settings_fixture,
    store_fixture,
)


def background_point(canvas) -> QPoint:
    """A point of the canvas with no node under it (pressing there pans)."""
    for x in range(40, canvas.width() - 40, 37):
        for y in range(40, canvas.height() - 40, 41):
            if canvas.node_at(QPoint(x, y).toPointF()) is None:
                return QPoint(x, y)
    raise AssertionError("no empty place on the canvas")


def drag(qtbot, canvas, start: QPoint, steps: int = 6) -> None:
    """Press on the background and move the mouse with the button held: the view pans further
    than the rendered image's margin reaches."""
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=start)
    for step in range(1, steps + 1):
        qtbot.mouseMove(canvas, start + QPoint(50 * step, 10 * step))


def test_a_render_under_way_stops_at_its_next_batch_when_the_view_is_dragged(qtbot, explorer):
    canvas = explorer.canvas
    qtbot.waitUntil(lambda: canvas.settled, timeout=LOAD_MS)
    scene, size, transform = canvas.active_scene, canvas.size(), canvas.view_transform()
    start = background_point(canvas)
    request = canvas.renderer.request(scene, size, transform)
    stale = canvas.renderer.wanted.stale_check(request)  # what the render checks before each batch
    checks: list[bool] = []

    def render_checks() -> bool:  # the render has drawn its first batch when it asks the second time
        checks.append(stale())
        if len(checks) == 2:
            drag(qtbot, canvas, start)  # ... and then the user drags the view
            checks.append(stale())
        return checks[-1]

    image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
    painter = QPainter(image)
    everything = paint_scene(painter, scene, QRectF(-1e9, -1e9, 2e9, 2e9))
    painter.end()
    assert everything is not None and everything > 2  # a render of several batches
    assert render_image(scene, size, transform, 1.0, render_checks) is None  # abandoned: no image
    assert checks == [False, False, True]  # one batch drawn, then stopped at the next check
    job = render_job(scene, size, transform, 1.0, request, stale)  # the background job of that request
    assert job(TaskContext(threading.Event(), lambda item: None)) is None  # delivers nothing
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=start + QPoint(300, 60))
    qtbot.waitUntil(lambda: canvas.settled, timeout=LOAD_MS)  # once the view rests, a fresh image
    assert canvas._image.request > request  # a newer request's image, not the abandoned one's


def test_no_render_starts_while_the_view_is_being_dragged(qtbot, explorer):
    canvas = explorer.canvas
    qtbot.waitUntil(lambda: canvas.settled, timeout=LOAD_MS)
    asked = canvas.renderer.requests
    start = background_point(canvas)
    drag(qtbot, canvas, start)
    assert canvas.renderer.requests == asked and canvas.renderer.wanted.request == 0  # nothing drawn, none wanted
    assert not canvas.settled  # the frames show the last image, moved (it no longer covers the view)
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=start + QPoint(300, 60))
    qtbot.waitUntil(lambda: canvas.settled, timeout=LOAD_MS)
    assert canvas.renderer.requests > asked
