"""The graph explorer widget: two rows of controls, the canvas with minimap and legend, tables, details.

Loading (store reads, the layout, communities), building the scene for a filter or
colouring and reading the side panel's details are latest-only jobs (`gui.jobs.graph`) on
the window's `TaskRunner`; the GUI thread runs no SQL and only swaps results in. A big
graph's first scene is its community overview; the scene of every node follows. The
selection is kept by entity key, so it survives reloads after edits; the canvas, the
tables and the panel show the same selection. Edits are in `actions.GraphEditor`;
connect `open_passage` to the passage viewer. The look follows the application's
palette (light, dark, system) and is rebuilt when it changes.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, QPointF, QRect, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import QLabel, QMainWindow, QMenu, QSplitter, QVBoxLayout, QWidget

from docatlas.core.storage.database import Store
from docatlas.gui.graph import menus, query, view_state
from docatlas.gui.graph.actions import GraphEditor
from docatlas.gui.graph.canvas import GraphCanvas
from docatlas.gui.graph.dialogs import Prompter
from docatlas.gui.graph.explorer_reads import ExplorerReads
from docatlas.gui.graph.explorer_selection import ExplorerSelection
from docatlas.gui.graph.legend import Legend
from docatlas.gui.graph.local_view import LocalGraphView
from docatlas.gui.graph.minimap import Minimap
from docatlas.gui.graph.model import GraphModel
from docatlas.gui.graph.overview import Overview
from docatlas.gui.graph.palette import BY_COMMUNITY, current_theme
from docatlas.gui.graph.panel import DetailsPanel
from docatlas.gui.graph.query import Filters, ViewSpec
from docatlas.gui.graph.scene import Scene
from docatlas.gui.graph.tables import GraphTables
from docatlas.gui.graph.toolbar import GraphToolbar
from docatlas.gui.jobs.graph import pin_job, scene_job, unpin_job
from docatlas.gui.tasks import TaskRunner

SAVE_VIEW_MS = 400
PANEL_WIDTH = 300  # the details panel's first width, in pixels


class GraphExplorer(ExplorerSelection, ExplorerReads, QWidget):
    """See, search, filter and fix the knowledge graph of one workspace."""

    open_passage = Signal(int, int, object)  # document id, chunk id, {names, quote}: the main window shows it
    loaded = Signal()  # a (re)loaded graph is on the canvas
    sceneReady = Signal()  # a new scene (filters, colours, focus) is on the canvas
    communitiesReady = Signal()
    selectionChanged = Signal()  # the selection changed and the side panel shows it (details read)
    pinned = Signal(str)  # a dragged node's pin reached the store
    message = Signal(str)  # something to tell the user (also shown in the window's status bar)
    failed = Signal(str)

    def __init__(self, store: Store, prompter: Prompter | None = None, parent: QWidget | None = None,
                 tasks: TaskRunner | None = None, settings=None):
        super().__init__(parent)
        self.store = store  # only its path is used: every read and edit opens its own connection on the runner
        self.tasks = tasks if tasks is not None else TaskRunner(self)  # the window's, or one of its own
        self._own_tasks = tasks is None
        self.init_reads()
        self.prompter = prompter or Prompter()
        self.model: GraphModel | None = None
        self.overview: Overview | None = None
        self.selected_keys: list[str] = []
        self.selected_edge: tuple[str, str] | None = None
        self.context_menu: QMenu | None = None
        self.notice = ""  # the last thing told, shown after the counts until the selection changes
        self.local_view: LocalGraphView | None = None
        self._generation = 0
        self.settings, self._prefix = view_state.settings_for(store.path, settings)
        self._view_restored = False
        self.toolbar = GraphToolbar(self)
        view_state.restore_controls(self.settings, self._prefix, self.toolbar)
        self.canvas = GraphCanvas(self.tasks)
        self.canvas.covered = self._covered
        self.minimap = Minimap(self.canvas, self.tasks, self.canvas)
        self.legend = Legend(self.canvas)
        self.status = QLabel(self.canvas)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.panel = DetailsPanel()
        self.tables = GraphTables()
        self.editor = GraphEditor(self, self)
        self._save_view = QTimer(self, singleShot=True, interval=SAVE_VIEW_MS,
                                 timeout=lambda: view_state.save_view(self.settings, self._prefix, self.canvas))
        left = QSplitter(Qt.Orientation.Vertical)
        left.addWidget(self.canvas)
        left.addWidget(self.tables)
        left.setStretchFactor(0, 3)
        left.setStretchFactor(1, 2)
        self.tables.setVisible(self.toolbar.table.isChecked())
        splitter = QSplitter()
        splitter.addWidget(left)
        splitter.addWidget(self.panel)
        splitter.setStretchFactor(0, 4)
        splitter.setStretchFactor(1, 1)
        splitter.setCollapsible(0, False)
        self.splitter = splitter
        self._sized = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.toolbar)
        layout.addWidget(splitter, 1)
        self._style_status()
        self._connect()

    def _connect(self) -> None:
        bar = self.toolbar
        bar.changed.connect(self.refresh_look)
        bar.changed.connect(lambda: view_state.save_controls(self.settings, self._prefix, bar))
        bar.searchRequested.connect(self.search)
        bar.fitRequested.connect(lambda: self.canvas.fit())
        bar.relayoutRequested.connect(lambda: self.reload(relayout=True))
        bar.unpinRequested.connect(self.unpin_all)
        bar.localRequested.connect(lambda: self.open_local_graph(self.selected_keys[0]) if self.selected_keys
                                   else self.tell("Select an entity first, then open its local graph."))
        bar.labels.toggled.connect(self._toggle_labels)
        bar.minimap.toggled.connect(lambda _: self._place_overlays())
        bar.table.toggled.connect(self._toggle_table)
        bar.exportRequested.connect(self.editor.export)
        bar.suggestionsRequested.connect(self.editor.show_suggestions)
        self.editor.exported.connect(lambda path: self.tell(f"Wrote {path}"))
        canvas = self.canvas
        canvas.nodeClicked.connect(self._node_clicked)
        canvas.nodeDoubleClicked.connect(lambda n: self.open_local_graph(self.model.keys[n]))
        canvas.nodeMoved.connect(self._node_moved)
        canvas.contextRequested.connect(lambda kind, index, where: menus.show_menu(self, kind, index, where))
        canvas.edgeClicked.connect(self.select_edge)
        canvas.backgroundClicked.connect(self.clear_selection)
        canvas.viewChanged.connect(self._place_overlays)
        canvas.viewChanged.connect(self._save_view.start)
        self.panel.open_passage.connect(self.open_passage)
        self.panel.neighbourActivated.connect(lambda key: self.select_keys([key], centre=True))
        self.panel.actionRequested.connect(self.editor.act)
        self.tables.rowsChosen.connect(lambda keys: self.select_keys(keys, centre=len(keys) == 1))
        self.tables.edgeChosen.connect(self.select_edge)
        self.tables.exportRequested.connect(self.editor.export_table)

    # -- the look --------------------------------------------------------------------------

    def view_spec(self) -> ViewSpec:
        """The view as the controls and the selection ask for it."""
        bar = self.toolbar
        selection = tuple(self.model.index[k] for k in self.selected_keys if k in self.model.index) \
            if self.model is not None else ()
        around = selection if bar.neighbours.isChecked() else ()
        filters = Filters(types=bar.types.selected(), communities=bar.communities.selected(),
                          document=bar.document.currentData(), min_degree=bar.min_degree.value(),
                          around=around, depth=bar.depth.value())
        return ViewSpec(filters, bar.colour.currentData(), selection, bar.focus.isChecked(), bar.depth.value(),
                        bar.size.currentData(), current_theme())

    def refresh_look(self) -> None:
        """Rebuild the scene for the current controls and selection (on a worker thread)."""
        if self.model is None:
            return
        self._generation += 1
        self.tasks.run("Building the scene", scene_job(self.model, self.view_spec(), self._generation),
                       key=self._keys["scene"], on_success=self._scene_built)

    def _scene_built(self, result: tuple[GraphModel, Scene | None, query.Look, Overview | None]) -> None:
        if self._closed:
            return
        model, scene, look, overview = result
        if model is self.model and (scene is None or scene.generation == self._generation):
            self._install(scene, look, overview)

    def _install(self, scene: Scene | None, look: query.Look, overview: Overview | None, fit: bool = False) -> None:
        model = self.model
        self.overview = overview
        self.canvas.selection = [model.index[k] for k in self.selected_keys if k in model.index]
        self.canvas.selected_edge = self._edge_index()
        restore = fit and not self._view_restored
        mode = self.toolbar.colour.currentData()  # the legend first: a fit leaves room for it
        self.legend.set_entries("Communities" if mode == BY_COMMUNITY else "Types", look.legend, look.theme)
        self.canvas.set_scene(model, scene, look, fit=fit, overview=overview)
        if restore:
            self._view_restored = view_state.restore_view(self.settings, self._prefix, self.canvas) or True
        self.minimap.set_scene(overview.scene if overview is not None else scene or self.canvas.active_scene)
        shown = int(look.shown.sum())
        counts = f"{shown:,} of {model.size:,} entities · {look.edges_shown:,} relations shown"
        counts = counts if shown < model.size else f"{model.size:,} entities · {len(model.sources):,} relations"
        unread = int(model.concept_nodes.sum())
        if unread:  # the concept layer: names found in the text of chunks the model has not read yet
            counts += f" · {unread:,} not read yet (rings)"
        self.status.setText(f"{counts} · {self.notice}" if self.notice else counts)
        if self.tables.isVisible():
            self.tables.set_view(model, look)
            self.tables.show_selection(self.canvas.selection, self.canvas.selected_edge)
        self._style_status()
        self._place_overlays()
        self.sceneReady.emit()
        if scene is None:  # the overview is up: now every node
            self.refresh_look()

    def _toggle_labels(self, on: bool) -> None:
        self.canvas.show_labels = on
        self.canvas.update()

    def _toggle_table(self, on: bool) -> None:
        self.tables.setVisible(on)
        if on and self.model is not None and self.canvas.look is not None:
            self.tables.set_view(self.model, self.canvas.look)
            self.tables.show_selection(self.canvas.selection, self.canvas.selected_edge)

    def _style_status(self) -> None:
        theme = current_theme()
        back = "rgba(30, 33, 38, 225)" if theme.dark else "rgba(251, 251, 252, 225)"
        self.status.setStyleSheet(f"QLabel {{ background: {back}; color: {theme.text}; border-radius: 3px;"
                                  " padding: 2px 6px; }")

    def _place_overlays(self) -> None:
        canvas = self.canvas
        bounds = canvas.node_bounds()
        larger = not bounds.isEmpty() and not canvas.visible_rect().contains(bounds)
        self.minimap.setVisible(self.toolbar.minimap.isChecked() and self.model is not None and larger)
        self.minimap.move(canvas.width() - self.minimap.width() - 8, 8)
        self.legend.move(self._legend_rect().topLeft())
        self.legend.setVisible(bool(self.legend.entries))
        self.status.adjustSize()
        self.status.move(self._status_rect().topLeft())

    def _legend_rect(self) -> QRect:
        """Where the legend sits: the canvas's bottom-left corner."""
        size = self.legend.size()
        return QRect(8, self.canvas.height() - size.height() - 8, size.width(), size.height())

    def _status_rect(self) -> QRect:
        """Where the counts sit: the canvas's bottom-right corner."""
        size = self.status.sizeHint() if self.status.text() else self.status.size()
        return QRect(self.canvas.width() - size.width() - 10, self.canvas.height() - size.height() - 6,
                     size.width(), size.height())

    def _covered(self) -> list[QRectF]:
        """The canvas's corners the legend and the counts cover (the minimap is hidden once all fits)."""
        return ([QRectF(self._legend_rect())] if self.legend.entries else []) + (
            [QRectF(self._status_rect())] if self.status.text() else [])

    def tell(self, text: str) -> None:
        """Say something in the explorer's status line (until the selection changes) and the window's status bar."""
        self.notice = text
        self.status.setText(text)
        self._place_overlays()
        window = self.window()
        if isinstance(window, QMainWindow):
            window.statusBar().showMessage(text, 10_000)
        self.message.emit(text)

    def changeEvent(self, event: QEvent) -> None:
        """Follow the application's palette: a theme change rebuilds the look."""
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._style_status()
            self.refresh_look()

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Keep the overlays in their corners."""
        super().resizeEvent(event)
        self._place_overlays()

    def showEvent(self, event: QShowEvent) -> None:
        """Give the canvas most of the width the first time; catch up with a reload asked for while hidden."""
        super().showEvent(event)
        if not self._sized:
            self._sized = True
            side = min(PANEL_WIDTH, self.width() // 3)
            self.splitter.setSizes([max(self.width() - side, 200), side])
        if self._stale:
            self.reload()

    # -- pins, local graph -----------------------------------------------------------------

    def _node_moved(self, node: int) -> None:
        """A node was dragged: pin it there (in the store) and redraw the scene around it."""
        model = self.model
        key = model.keys[node]
        x, y = (model.xy[node] / model.scale).tolist()
        self.tasks.run("Pinning a node", pin_job(self.store.path, key, x, y), writes=True,
                       on_success=lambda _: self.pinned.emit(key))
        self.tell(f"Pinned “{model.names[node]}” where you dropped it; Unpin all releases it.")
        self.refresh_look()

    def unpin_all(self) -> None:
        """Release every pinned node (they move again at the next re-layout)."""
        self.tasks.run("Unpinning", unpin_job(self.store.path), writes=True,
                       on_success=lambda _: self.tell("Every node is unpinned; Re-layout places them again."))

    def open_local_graph(self, key: str) -> LocalGraphView:
        """Show an entity's neighbourhood in a view of its own."""
        if self.local_view is None:
            self.local_view = LocalGraphView(self.tasks, self)
            self.local_view.nodeChosen.connect(lambda k: self.select_keys([k], centre=True))
        self.local_view.depth.setValue(self.toolbar.depth.value())
        self.local_view.show_node(self.model, key, self.view_spec())
        return self.local_view

    def visible_nodes(self) -> np.ndarray:
        """Indices of the nodes the canvas shows now."""
        return np.nonzero(self.canvas.look.shown)[0] if self.canvas.look is not None else np.zeros(0, np.int64)

    def centre_of_view(self) -> QPointF:
        """The scene point in the middle of the canvas."""
        return self.canvas.visible_rect().center()
