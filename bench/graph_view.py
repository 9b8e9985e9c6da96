"""Graph explorer benchmark: layout, first paint and frame times on a synthetic graph, offscreen.

Builds a knowledge-graph-like graph (communities, a few hubs, long-tailed degrees) of
`--nodes N` entities and about 3N relations by writing per-chunk records into a real store
and merging them, then measures:

- layout_s: laying the graph out with an empty cache (left out when `--store` brought a laid-out
  graph; load_s: reading it too);
- reopen_s: loading it again from a settled view, layout from the cache;
- first_paint_s: from the end of the layout to the first frame showing the rendered graph
  (scene building, the background render, the frame);
- frame_p50_ms / frame_p95_ms / frame_max_ms: frames while panning and zooming, each timed from
  its input event (a real wheel or mouse event sent to the canvas, 60 a second) to the paint
  finished; between gestures the user rests and fresh images are rendered in the background
  (see `frames`);
- frame_cpu_p50_ms / frame_cpu_p95_ms: the GUI thread's own processor time in those frames
  (a loaded machine stretches the frames, not this);
- renders / renders_abandoned: background renders asked for during that pan-and-zoom sequence
  (its rests included), and how many of them were stopped part-way because the view moved on;
- render_ms: one background render of the fitted view as the canvas asks for it (the window and
  its margin: what a settled view costs off the GUI thread); render_detail_ms: the same at the
  zoom where a big graph is first drawn node by node (left out when it never collapses);
- communities_s: Leiden colouring ready, after the layout (left out when the community-first layout
  already found them);
- collapsed_frames: how many of those frames showed the communities (a far view of a big graph);
- peak_rss_mb: the explorer process's peak resident memory (the synthetic store is built in a
  child process, so this is opening, laying out, drawing, panning and zooming only).

    python bench/graph_view.py [--nodes 10000] [--frames 300]
    python bench/graph_view.py --screenshot docs/screenshots/graph.png

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "desktop"), str(ROOT / "tests")]

import numpy as np
from docatlas.core.base.keys import entity_key
from docatlas.core.base.records import EntityRecord, RelationRecord
from docatlas.core.graph.merge import rebuild
from docatlas.core.storage.database import NewChunk, Store
from docatlas.gui.graph import GraphExplorer
from docatlas.gui.graph.canvas import MARGIN
from docatlas.gui.graph.render import render_image
from docatlas.gui.jobs import graph as jobs_module
from PySide6.QtCore import QEvent, QEventLoop, QPoint, QPointF, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QMouseEvent, QTransform, QWheelEvent
from PySide6.QtWidgets import QApplication

TYPES = ["person", "organization", "location", "event", "concept", "product", "document", "date"]
PER_CHUNK = 30  # relations per chunk


def synthetic_edges(nodes: int, seed: int = 1) -> np.ndarray:
    """About 3N distinct undirected edges: communities of ~150, Zipf-like popularity, 15% across."""
    rng = np.random.default_rng(seed)
    community = rng.integers(0, max(1, nodes // 150), nodes)
    popularity = 1.0 / np.arange(1, nodes + 1) ** 0.8
    popularity = popularity[rng.permutation(nodes)]
    members: dict[int, np.ndarray] = {c: np.nonzero(community == c)[0] for c in np.unique(community)}
    weights = {c: popularity[m] / popularity[m].sum() for c, m in members.items()}
    edges: set[tuple[int, int]] = set()
    while len(edges) < 3 * nodes:
        batch = 3 * nodes - len(edges)
        a = rng.choice(nodes, batch, p=popularity / popularity.sum())
        for i in a.tolist():
            if rng.random() < 0.15:
                j = int(rng.integers(0, nodes))
            else:
                group = members[community[i]]
                j = int(rng.choice(group, p=weights[community[i]]))
            if i != j:
                edges.add((min(i, j), max(i, j)))
    return np.array(sorted(edges))


def build_store(path: Path, nodes: int) -> Store:
    """Write the synthetic graph as per-chunk records (one relation list per chunk) and merge it."""
    edges = synthetic_edges(nodes)
    names = [f"Entity {i:05d}" for i in range(nodes)]
    store = Store(path)
    chunks = [edges[i:i + PER_CHUNK] for i in range(0, len(edges), PER_CHUNK)]
    doc_size = 100
    described: set[int] = set()
    for d in range(0, len(chunks), doc_size):
        part = chunks[d:d + doc_size]
        doc_id, _ = store.put_document(path=f"/bench/doc{d // doc_size:04d}.txt", title=f"doc{d // doc_size:04d}",
                                       kind="txt", content_hash=str(d), size=1,
                                       chunks=[NewChunk(f"Chunk {d + k}.", 10, None, None) for k in range(len(part))])
        ids = [r["id"] for r in store.query("SELECT id FROM chunks WHERE document_id = ? ORDER BY idx", (doc_id,))]
        for chunk_id, pairs in zip(ids, part):
            ends = [int(x) for x in np.unique(pairs)]
            fresh = [i for i in ends if i not in described]
            described.update(fresh)
            entities = [EntityRecord(names[i], TYPES[i % len(TYPES)], f"Description of entity {i}.") for i in fresh]
            relations = [RelationRecord(names[a], names[b], "related", "They are related.", 1.0) for a, b in pairs]
            store.finish_chunk(chunk_id, entities, relations, status="done", profile="bench", model="bench", calls=1,
                               keys=[entity_key(e.name) for e in entities],
                               relation_keys=[(entity_key(r.source), entity_key(r.target)) for r in relations])
    rebuild(store)
    return store


FIRST = ["Maria", "Jonas", "Priya", "Tomas", "Aiko", "Lena", "Omar", "Sofia", "Kwame", "Elif", "Mateo", "Ingrid",
         "Ravi", "Chloe", "Yusuf", "Hana", "Diego", "Freya", "Nikolai", "Amara"]
LAST = ["Lopez", "Weber", "Nair", "Berg", "Tanaka", "Novak", "Haddad", "Rossi", "Mensah", "Kaya", "Silva", "Larsen",
        "Iyer", "Martin", "Demir", "Sato", "Ortega", "Holm", "Petrov", "Okafor"]
ORGS = ["Harbor Analytics", "Northwind Labs", "Bluefin Energy", "Cedar Health", "Aster Robotics", "Polaris Bank",
        "Juniper Foods", "Granite Mobility", "Lumen Pharma", "Orbit Telecom", "Willow Press", "Summit Materials"]
PLACES = ["Lisbon", "Hamburg", "Pune", "Oslo", "Osaka", "Prague", "Beirut", "Milan", "Accra", "Izmir", "Porto",
          "Bergen", "Chennai", "Lyon", "Ankara", "Kyoto", "Seville", "Aarhus", "Tallinn", "Lagos"]
TOPICS = ["sensor fusion", "battery recycling", "clinical trials", "warehouse robots", "credit risk", "cold chain",
          "ride sharing", "mRNA vaccines", "5G rollout", "open access", "green cement", "data privacy",
          "supply chain", "carbon pricing", "edge computing", "wind farms", "gene therapy", "fraud detection"]


def realistic_corpus(seed: int = 4) -> dict[str, list]:
    """A few hundred named entities in a dozen clusters (an organisation with its people, places,
    topics and events), some people and partnerships across clusters: a screenshot that reads."""
    rng = np.random.default_rng(seed)
    chunks = []
    people_all: list[str] = []
    pool = [f"{first} {last}" for first in FIRST for last in LAST]
    pool = [pool[i] for i in rng.permutation(len(pool))]
    for c, org in enumerate(ORGS):
        size = int(rng.integers(16, 26))
        people, pool = pool[:size], pool[size:]
        places = list(rng.choice(PLACES, 2, replace=False))
        topics = list(rng.choice(TOPICS, 3, replace=False))
        products = [f"{org.split()[0]} {kind}" for kind in ("One", "Cloud", "Kit")[: int(rng.integers(1, 4))]]
        event = f"{org.split()[0]} Summit {2019 + c % 5}"
        ents = [(org, "organization", f"{org} works on {', '.join(topics)}.")]
        ents += [(p, "person", f"Works at {org}.") for p in people]
        ents += [(x, "location", "A city.") for x in places] + [(t, "concept", "A field.") for t in topics]
        ents += [(x, "product", f"Made by {org}.") for x in products] + [(event, "event", f"Held by {org}.")]
        rels = [(p, org, "works at", f"{p} works at {org}.") for p in people]
        rels += [(org, x, "based in", "Offices.") for x in places] + [(org, t, "works on", "Research.") for t in topics]
        rels += [(org, x, "makes", "Product.") for x in products] + [(org, event, "hosts", "Yearly.")]
        for _ in range(len(people)):
            a, b = rng.choice(len(people), 2, replace=False)
            rels.append((people[a], people[b], "colleague", "They worked together."))
        for p in rng.choice(people, 3, replace=False):
            rels.append((str(p), str(rng.choice(topics)), "expert in", "Expertise."))
        rels.append((people[0], event, "spoke at", "A keynote."))
        chunks.append((f"About {org}.", ents, rels))
        people_all += people
    cross = []
    for i in range(len(ORGS)):
        j = (i + int(rng.integers(1, 4))) % len(ORGS)
        cross.append((ORGS[i], ORGS[j], "partners with", "A partnership."))
    for _ in range(30):
        a, b = rng.choice(len(people_all), 2, replace=False)
        cross.append((people_all[a], people_all[b], "advised", "Advice across companies."))
    chunks.append(("Partnerships.", [], cross))
    return {"companies.txt": chunks}


def screenshot(app: QApplication, out: Path) -> None:
    """The explorer on the realistic corpus, one company selected, saved to `out`."""
    from core.test_edits_helpers import build_graph, open_store

    store = build_graph(open_store(Path(tempfile.mkdtemp(prefix="docatlas-shot-"))), realistic_corpus())
    explorer = GraphExplorer(store)
    explorer.resize(1500, 900)
    explorer.show()
    loaded: list[bool] = []
    explorer.loaded.connect(lambda: loaded.append(True))
    explorer.reload()
    wait(app, lambda: loaded, timeout=1800.0)  # at 100,000 nodes: Leiden and the community-first layout
    wait(app, lambda: not (explorer.model.community < 0).all())
    explorer.canvas.fit()
    explorer.canvas.zoom_by(1.3)
    explorer.search("Harbor Analytics")
    wait(app, lambda: explorer.canvas.settled and explorer.minimap._image is not None)
    idle(app, 0.3)
    out.parent.mkdir(parents=True, exist_ok=True)
    explorer.grab().save(str(out))
    explorer.shutdown()
    print(json.dumps({"screenshot": str(out), "nodes": explorer.model.size, "edges": len(explorer.model.sources)}))


def wait(app: QApplication, condition, timeout: float = 120.0) -> None:
    """Process events until `condition()` holds, sleeping in the event loop between looks as a window
    does (a loop spinning on processEvents would hold the GIL the worker threads need)."""
    end = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > end:
            raise TimeoutError("the explorer did not get there in time")
        idle(app, 0.002)


def idle(app: QApplication, seconds: float) -> None:
    """Sleep in the event loop for a while, as a window does between inputs (renders may land)."""
    if seconds > 0:
        loop = QEventLoop()
        timer = QTimer(singleShot=True, timerType=Qt.TimerType.PreciseTimer, interval=max(1, round(seconds * 1000)))
        timer.timeout.connect(loop.quit)
        timer.start()
        loop.exec()
    app.processEvents()


INPUT_HZ = 60  # input events per second during a gesture (a mouse or a touchpad)
# One round of gestures: (kind, events); zooming in crosses from the communities to the nodes of a big graph.
GESTURES = [("zoom_in", 8), ("drag", 20), ("zoom_in", 6), ("drag", 20), ("zoom_out", 6), ("drag", 20),
            ("zoom_out", 8), ("drag", 20)]


def _mouse(kind: QEvent.Type, pos: QPointF, buttons: Qt.MouseButton) -> QMouseEvent:
    button = Qt.MouseButton.NoButton if kind == QEvent.Type.MouseMove else Qt.MouseButton.LeftButton
    return QMouseEvent(kind, pos, pos, button, buttons, Qt.KeyboardModifier.NoModifier)


def _wheel(pos: QPointF, steps: int) -> QWheelEvent:
    return QWheelEvent(pos, pos, QPoint(), QPoint(0, 120 * steps), Qt.MouseButton.NoButton,
                       Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)


def _background_point(canvas, rng: np.random.Generator) -> QPointF:
    """A point of the canvas with no node under it (a press there pans instead of moving a node)."""
    for _ in range(50):
        pos = QPointF(*rng.uniform([150, 150], [canvas.width() - 150, canvas.height() - 150]))
        if canvas.node_at(pos) is None:
            return pos
    return pos


def frames(app: QApplication, explorer: GraphExplorer, count: int, collapsed: list[bool],
           cpu: list[float]) -> list[float]:
    """Pan and zoom like a user, through real input events; a frame's time runs from its input event
    to the canvas painted (and every other widget the event dirtied).

    Gestures of wheel steps (1.25x each, at the pointer) and mouse drags on the background
    arrive at INPUT_HZ; between events the GUI thread sleeps in the event loop as a window
    does. Between gestures the user rests 0.1-1 s: the view settles and a fresh image is
    rendered in the background, as for a user; a render still under way when the next
    gesture starts is there too. An event due while the previous frame still paints is
    taken when that frame ends, and timed from then (the overrun is in the previous frame).
    `cpu` gets the GUI thread's own processor time for each frame (what a loaded machine
    stretches, but the code costs)."""
    canvas = explorer.canvas
    rng = np.random.default_rng(2)
    times: list[float] = []
    interval = 1.0 / INPUT_HZ
    ended = time.perf_counter()
    while len(times) < count:
        for kind, events in GESTURES:
            if len(times) >= count:
                break
            idle(app, float(rng.uniform(0.1, 1.0)))  # the user rests: the view settles, an image is rendered
            pos = _background_point(canvas, rng)
            due = time.perf_counter()
            for k in range(events):
                idle(app, due - time.perf_counter())
                started = max(due, ended)
                cpu_started = time.thread_time()
                if kind == "drag":
                    if k == 0:
                        press = _mouse(QEvent.Type.MouseButtonPress, pos, Qt.MouseButton.LeftButton)
                        QApplication.sendEvent(canvas, press)
                    step = QPointF(*rng.uniform(-25, 25, 2))
                    inside = QRectF(20, 20, canvas.width() - 40, canvas.height() - 40)
                    pos = pos + step if inside.contains(pos + step) else pos - step
                    QApplication.sendEvent(canvas, _mouse(QEvent.Type.MouseMove, pos, Qt.MouseButton.LeftButton))
                else:
                    QApplication.sendEvent(canvas, _wheel(pos, 1 if kind == "zoom_in" else -1))
                canvas.repaint()
                app.processEvents()
                ended = time.perf_counter()
                times.append((ended - started) * 1000)
                cpu.append((time.thread_time() - cpu_started) * 1000)
                collapsed.append(canvas.collapsed)
                due += interval
            if kind == "drag":
                QApplication.sendEvent(canvas, _mouse(QEvent.Type.MouseButtonRelease, pos, Qt.MouseButton.NoButton))
    return times


def render_as_canvas(canvas) -> float:
    """Milliseconds to render the active scene as the canvas asks for it (its size and margin)."""
    mx, my = round(canvas.width() * MARGIN), round(canvas.height() * MARGIN)
    transform = canvas.view_transform() * QTransform.fromTranslate(mx, my)
    started = time.perf_counter()
    render_image(canvas.active_scene, QSize(canvas.width() + 2 * mx, canvas.height() + 2 * my), transform)
    return (time.perf_counter() - started) * 1000


def main() -> None:
    """Build, lay out, open, pan and zoom; print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--screenshot", type=Path, help="instead: save a screenshot of a few hundred nodes here")
    parser.add_argument("--build", type=Path, help=argparse.SUPPRESS)  # the child process that writes the store
    parser.add_argument("--store", type=Path, help="use this store written by an earlier --build (not laid out yet)")
    args = parser.parse_args()
    if args.build:
        build_store(args.build, args.nodes).close()
        return
    app = QApplication.instance() or QApplication([])
    if args.screenshot:
        screenshot(app, args.screenshot)
        return
    path = args.store
    if path is None:
        path = Path(tempfile.mkdtemp(prefix="docatlas-bench-")) / "bench.sqlite"
        subprocess.run([sys.executable, __file__, "--nodes", str(args.nodes), "--build", str(path)], check=True)
    store = Store(path)
    counts = store.counts()

    marks: dict[str, float] = {}
    real_load = jobs_module.load_model

    def timed_load(*a, **kw):
        started = time.perf_counter()
        model = real_load(*a, **kw)
        if "layout_done" not in marks:
            marks["load_s"] = time.perf_counter() - started
            marks["layout_s"] = model.layout_seconds
            marks["layout_done"] = time.perf_counter()
        return model

    jobs_module.load_model = timed_load  # the load job calls it: time the layout inside it
    explorer = GraphExplorer(store)
    explorer.resize(1600, 1000)
    explorer.show()
    loaded: list[bool] = []
    explorer.loaded.connect(lambda: loaded.append(True))
    explorer.reload()
    wait(app, lambda: loaded, timeout=1800.0)  # at 100,000 nodes: Leiden and the community-first layout
    wait(app, lambda: explorer.canvas._image is not None)
    explorer.canvas.repaint()
    first_paint = time.perf_counter() - marks["layout_done"]
    communities: list[float] = []
    explorer.communitiesReady.connect(lambda: communities.append(time.perf_counter() - marks["layout_done"]))
    wait(app, lambda: communities or not explorer._communities_asked)  # Leiden, on a worker thread
    wait(app, lambda: explorer.canvas.scene is not None)  # a big graph's full scene follows its overview
    wait(app, lambda: explorer.canvas.settled)

    collapsed: list[bool] = []
    renderer = explorer.canvas.renderer
    requests, abandoned = renderer.requests, renderer.abandoned
    cpu: list[float] = []
    times = frames(app, explorer, args.frames, collapsed, cpu)
    requests, abandoned = renderer.requests - requests, renderer.abandoned - abandoned
    canvas = explorer.canvas
    canvas.fit()
    render_ms = render_as_canvas(canvas)
    render_detail_ms = None
    if canvas.collapsed:
        canvas.set_view(canvas.node_bounds().center(), canvas.detail_scale() * 1.05)
        render_detail_ms = render_as_canvas(canvas)

    canvas.fit()
    wait(app, lambda: canvas.settled)  # the render at the detail zoom ends first: a reopen starts from a settled view
    loaded.clear()
    explorer.reload()
    started = time.perf_counter()
    wait(app, lambda: loaded, timeout=1800.0)  # at 100,000 nodes: Leiden and the community-first layout
    reopen = time.perf_counter() - started
    explorer.shutdown()
    figures = {
        "nodes": counts["entities"], "edges": counts["relations"],
        "layout_s": round(marks["layout_s"], 3) if marks["layout_s"] else None, "load_s": round(marks["load_s"], 3),
        "reopen_s": round(reopen, 3), "first_paint_s": round(first_paint, 3),
        "communities_s": round(communities[0], 3) if communities else None,
        "frame_p50_ms": round(statistics.median(times), 2),
        "frame_p95_ms": round(float(np.percentile(times, 95)), 2), "frame_max_ms": round(max(times), 2),
        "frame_cpu_p50_ms": round(statistics.median(cpu), 2),
        "frame_cpu_p95_ms": round(float(np.percentile(cpu, 95)), 2),
        "render_ms": round(render_ms, 1),
        "render_detail_ms": round(render_detail_ms, 1) if render_detail_ms is not None else None,
        "frames": len(times), "collapsed_frames": sum(collapsed),
        "renders": requests, "renders_abandoned": abandoned,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "window": [canvas.width(), canvas.height()],
    }
    print(json.dumps({name: value for name, value in figures.items() if value is not None}))  # unmeasured: left out


if __name__ == "__main__":
    main()
