"""Graph explorer benchmark: layout, first paint and frame times on a synthetic graph, offscreen.

Builds a knowledge-graph-like graph (communities, a few hubs, long-tailed degrees) of
`--nodes N` entities and about 3N relations by writing per-chunk records into a real store
and merging them, then measures:

- layout_s: laying the graph out with an empty cache (load_s: reading it too);
- reopen_s: loading it again, layout from the cache;
- first_paint_s: from the end of the layout to the first frame showing the rendered graph
  (scene building, the background render, the frame);
- frame_p50_ms / frame_p95_ms / frame_max_ms: frames while panning and zooming (wheel-sized
  steps, with short pauses during which fresh images are rendered in the background);
- render_ms: one full background render of the window (what a settled view costs off the GUI thread);
- communities_s: Louvain colouring ready, after the layout (null when the community-first layout
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
from docatlas.gui.graph.render import render_image
from docatlas.gui.jobs import graph as jobs_module
from PySide6.QtCore import QPointF, QSize
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
    wait(app, lambda: loaded, timeout=1800.0)  # at 100,000 nodes: Louvain and the community-first layout
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
    """Process events until `condition()` holds."""
    end = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > end:
            raise TimeoutError("the explorer did not get there in time")
        app.processEvents()


def idle(app: QApplication, seconds: float) -> None:
    """Process events for a while (a pause in the interaction: renders may land)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        app.processEvents()


def frames(app: QApplication, explorer: GraphExplorer, count: int, collapsed: list[bool]) -> list[float]:
    """Pan and zoom like a user: wheel-sized zoom steps at the pointer and drags, with pauses."""
    canvas = explorer.canvas
    rng = np.random.default_rng(2)
    times = []
    for k in range(count):
        if k % 30 == 29:
            idle(app, 0.15)  # the user stops for a moment: a fresh image is rendered
        phase = (k // 60) % 2
        if k % 3 == 0:
            anchor = QPointF(*rng.uniform([100, 100], [canvas.width() - 100, canvas.height() - 100]))
            canvas.zoom_by(1.15 if phase == 0 else 1 / 1.15, anchor)
        else:
            canvas.pan_by(*rng.uniform(-25, 25, 2))
        started = time.perf_counter()
        canvas.repaint()
        app.processEvents()
        times.append((time.perf_counter() - started) * 1000)
        collapsed.append(canvas.collapsed)
    return times


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
    wait(app, lambda: loaded, timeout=1800.0)  # at 100,000 nodes: Louvain and the community-first layout
    wait(app, lambda: explorer.canvas._image is not None)
    explorer.canvas.repaint()
    first_paint = time.perf_counter() - marks["layout_done"]
    communities: list[float] = []
    explorer.communitiesReady.connect(lambda: communities.append(time.perf_counter() - marks["layout_done"]))
    wait(app, lambda: communities or not explorer._communities_asked)  # Louvain, on a worker thread
    wait(app, lambda: explorer.canvas.scene is not None)  # a big graph's full scene follows its overview
    wait(app, lambda: explorer.canvas.settled)

    collapsed: list[bool] = []
    times = frames(app, explorer, args.frames, collapsed)
    canvas = explorer.canvas
    canvas.fit()
    started = time.perf_counter()
    render_image(canvas.active_scene, QSize(canvas.width(), canvas.height()), canvas.view_transform())
    render_ms = (time.perf_counter() - started) * 1000

    loaded.clear()
    explorer.reload()
    started = time.perf_counter()
    wait(app, lambda: loaded, timeout=1800.0)  # at 100,000 nodes: Louvain and the community-first layout
    reopen = time.perf_counter() - started
    explorer.shutdown()
    print(json.dumps({
        "nodes": counts["entities"], "edges": counts["relations"],
        "layout_s": round(marks["layout_s"], 3), "load_s": round(marks["load_s"], 3),
        "reopen_s": round(reopen, 3), "first_paint_s": round(first_paint, 3),
        "communities_s": round(communities[0], 3) if communities else None,
        "frame_p50_ms": round(statistics.median(times), 2),
        "frame_p95_ms": round(float(np.percentile(times, 95)), 2), "frame_max_ms": round(max(times), 2),
        "render_ms": round(render_ms, 1), "frames": len(times), "collapsed_frames": sum(collapsed),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "window": [canvas.width(), canvas.height()],
    }))


if __name__ == "__main__":
    main()
