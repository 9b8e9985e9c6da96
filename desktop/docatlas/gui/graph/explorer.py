"""The graph explorer widget: toolbar, canvas with minimap and legend, details panel.

Loading (store reads, the layout, communities), building the scene for a filter or
colouring and reading the side panel's details are latest-only jobs (`gui.jobs.graph`) on
the window's `TaskRunner`; the GUI thread runs no SQL and only swaps results in. The
selection is kept by entity key, so it survives reloads after edits.
Edits are in `actions.GraphEditor`; connect `open_passage` to the passage viewer.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSplitter, QVBoxLayout, QWidget

from docatlas.core.storage.database import Store
from docatlas.gui.graph import query
from docatlas.gui.graph.actions import GraphEditor
from docatlas.gui.graph.canvas import GraphCanvas
from docatlas.gui.graph.details import EntityDetails, RelationDetails
from docatlas.gui.graph.dialogs import Prompter
from docatlas.gui.graph.legend import Legend
from docatlas.gui.graph.minimap import Minimap
from docatlas.gui.graph.model import GraphModel
from docatlas.gui.graph.palette import BY_COMMUNITY
from docatlas.gui.graph.panel import DetailsPanel
from docatlas.gui.graph.query import Filters, ViewSpec
from docatlas.gui.graph.scene import Scene
from docatlas.gui.graph.toolbar import GraphToolbar
from docatlas.gui.jobs.graph import communities_job, details_job, load_graph_job, scene_job
from docatlas.gui.tasks import TaskFailure, TaskRunner

MINIMAP_FROM = 300  # nodes: smaller graphs fit the window anyway
SEARCH_ZOOM = 1.2  # pixels per scene unit at least, after finding a node


class GraphExplorer(QWidget):
    """See, search, filter and fix the knowledge graph of one workspace."""

    open_passage = Signal(int, int)  # document id, chunk id: the main window shows the passage
    loaded = Signal()  # a (re)loaded graph is on the canvas
    sceneReady = Signal()  # a new scene (filters, colours, focus) is on the canvas
    communitiesReady = Signal()
    selectionChanged = Signal()  # the selection changed and the side panel shows it (details read)
    failed = Signal(str)

    def __init__(self, store: Store, prompter: Prompter | None = None, parent: QWidget | None = None,
                 tasks: TaskRunner | None = None):
        super().__init__(parent)
        self.store = store  # only its path is used: every read and edit opens its own connection on the runner
        self.tasks = tasks if tasks is not None else TaskRunner(self)  # the window's, or one of its own
        self._own_tasks = tasks is None
        token = object()  # this explorer's keys, and no other's
        self._keys = {name: (name, token) for name in ("load", "communities", "scene", "details")}
        self._details_asked = 0  # the newest details read: an older one that lands is ignored
        self.reading_details = False  # the side panel waits for a background read
        self.prompter = prompter or Prompter()
        self.model: GraphModel | None = None
        self.selected_keys: list[str] = []
        self.selected_edge: tuple[str, str] | None = None
        self._generation = 0
        self._loading = False
        self._again: bool | None = None  # reload wanted while loading (with relayout?)
        self._communities_asked = False
        self._stale = False
        self._closed = False
        self.toolbar = GraphToolbar(self)
        self.canvas = GraphCanvas(self.tasks)
        self.minimap = Minimap(self.canvas, self.tasks, self.canvas)
        self.legend = Legend(self.canvas)
        self.status = QLabel(self.canvas)
        self.status.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.status.setStyleSheet("QLabel { background: rgba(251, 251, 252, 225); color: #3b4148;"
                                  " border-radius: 3px; padding: 2px 6px; }")
        self.panel = DetailsPanel()
        self.editor = GraphEditor(self, self)
        splitter = QSplitter()
        splitter.addWidget(self.canvas)
        splitter.addWidget(self.panel)
        splitter.setStretchFactor(0, 4)
        splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        top.addWidget(self.toolbar, 1)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)
        self._connect()

    def _connect(self) -> None:
        bar = self.toolbar
        bar.changed.connect(self.refresh_look)
        bar.searchRequested.connect(self.search)
        bar.fitRequested.connect(lambda: self.canvas.fit())
        bar.relayoutRequested.connect(lambda: self.reload(relayout=True))
        bar.labels.toggled.connect(self._toggle_labels)
        bar.minimap.toggled.connect(lambda _: self._place_overlays())
        bar.exportRequested.connect(self.editor.export)
        bar.suggestionsRequested.connect(self.editor.show_suggestions)
        self.canvas.nodeClicked.connect(self._node_clicked)
        self.canvas.nodeDoubleClicked.connect(lambda n: self.canvas.centre_on(n, SEARCH_ZOOM * 2))
        self.canvas.edgeClicked.connect(self._edge_clicked)
        self.canvas.backgroundClicked.connect(self.clear_selection)
        self.canvas.viewChanged.connect(self._place_overlays)
        self.panel.open_passage.connect(self.open_passage)
        self.panel.neighbourActivated.connect(lambda key: self.select_keys([key], centre=True))
        self.panel.actionRequested.connect(self.editor.act)

    # -- loading ---------------------------------------------------------------------------

    def reload(self, relayout: bool = False) -> None:
        """Read the graph again (after ingestion or an edit); positions come from the cache.

        While the explorer is hidden (another tab) a reload waits until it is shown."""
        if self.model is not None and not self.isVisible() and not relayout:
            self._stale = True
            return
        self._stale = False
        if self._closed:
            return
        if self._loading:
            self._again = bool(self._again) or relayout
            return
        self._loading, self._again = True, None
        spec, path, selected = self.view_spec(), self.store.path, list(self.selected_keys)
        self._generation += 1
        self.status.setText("Laying out the graph…" if relayout else "Loading the graph…")
        self._place_overlays()
        self.tasks.run("Loading the graph", load_graph_job(path, spec, selected, relayout, self._generation),
                       key=self._keys["load"], on_success=self._loaded, on_failure=self._load_failed)

    def _loaded(self, result: tuple[GraphModel, Scene, query.Look]) -> None:
        if self._closed:
            return
        model, scene, look = result
        first = self.model is None or self.model.size == 0
        self.model = model
        self._loading = False
        self.toolbar.names.setStringList(sorted(set(model.names), key=str.casefold))
        self.toolbar.set_documents(model.documents)
        self.toolbar.types.set_choices([(t, t) for t in model.type_names])
        self._set_community_choices()
        self._install(scene, look, fit=first)
        timing = f" · laid out {model.placed} in {model.layout_seconds:.1f} s" if model.placed else ""
        self.status.setText(f"{model.size:,} entities · {len(model.sources):,} relations{timing}")
        self._place_overlays()
        self._refresh_panel()
        self.loaded.emit()
        if self._again is not None:
            self.reload(self._again)
        elif model.size and not self._communities_asked and (model.community < 0).all():
            self._find_communities()

    def _load_failed(self, failure: TaskFailure) -> None:
        self._loading = False
        if self._closed or failure.cancelled:  # the window is closing: nothing to tell
            return
        message = failure.message
        self.status.setText(message)
        self._place_overlays()
        self.failed.emit(message)
        if self._again is not None:
            self.reload(self._again)

    def _find_communities(self) -> None:
        self._communities_asked = True
        self.tasks.run("Finding communities", communities_job(self.store.path, self.model),
                       key=self._keys["communities"], on_success=self._communities_found)

    def _communities_found(self, result: tuple[GraphModel, GraphModel]) -> None:
        if self._closed:
            return
        model, coloured = result
        if self.model is not model:
            self._communities_asked = False  # the graph changed meanwhile: ask again for the new one
            if self.model is not None and (self.model.community < 0).all():
                self._find_communities()
            return
        self.model = coloured
        self._set_community_choices()
        self.communitiesReady.emit()
        self.refresh_look()

    def _set_community_choices(self) -> None:
        titles = self.model.community_titles if self.model is not None else []
        self.toolbar.communities.set_choices([(i, t) for i, t in enumerate(titles)] + [(-1, "No community")])

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
        return ViewSpec(filters, bar.colour.currentData(), selection, bar.focus.isChecked(), bar.depth.value())

    def refresh_look(self) -> None:
        """Rebuild the scene for the current controls and selection (on a worker thread)."""
        if self.model is None:
            return
        self._generation += 1
        self.tasks.run("Building the scene", scene_job(self.model, self.view_spec(), self._generation),
                       key=self._keys["scene"], on_success=self._scene_built)

    def _scene_built(self, result: tuple[GraphModel, Scene, query.Look]) -> None:
        if self._closed:
            return
        model, scene, look = result
        if model is self.model and scene.generation == self._generation:  # else a newer one is coming
            self._install(scene, look)

    def _install(self, scene: Scene, look: query.Look, fit: bool = False) -> None:
        self.canvas.selection = [self.model.index[k] for k in self.selected_keys if k in self.model.index]
        self.canvas.set_scene(self.model, scene, look, fit=fit)
        self.minimap.set_scene(scene)
        mode = self.toolbar.colour.currentData()
        self.legend.set_entries("Communities" if mode == BY_COMMUNITY else "Types", look.legend)
        self._place_overlays()
        self.sceneReady.emit()

    def _toggle_labels(self, on: bool) -> None:
        self.canvas.show_labels = on
        self.canvas.update()

    def _place_overlays(self) -> None:
        canvas = self.canvas
        show_map = self.toolbar.minimap.isChecked() and self.model is not None and self.model.size >= MINIMAP_FROM
        self.minimap.setVisible(show_map)
        self.minimap.move(canvas.width() - self.minimap.width() - 8, 8)
        self.legend.move(8, canvas.height() - self.legend.height() - 8)
        self.legend.setVisible(bool(self.legend.entries))
        self.status.adjustSize()
        self.status.move(canvas.width() - self.status.width() - 10, canvas.height() - self.status.height() - 6)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Keep the overlays in their corners."""
        super().resizeEvent(event)
        self._place_overlays()

    def showEvent(self, event: QShowEvent) -> None:
        """Catch up with a reload asked for while hidden."""
        super().showEvent(event)
        if self._stale:
            self.reload()

    # -- selection and search --------------------------------------------------------------

    def search(self, text: str) -> list[int]:
        """Find nodes by name; select and centre the best match. Returns all matches."""
        if self.model is None:
            return []
        hits = query.search(self.model, text)
        if hits:
            self.select_keys([self.model.keys[hits[0]]], centre=True)
        else:
            self.status.setText(f"No entity called “{text.strip()}”.")
            self._place_overlays()
        return hits

    def select_keys(self, keys: list[str], centre: bool = False) -> None:
        """Select entities by key (and bring the first to the middle)."""
        self.selected_keys = [k for k in dict.fromkeys(keys) if self.model is None or k in self.model.index]
        self.selected_edge = None
        if centre and self.selected_keys and self.model is not None:
            self.canvas.centre_on(self.model.index[self.selected_keys[0]], SEARCH_ZOOM)
        self._selection_changed()

    def clear_selection(self) -> None:
        """Select nothing."""
        self.selected_keys, self.selected_edge = [], None
        self._selection_changed()

    def _node_clicked(self, node: int, additive: bool) -> None:
        key = self.model.keys[node]
        if additive:
            keys = [k for k in self.selected_keys if k != key] if key in self.selected_keys \
                else [*self.selected_keys, key]
        else:
            keys = [key]
        self.select_keys(keys)

    def _edge_clicked(self, edge: int) -> None:
        self.selected_keys = []
        a, b = self.model.keys[self.model.sources[edge]], self.model.keys[self.model.targets[edge]]
        self.selected_edge = (a, b)
        self._selection_changed()

    def _selection_changed(self) -> None:
        if self.model is not None:
            self.canvas.selection = [self.model.index[k] for k in self.selected_keys]
            self.canvas.update()
            bar = self.toolbar
            if bar.focus.isChecked() or bar.neighbours.isChecked():
                self.refresh_look()
        self._refresh_panel()

    def _refresh_panel(self) -> None:
        """Show the selection in the side panel; an entity's or a relation's details are read in the
        background (latest-only) and `selectionChanged` follows when they are shown."""
        self._details_asked += 1
        self.reading_details = False
        keys = [k for k in self.selected_keys if self.model is not None and k in self.model.index]
        if self.selected_edge is None and len(keys) != 1:
            if len(keys) > 1:
                self.panel.show_selection([self.model.names[self.model.index[k]] for k in keys])
            elif self.model is not None and self.model.size == 0:
                self.panel.show_nothing("The graph is empty: add documents on the Documents tab.")
            else:
                self.panel.show_nothing()
            self.selectionChanged.emit()
            return
        self.reading_details = True
        asked, edge, key = self._details_asked, self.selected_edge, None if self.selected_edge else keys[0]
        self.tasks.run("Reading the details", details_job(self.store.path, edge, key), key=self._keys["details"],
                       on_success=lambda details: self._show_details(asked, details),
                       on_failure=lambda failure: self._details_failed(asked, failure))

    def _show_details(self, asked: int, details: object) -> None:
        if asked != self._details_asked or self._closed:
            return  # a newer selection is being read
        self.reading_details = False
        if isinstance(details, RelationDetails):
            self.panel.show_relation(details)
        elif isinstance(details, EntityDetails):
            self.panel.show_entity(details)
        elif self.selected_edge is not None:
            self.selected_edge = None  # the relation is gone: show the entities selected, if any
            self._refresh_panel()
            return
        else:
            self.panel.show_nothing()
        self.selectionChanged.emit()

    def _details_failed(self, asked: int, failure: TaskFailure) -> None:
        if asked == self._details_asked and not self._closed:
            self.reading_details = False
            self.panel.show_nothing()
            self.failed.emit(failure.message)
            self.selectionChanged.emit()

    def visible_nodes(self) -> np.ndarray:
        """Indices of the nodes the canvas shows now."""
        return np.nonzero(self.canvas.look.shown)[0] if self.canvas.look is not None else np.zeros(0, np.int64)

    def centre_of_view(self) -> QPointF:
        """The scene point in the middle of the canvas."""
        return self.canvas.visible_rect().center()

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Stop background work (before the widget goes); queued edits still land, results are dropped."""
        self._closed = True
        done = [self.tasks.stop(list(self._keys.values()), timeout_ms)]
        done += [self.canvas.shutdown(), self.minimap.shutdown(), self.editor.shutdown(timeout_ms)]
        if self._own_tasks:
            done.append(self.tasks.shutdown(timeout_ms))
        return all(done)
