"""Where Fit may put the graph: the canvas less the corners its overlays cover (legend, counts).

Each overlay can be kept clear of in two ways: by leaving its width free on its side, or its
height free above or below it. Every combination is tried and the one that lets the graph
be drawn largest wins, so a wide graph gives up a strip at the bottom and a tall one a strip
at the side. No Qt widgets here: plain rectangles in the canvas's pixels.
"""

from __future__ import annotations

from itertools import product

from PySide6.QtCore import QPointF, QRectF

GAP = 4.0  # pixels kept between an overlay and the fitted graph
SMALLEST = 40.0  # an area narrower or lower than this is no place for a graph


def free_areas(width: float, height: float, covers: list[QRectF]) -> list[QRectF]:
    """The rectangles of a `width` x `height` canvas that no cover touches (one per way of avoiding them)."""
    whole = QRectF(0, 0, width, height)
    areas = []
    for ways in product((True, False), repeat=len(covers)):
        area = QRectF(whole)
        for cover, beside in zip(covers, ways, strict=True):
            if area.intersects(cover):
                area = _avoid(area, cover, beside, whole.center())
        if area.width() >= SMALLEST and area.height() >= SMALLEST:
            areas.append(area)
    return areas or [whole]


def fitted_view(rect: QRectF, width: float, height: float, covers: list[QRectF],
                fill: float) -> tuple[QPointF, float]:
    """(scene point for the canvas's centre, scale) that shows `rect` as large as it goes clear of `covers`."""
    best_scale, best_area = -1.0, QRectF(0, 0, width, height)
    for area in free_areas(width, height, covers):
        scale = fill * min(area.width() / rect.width(), area.height() / rect.height())
        if scale > best_scale:
            best_scale, best_area = scale, area
    offset = best_area.center() - QPointF(width / 2, height / 2)  # the area's centre, from the canvas's
    return rect.center() - offset / best_scale, best_scale


def _avoid(area: QRectF, cover: QRectF, beside: bool, middle: QPointF) -> QRectF:
    """`area` cut so that it stops short of `cover`: at its side (`beside`) or above/below it."""
    cut = QRectF(area)
    if beside:
        if cover.center().x() < middle.x():
            cut.setLeft(max(cut.left(), cover.right() + GAP))
        else:
            cut.setRight(min(cut.right(), cover.left() - GAP))
    elif cover.center().y() > middle.y():
        cut.setBottom(min(cut.bottom(), cover.top() - GAP))
    else:
        cut.setTop(max(cut.top(), cover.bottom() + GAP))
    return cut
