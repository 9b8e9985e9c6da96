"""The graph explorer's background jobs: loading, communities, scenes, images, pins, local graphs, exports.

Loading and scene building run on reader threads (latest-only, by key); edits, merge
suggestions and exports of the whole graph write or read the store on a connection of
their own (edits and suggestions on the writer thread). No widgets here:
the images are painted into a `QImage`, which Qt allows off the GUI thread.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtGui import QImage, QTransform

from docatlas.core.base.errors import DocAtlasError
from docatlas.core.graph import layout, suggest
from docatlas.core.graph.export import export
from docatlas.core.storage.database import Store
from docatlas.gui.graph import query
from docatlas.gui.graph.details import EntityDetails, RelationDetails, entity_details, relation_details
from docatlas.gui.graph.local_graph import local_graph
from docatlas.gui.graph.model import GraphModel, load_communities, load_model
from docatlas.gui.graph.overview import Overview, build_overview
from docatlas.gui.graph.query import ViewSpec
from docatlas.gui.graph.render import Rendered, render_image
from docatlas.gui.graph.scene import Scene, build_scene
from docatlas.gui.graph.shown_export import write_shown
from docatlas.gui.tasks import Job, TaskContext, writes_workspace

Built = tuple[GraphModel, Scene | None, query.Look, Overview | None]
DETAIL_LATER_FROM = 20_000  # nodes from which the first scene is the communities' and the full one follows


def _built(model: GraphModel, spec: ViewSpec, generation: int, detail: bool) -> Built:
    """The look, the community overview (big graphs) and, when `detail`, the scene of every node."""
    look = query.compute_look(model, spec)
    overview = build_overview(model, look, generation) if model.size >= DETAIL_LATER_FROM else None
    scene = build_scene(model, look, generation) if detail or overview is None else None
    return model, scene, look, overview


def load_graph_job(db_path: Path, spec: ViewSpec, selected: list[str], relayout: bool, generation: int) -> Job:
    """Read the graph (laid out, from the layout cache where it can) and build its first scene."""
    def run(context: TaskContext) -> Built:
        with Store(db_path) as store:
            model = load_model(store, relayout=relayout, cancel=context.cancel.is_set)
        chosen = tuple(model.index[k] for k in selected if k in model.index)
        filters = replace(spec.filters, around=chosen if spec.filters.around else ())
        return _built(model, replace(spec, filters=filters, selection=chosen), generation, detail=False)
    return run


def details_job(db_path: Path, edge: tuple[str, str] | None, key: str | None) -> Job:
    """What the side panel shows: the relation `edge` if given, else the entity `key` (None if gone)."""
    def run(context: TaskContext) -> EntityDetails | RelationDetails | None:
        with Store(db_path) as store:
            return relation_details(store, *edge) if edge is not None else entity_details(store, key or "")
    return run


def read_job(db_path: Path, read: Callable[[Store], object]) -> Job:
    """Run `read` on a connection of its own (a reader thread) and return what it found."""
    def run(context: TaskContext) -> object:
        with Store(db_path) as store:
            return read(store)
    return run


def communities_job(db_path: Path, model: GraphModel) -> Job:
    """Find the communities of `model`; returns (model, the model coloured by community)."""
    def run(context: TaskContext) -> tuple[GraphModel, GraphModel]:
        with Store(db_path) as store:
            return model, model.with_communities(load_communities(store, model))
    return run


def scene_job(model: GraphModel, spec: ViewSpec, generation: int) -> Job:
    """The scene for the controls and selection in `spec` (no store needed)."""
    def run(context: TaskContext) -> Built:
        return _built(model, spec, generation, detail=True)
    return run


def render_job(scene: Scene, size: QSize, transform: QTransform, ratio: float, request: int,
               stale: Callable[[], bool]) -> Job:
    """The canvas's image of `scene` (see `render.Rendered`); None once `stale()` (the view moved on)."""
    size, transform = QSize(size), QTransform(transform)

    def run(context: TaskContext) -> Rendered | None:
        image = render_image(scene, size, transform, ratio, lambda: stale() or context.cancel.is_set())
        return None if image is None else Rendered(image, transform, scene.generation, request, scene)
    return run


def overview_job(scene: Scene, size: QSize, transform: QTransform, ratio: float) -> Job:
    """The minimap's image of the whole scene."""
    size, transform = QSize(size), QTransform(transform)

    def run(context: TaskContext) -> QImage:
        return render_image(scene, size, transform, ratio)
    return run


def edit_job(db_path: Path, work: Callable[[Store], None]) -> Job:
    """Apply or undo one graph edit; a refused edit (`EditError`, a ValueError) ends as its own sentence."""
    def run(context: TaskContext) -> None:
        with Store(db_path) as store:
            try:
                work(store)
            except ValueError as exc:  # the view was stale, a name is taken, ...: the user's sentence
                raise DocAtlasError(str(exc)) from exc
    return writes_workspace(run)


def suggest_job(db_path: Path) -> Job:
    """Look for likely duplicate entities and store them as merge suggestions."""
    def run(context: TaskContext) -> None:
        with Store(db_path) as store:
            suggest.suggest_merges(store)
    return writes_workspace(run)


def export_job(db_path: Path, fmt: str, path: Path) -> Job:
    """Write the whole graph to `path` (graphml, gexf, json, csv); returns the path written."""
    def run(context: TaskContext) -> Path:
        with Store(db_path) as store:
            return export(store, fmt, Path(path))
    return run


def pin_job(db_path: Path, key: str, x: float, y: float) -> Job:
    """Pin a dragged node where it was dropped (layout units)."""
    def run(context: TaskContext) -> None:
        with Store(db_path) as store:
            layout.pin(store, key, x, y)
    return writes_workspace(run)


def unpin_job(db_path: Path) -> Job:
    """Release every pinned node."""
    def run(context: TaskContext) -> None:
        with Store(db_path) as store:
            layout.unpin_all(store)
    return writes_workspace(run)


def local_graph_job(model: GraphModel, root: int, spec: ViewSpec) -> Job:
    """A node's neighbourhood to `spec.depth`, laid out by itself: (sub-model, scene, look)."""
    def run(context: TaskContext) -> tuple[GraphModel, Scene, query.Look]:
        sub, local_root = local_graph(model, root, spec.depth, cancel=context.cancel.is_set)
        look = query.compute_look(sub, replace(spec, filters=query.Filters(), selection=(local_root,), focus=False))
        return sub, build_scene(sub, look, 0), look
    return run


def shown_export_job(model: GraphModel, look: query.Look, fmt: str, path: Path) -> Job:
    """Write the shown part of the graph as GraphML or GEXF; returns the path written."""
    def run(context: TaskContext) -> Path:
        return write_shown(model, look, fmt, Path(path))
    return run


def table_csv_job(header: list[str], rows: list[list[object]], path: Path) -> Job:
    """Write a table's rows (as shown: filtered and sorted) to a CSV file; returns the path."""
    def run(context: TaskContext) -> Path:
        with open(path, "w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            writer.writerow(header)
            writer.writerows(rows)
        return Path(path)
    return run
