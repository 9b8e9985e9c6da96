"""The explorer's reads: loading the graph, finding communities, the side panel's details, shutting down.

A mixin of `GraphExplorer` (its widgets and signals are the explorer's), so the widget's
file holds the look and the selection. Every read is a latest-only job on the runner;
results that land after the explorer closed, or after a newer request, are dropped.
"""

from __future__ import annotations

from docatlas.gui.graph.details import EntityDetails, RelationDetails
from docatlas.gui.jobs.graph import communities_job, details_job, load_graph_job
from docatlas.gui.tasks import TaskFailure


class ExplorerReads:
    """Loading, communities, details and shutdown for `GraphExplorer`."""

    def init_reads(self) -> None:
        """The state the reads keep (called first in the explorer's constructor)."""
        token = object()  # this explorer's keys, and no other's
        self._keys = {name: (name, token) for name in ("load", "communities", "scene", "details")}
        self._details_asked = 0  # the newest details read: an older one that lands is ignored
        self.reading_details = False  # the side panel waits for a background read
        self._loading = False
        self._again: bool | None = None  # reload wanted while loading (with relayout?)
        self._communities_asked = False
        self._stale = False
        self._closed = False

    def reload(self, relayout: bool = False) -> None:
        """Read the graph again (after ingestion or an edit); positions come from the cache.

        While the explorer is hidden (another tab) a reload waits until it is shown, the first load
        too: a window opening on the Documents tab does not load and lay out a graph nobody sees."""
        if not self.isVisible() and not relayout:
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

    def _loaded(self, result: tuple) -> None:
        if self._closed:
            return
        model, scene, look, overview = result
        # a graph that grows (a run going on) stays fitted until the person moves the view
        fit = self.model is None or self.model.size == 0 or self.canvas.view_is_fitted
        self.model = model
        self._loading = False
        self.toolbar.names.setStringList(model.completions)
        self.toolbar.set_documents(model.documents)
        self.toolbar.types.set_choices([(t, t) for t in model.type_names])
        self._set_community_choices()
        self._install(scene, look, overview, fit=fit)
        if model.placed:
            self.status.setText(f"{self.status.text()} · laid out {model.placed:,} in {model.layout_seconds:.1f} s")
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

    def _communities_found(self, result: tuple) -> None:
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

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Stop background work (before the widget goes); queued edits still land, results are dropped."""
        self._closed = True
        done = [self.tasks.stop(list(self._keys.values()), timeout_ms)]
        done += [self.canvas.shutdown(), self.minimap.shutdown(), self.editor.shutdown(timeout_ms)]
        if self.local_view is not None:
            done.append(self.local_view.shutdown(timeout_ms))
        if self._own_tasks:
            done.append(self.tasks.shutdown(timeout_ms))
        return all(done)
