"""The explorer's selection: search, nodes and edges chosen on the canvas or in the tables, in step everywhere.

A mixin of `GraphExplorer` (its widgets are the explorer's). The selection is kept by entity
key, so it survives reloads; the canvas, the tables and the side panel follow it.
"""

from __future__ import annotations

from docatlas.gui.graph import query

SEARCH_ZOOM = 1.2  # pixels per scene unit at least, after finding a node


class ExplorerSelection:
    """Search and selection for `GraphExplorer`."""

    def search(self, text: str) -> list[int]:
        """Find nodes by name; select and centre the best match. Returns all matches."""
        if self.model is None:
            return []
        hits = query.search(self.model, text)
        if hits:
            self.select_keys([self.model.keys[hits[0]]], centre=True)
        else:
            self.tell(f"No entity called “{text.strip()}”.")
        return hits

    def select_keys(self, keys: list[str], centre: bool = False) -> None:
        """Select entities by key (and bring the first to the middle)."""
        self.selected_keys = [k for k in dict.fromkeys(keys) if self.model is None or k in self.model.index]
        self.selected_edge = None
        if centre and self.selected_keys and self.model is not None:
            self.canvas.centre_on(self.model.index[self.selected_keys[0]], SEARCH_ZOOM)
        self._selection_changed()

    def select_edge(self, edge: int) -> None:
        """Select one edge (by index): highlighted with both ends, its details in the panel."""
        self.selected_keys = []
        self.selected_edge = (self.model.keys[self.model.sources[edge]], self.model.keys[self.model.targets[edge]])
        self._selection_changed()

    def clear_selection(self) -> None:
        """Select nothing."""
        self.selected_keys, self.selected_edge = [], None
        self._selection_changed()

    def _edge_index(self) -> int | None:
        if self.selected_edge is None or self.model is None:
            return None
        a, b = (self.model.index.get(k) for k in self.selected_edge)
        return self.model.edge_between(a, b) if a is not None and b is not None else None

    def _node_clicked(self, node: int, additive: bool) -> None:
        key = self.model.keys[node]
        if additive:
            keys = [k for k in self.selected_keys if k != key] if key in self.selected_keys \
                else [*self.selected_keys, key]
        else:
            keys = [key]
        self.select_keys(keys)

    def _selection_changed(self) -> None:
        self.notice = ""
        if self.model is not None:
            self.canvas.selection = [self.model.index[k] for k in self.selected_keys]
            self.canvas.selected_edge = self._edge_index()
            self.canvas.update()
            if self.tables.isVisible():
                self.tables.show_selection(self.canvas.selection, self.canvas.selected_edge)
            bar = self.toolbar
            if bar.focus.isChecked() or bar.neighbours.isChecked():
                self.refresh_look()
        self._refresh_panel()
