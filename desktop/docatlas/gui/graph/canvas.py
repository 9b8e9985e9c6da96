"""The painted graph: pan, zoom (wheel, pinch, keys), pick, drag to pin, communities from afar.

A frame shows the last rendered image of the active scene (see `render`) under the current
view transform, then draws the live layer (`overlay`: hover, selection, labels). When the
view settles, or the scene changes, a fresh image is asked for; it covers a margin around
the window so that panning shows drawn graph, not blank space. A big graph seen from afar
is `collapsed`: the active scene is its `overview` (one disc per community), which zooming
in or double-clicking a disc expands into the members; so a frame never costs more than
drawing a few thousand items, whatever the graph's size. The colours follow the
application's palette (`palette.current_theme`); the explorer rebuilds the scene when it changes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QPoint, QPointF, QRectF, QSize, Qt, QTimer, Signal, Slot
from PySide6.QtGui import (
    QColor,
    QFont,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QTransform,
)
from PySide6.QtWidgets import QWidget

from docatlas.gui.graph import overlay
from docatlas.gui.graph.canvas_input import CanvasInput
from docatlas.gui.graph.fit_area import fitted_view
from docatlas.gui.graph.label_texts import LabelTexts
from docatlas.gui.graph.labels import LabelIndex
from docatlas.gui.graph.model import GraphModel
from docatlas.gui.graph.overview import Overview
from docatlas.gui.graph.palette import Theme, current_theme
from docatlas.gui.graph.query import Look
from docatlas.gui.graph.render import Rendered
from docatlas.gui.graph.renderer import Renderer
from docatlas.gui.graph.scene import Scene
from docatlas.gui.tasks import TaskRunner

MARGIN = 0.25  # rendered beyond each side of the window, as a fraction of its size
SETTLE_MS = 60
MIN_SCALE, MAX_SCALE = 1e-4, 40.0
FIT_FILL = 0.96  # Fit makes the graph span this much of the canvas (width or height)
AGGREGATE_FROM = 20_000  # shown nodes from which a far view draws communities
DETAIL_NODES = 12_000  # nodes a view may hold at the graph's density before it is collapsed
EMPTY_TEXT = "The graph is empty. Add documents on the Documents tab to see their entities here."


class GraphCanvas(CanvasInput, QWidget):
    """Shows a `Scene`; reports clicks by node or edge index."""

    nodeClicked = Signal(int, bool)  # node, additive (Ctrl/Shift held)
    nodeDoubleClicked = Signal(int)
    nodeMoved = Signal(int)  # a node was dragged to a new place (the explorer pins it)
    contextRequested = Signal(str, int, QPoint)  # "node" or "edge", its index, global position
    edgeClicked = Signal(int)
    backgroundClicked = Signal()
    viewChanged = Signal()
    imageReady = Signal()  # a freshly rendered image is on screen

    def __init__(self, tasks: TaskRunner | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.model: GraphModel | None = None
        self.scene: Scene | None = None
        self.look: Look | None = None
        self.overview: Overview | None = None
        self.selection: list[int] = []
        self.selected_edge: int | None = None
        self.hovered: int | None = None
        self.dragging: int | None = None  # the node being dragged
        self.show_labels = True
        self.aggregate_from, self.detail_nodes = AGGREGATE_FROM, DETAIL_NODES
        self._bounds: tuple[object, QRectF] | None = None  # node_bounds for one look
        self._shown_count = 0
        self._scale, self._centre = 1.0, QPointF()
        self._image: Rendered | None = None
        self._wanted = 0  # the latest render request
        self._press: QPointF | None = None
        self._dragged = False
        self._grabbed: int | None = None  # the node under the pointer when the button went down
        self.label_order = np.zeros(0, np.int64)
        self.label_index = LabelIndex(np.zeros((0, 2)), self.label_order)
        self.label_font = QFont(self.font())
        self.label_font.setPixelSize(12)
        self.bold_font = QFont(self.label_font)
        self.bold_font.setBold(True)
        self.texts = LabelTexts(self.label_font, self.bold_font)
        self.renderer = Renderer(tasks if tasks is not None else TaskRunner(self), self)
        self.renderer.rendered.connect(self._on_rendered)
        self._settle = QTimer(self, singleShot=True, interval=SETTLE_MS, timeout=self._request_render)
        self._fitted: QRectF | None = None  # the rect the view was fitted to, until it is moved
        self.covered: Callable[[], list[QRectF]] = list  # where overlays sit (pixels); Fit keeps nodes clear
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.grabGesture(Qt.GestureType.PinchGesture)
        self.setMinimumSize(200, 150)

    # -- content ---------------------------------------------------------------------------

    def set_scene(self, model: GraphModel, scene: Scene | None, look: Look, fit: bool = False,
                  overview: Overview | None = None) -> None:
        """Show a new scene (None: not built yet; the overview stands in) (the view stays unless `fit`)."""
        self.texts.use_names(model.names)
        self.model, self.scene, self.look, self.overview = model, scene, look, overview
        self._shown_count, self._bounds = int(look.shown.sum()), None
        order = np.nonzero(look.shown)[0]
        order = order[np.lexsort((order, look.dimmed[order], -look.radius[order]))]
        self.label_order = order
        self.label_index = LabelIndex(model.xy, order)
        self.selection = [i for i in self.selection if i < model.size]
        if self.selected_edge is not None and self.selected_edge >= len(model.sources):
            self.selected_edge = None
        if self.hovered is not None and self.hovered >= model.size:
            self.hovered = None
        if fit:
            self.fit()
        self._request_render()
        self.update()

    @property
    def view_is_fitted(self) -> bool:
        """The view is still the one a fit set: the person has not panned or zoomed since."""
        return self._fitted is not None

    @property
    def theme(self) -> Theme:
        """The colours in use: the look's, or the application's before any look."""
        return self.look.theme if self.look is not None else current_theme()

    @property
    def collapsed(self) -> bool:
        """True when the view draws communities instead of nodes (a big graph seen from afar)."""
        if self.overview is None or self.look is None:
            return False
        if self.scene is None:
            return True
        return self._shown_count >= self.aggregate_from and self._scale < self.detail_scale()

    def detail_scale(self) -> float:
        """The zoom from which a view holds at most `detail_nodes` nodes at the graph's density."""
        bounds = self.node_bounds()
        area = max(bounds.width() * bounds.height(), 1e-9)
        return float(np.sqrt(self._shown_count * self.width() * self.height() / (area * self.detail_nodes)))

    @property
    def active_scene(self) -> Scene | None:
        """What the image shows: the overview when collapsed, else every node."""
        return self.overview.scene if self.collapsed else self.scene

    def node_bounds(self) -> QRectF:
        """Where the shown nodes are (a few far outliers of a big graph left out), with their radii
        (computed once per look, and again after a drag)."""
        key = (id(self.look), self.dragging)
        if self._bounds is None or self._bounds[0] != key:
            self._bounds = (key, self._node_bounds())
        return QRectF(self._bounds[1])

    def _node_bounds(self) -> QRectF:
        if self.model is None or self.look is None or not self.look.shown.any():
            return QRectF()
        xy = self.model.xy[self.look.shown]
        if len(xy) > 2000:
            lo, hi = np.percentile(xy, 0.2, axis=0), np.percentile(xy, 99.8, axis=0)
        else:
            lo, hi = xy.min(axis=0), xy.max(axis=0)
        pad = float(self.look.radius[self.look.shown].max())
        return QRectF(lo[0] - pad, lo[1] - pad, hi[0] - lo[0] + 2 * pad, hi[1] - lo[1] + 2 * pad)

    # -- the view --------------------------------------------------------------------------

    @property
    def scale(self) -> float:
        """Pixels per scene unit."""
        return self._scale

    def view_transform(self) -> QTransform:
        """Scene units to widget pixels."""
        t = QTransform()
        t.translate(self.width() / 2, self.height() / 2)
        t.scale(self._scale, self._scale)
        t.translate(-self._centre.x(), -self._centre.y())
        return t

    def visible_rect(self) -> QRectF:
        """The part of the scene in the window."""
        w, h = self.width() / self._scale, self.height() / self._scale
        return QRectF(self._centre.x() - w / 2, self._centre.y() - h / 2, w, h)

    def set_view(self, centre: QPointF, scale: float) -> None:
        """Look at `centre` with `scale` pixels per scene unit."""
        self._centre = QPointF(centre)
        self._scale = float(min(max(scale, MIN_SCALE), MAX_SCALE))
        self._view_moved()

    def fit(self, rect: QRectF | None = None) -> None:
        """Show `rect` (the shown nodes by default) filling the window, clear of the overlays (`covered`)."""
        rect = rect if rect is not None else self.node_bounds()
        if rect.width() < 1e-6 or rect.height() < 1e-6:
            rect = rect.adjusted(-50, -50, 50, 50)
        self.set_view(*fitted_view(rect, self.width(), self.height(), self.covered(), FIT_FILL))
        self._fitted = QRectF(rect)  # until the view is moved, a resize fits this again

    def centre_on(self, node: int, min_scale: float = 0.0) -> None:
        """Bring a node to the middle, zooming in to at least `min_scale`."""
        x, y = self.model.xy[node]
        self.set_view(QPointF(x, y), max(self._scale, min_scale))

    def zoom_by(self, factor: float, anchor: QPointF | None = None) -> None:
        """Zoom by `factor`, keeping the scene point under `anchor` (widget pixels) in place."""
        anchor = anchor if anchor is not None else QPointF(self.width() / 2, self.height() / 2)
        before = self.view_transform().inverted()[0].map(anchor)
        self._scale = float(min(max(self._scale * factor, MIN_SCALE), MAX_SCALE))
        after = self.view_transform().inverted()[0].map(anchor)
        self._centre += before - after
        self._view_moved()

    def pan_by(self, dx: float, dy: float) -> None:
        """Move the view by pixels."""
        self._centre -= QPointF(dx / self._scale, dy / self._scale)
        self._view_moved()

    def _view_moved(self) -> None:
        """Frames of a gesture only move the last image: a render under way is abandoned (it would
        hold the GIL the frames need) and a fresh one is asked for once the view rests (`SETTLE_MS`)."""
        self._fitted = None
        self.renderer.abandon()
        self._settle.start()
        self.update()
        self.viewChanged.emit()

    # -- rendering -------------------------------------------------------------------------

    def _image_fits(self) -> bool:
        image = self._image
        if image is None or self.active_scene is None or image.source is not self.active_scene:
            return False
        if abs(image.transform.m11() / self._scale - 1.0) > 1e-9:
            return False
        ratio = image.image.devicePixelRatio()
        area = QRectF(0, 0, image.image.width() / ratio, image.image.height() / ratio)
        covered = image.transform.inverted()[0].mapRect(area)
        return covered.contains(self.visible_rect())

    @Slot()
    def _request_render(self) -> None:
        scene = self.active_scene
        if scene is None or self._image_fits() or self.width() < 1:
            return
        mx, my = round(self.width() * MARGIN), round(self.height() * MARGIN)
        transform = self.view_transform() * QTransform.fromTranslate(mx, my)
        size = QSize(self.width() + 2 * mx, self.height() + 2 * my)
        self._wanted = self.renderer.request(scene, size, transform, self.devicePixelRatioF())

    @Slot(object)
    def _on_rendered(self, result: Rendered) -> None:
        if result.source is not self.scene and (self.overview is None or result.source is not self.overview.scene):
            return  # an image of a scene no longer shown
        self._image = result
        self.update()
        if result.request == self._wanted:
            self.imageReady.emit()
        if not self._image_fits():
            self._settle.start()

    @property
    def settled(self) -> bool:
        """True when the image on screen is the one the current view and scene need."""
        return self._image_fits() and not self.renderer.busy

    # -- painting --------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        """One blit of the rendered image (opaque: the background shows only where it does not
        reach), then the live layer (`overlay`)."""
        painter = QPainter(self)
        image = self._image  # the active scene's, or the last one's until it is drawn
        to_widget = image.transform.inverted()[0] * self.view_transform() if image is not None else None
        if image is None or not self._image_covers(to_widget):
            painter.fillRect(self.rect(), QColor(self.theme.background))
        if image is not None:
            painter.setTransform(to_widget)
            painter.drawImage(QPointF(0, 0), image.image)
            painter.resetTransform()
        if self.model is not None and self.model.size == 0:
            self._paint_empty(painter)
        self.paint_overlay(painter)
        painter.end()
        if self._settle.isActive():  # the rest is counted from the frame painted: a slow frame is no rest
            self._settle.start()

    def _image_covers(self, to_widget: QTransform) -> bool:
        ratio = self._image.image.devicePixelRatio()
        area = QRectF(0, 0, self._image.image.width() / ratio, self._image.image.height() / ratio)
        return to_widget.mapRect(area).contains(QRectF(self.rect()))

    def _paint_empty(self, painter: QPainter) -> None:
        painter.setPen(QColor(self.theme.text))
        painter.setFont(self.bold_font)
        painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, EMPTY_TEXT)

    def paint_overlay(self, painter: QPainter) -> None:
        """The live layer: hover, selection, selected edge and labels."""
        overlay.paint(painter, self)

    def centre_point(self) -> np.ndarray:
        """The scene point in the middle, as an array."""
        return np.array([self._centre.x(), self._centre.y()])

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Keep the centre (a fitted view is fitted again); ask for an image of the new size."""
        super().resizeEvent(event)
        if self._fitted is not None and self.width() > 0 and self.height() > 0:
            self.fit(self._fitted)
        self.renderer.abandon()
        self._settle.start()

    def shutdown(self) -> bool:
        """Stop rendering (before the widget goes away)."""
        self._settle.stop()
        return self.renderer.shutdown()
