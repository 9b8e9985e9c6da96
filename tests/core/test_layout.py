"""The explorer's layout: a sound force layout, communities drawn as groups, seeded, cancellable, cached in
the store (a reopened graph is read, not laid out), extended for new nodes; communities."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

import networkx as nx
import numpy as np
import pytest
from docatlas.core.graph import layout
from docatlas.core.graph.communities import partition
from docatlas.core.graph.layout import (
    GraphArrays,
    LayoutCancelled,
    cached_layout,
    community_layout,
    force_layout,
    graph_arrays,
    read_graph,
)
from docatlas.core.retrieval.communities import detect, sync_communities
from test_edits_helpers import add_document, build_graph, open_store, star_corpus


def arrays(graph: nx.Graph) -> GraphArrays:
    keys = [str(n) for n in graph.nodes]
    return graph_arrays(keys, [(str(a), str(b)) for a, b in graph.edges])


def mean_edge_and_pair_distance(xy: np.ndarray, g: GraphArrays) -> tuple[float, float]:
    edge = float(np.linalg.norm(xy[g.sources] - xy[g.targets], axis=1).mean())
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, g.size, 2000), rng.integers(0, g.size, 2000)
    return edge, float(np.linalg.norm(xy[a] - xy[b], axis=1).mean())


@pytest.mark.parametrize("graph", [
    nx.grid_2d_graph(30, 30),  # 900 nodes: the particle-mesh path
    nx.balanced_tree(3, 4),  # 121 nodes: the exact path
    nx.connected_caveman_graph(12, 8),
], ids=["grid", "tree", "caves"])
def test_layout_puts_neighbours_close_and_nodes_apart(graph):
    g = arrays(nx.convert_node_labels_to_integers(graph))
    xy = force_layout(g)
    assert xy.shape == (g.size, 2) and np.isfinite(xy).all()
    edge, pair = mean_edge_and_pair_distance(xy, g)
    assert edge < pair / 4
    rounded = {(round(x, 6), round(y, 6)) for x, y in xy}
    assert len(rounded) == g.size  # no two nodes on one spot
    assert np.array_equal(force_layout(g), xy)  # seeded


def test_components_are_packed_without_overlap():
    graph = nx.disjoint_union_all([nx.path_graph(60), nx.cycle_graph(80), nx.star_graph(5), nx.empty_graph(30)])
    g = arrays(graph)
    xy = force_layout(g)
    label = layout.components(g.size, g.sources, g.targets)
    assert label.max() + 1 == 3 + 30 and np.bincount(label)[0] == 80
    boxes = [(xy[label == c].min(axis=0), xy[label == c].max(axis=0)) for c in range(3)]
    for i in range(3):
        for j in range(i + 1, 3):
            (lo1, hi1), (lo2, hi2) = boxes[i], boxes[j]
            assert (hi1 < lo2).any() or (hi2 < lo1).any()


def test_the_layout_is_cached_and_extended_around_new_nodes(tmp_path):
    with open_store(tmp_path) as store:
        build_graph(store, star_corpus(6, 12))
        graph = read_graph(store)
        first = cached_layout(store, graph)
        assert first.placed == graph.size and first.seconds > 0
        again = cached_layout(store, read_graph(store))
        assert again.placed == 0 and again.seconds == 0.0 and np.array_equal(again.xy, first.xy)

        add_document(store, "more.txt", [("New items.", [("Item 0-0", "concept", "x"), ("Fresh", "concept", "y")],
                                          [("Item 0-0", "Fresh", "near", "A new leaf.")])])
        from docatlas.core.graph.merge import rebuild
        rebuild(store)
        grown = read_graph(store)
        result = cached_layout(store, grown)
        assert result.placed == 1
        old = {k: xy for k, xy in zip(graph.keys, first.xy)}
        index = {k: i for i, k in enumerate(grown.keys)}
        assert all(np.allclose(result.xy[index[k]], old[k]) for k in graph.keys)
        fresh, parent = result.xy[index["fresh"]], result.xy[index["item 0-0"]]
        distances = np.linalg.norm(result.xy - fresh, axis=1)
        assert np.linalg.norm(fresh - parent) < np.percentile(distances, 10)


def test_a_new_separate_component_is_placed_beside_the_rest():
    base = nx.path_graph(40)
    g = arrays(nx.disjoint_union(base, nx.path_graph(5)))
    known = np.full((g.size, 2), np.nan)
    known[:40] = force_layout(arrays(base))
    xy = layout.extend_layout(g, known)
    assert np.array_equal(xy[:40], known[:40])
    assert xy[40:, 0].min() > known[:40, 0].max()


def test_communities_come_from_leiden_then_from_the_retrieval_tables(tmp_path):
    with open_store(tmp_path) as store:
        build_graph(store, star_corpus(4, 10))
        graph = read_graph(store)
        found = layout.communities(store, graph)
        assert len(found.titles) >= 2 and (found.labels >= 0).all()
        hub = graph.keys.index("hub 0")
        leaf = graph.keys.index("item 0-3")
        assert found.labels[hub] == found.labels[leaf]
        assert np.array_equal(layout.communities(store, graph).labels, found.labels)  # cached

        with store.transaction() as conn:
            cid = conn.execute("INSERT INTO communities(signature, size, title, updated_at) "
                               "VALUES ('s', 2, 'Hubs', 0)").lastrowid
            conn.executemany("INSERT INTO community_members(community_id, key) VALUES (?, ?)",
                             [(cid, "hub 0"), (cid, "hub 1")])
        mapped = layout.communities(store, graph)
        assert mapped.titles == ["Hubs"] and mapped.labels[hub] == 0 and mapped.labels[leaf] == -1


def woven_corpus(seed: int = 0) -> dict:
    """Four loose caves of six, and a path of five apart; a quarter of the relations stated four times
    (weight 4): whole-graph or unweighted Leiden would cut this graph otherwise."""
    rng = random.Random(seed)
    graph = nx.disjoint_union(nx.relaxed_caveman_graph(4, 6, 0.3, seed=seed), nx.path_graph(5))
    chunks = []
    for a, b in sorted(graph.edges):
        for _ in range(rng.choice([1, 1, 1, 4])):
            chunks.append((f"{a} and {b}.", [(f"Node {a}", "concept", f"Node {a}."), (f"Node {b}", "concept", "")],
                           [(f"Node {a}", f"Node {b}", "linked", f"{a} links {b}.")]))
    return {"woven.txt": chunks}


def test_colouring_and_retrieval_find_the_same_communities(tmp_path):
    def groups_of(found: layout.Communities, keys: list[str]) -> list[list[str]]:
        by_label: dict[int, list[str]] = {}
        for key, label in zip(keys, found.labels.tolist()):
            if label >= 0:
                by_label.setdefault(label, []).append(key)
        return sorted(sorted(g) for g in by_label.values())

    with open_store(tmp_path) as store:
        build_graph(store, woven_corpus())
        graph = read_graph(store)
        for_retrieval = sorted(detect(store))
        assert len(for_retrieval) >= 2
        assert store.query("SELECT COUNT(*) AS n FROM communities") == [{"n": 0}]  # colouring detects by itself
        assert groups_of(layout.communities(store, graph), graph.keys) == for_retrieval
        unweighted = GraphArrays(graph.keys, graph.sources, graph.targets, np.ones(len(graph.sources)))
        assert groups_of(layout.communities(store, unweighted, recompute=True), graph.keys) == for_retrieval

        sync_communities(store, 2)  # retrieval stores them: colouring reads the same partition back
        assert store.query("SELECT COUNT(*) AS n FROM communities") == [{"n": len(for_retrieval)}]
        assert groups_of(layout.communities(store, graph), graph.keys) == for_retrieval


def planted(groups: int = 12, size: int = 40, seed: int = 3) -> GraphArrays:
    """`groups` dense groups of `size` with a few relations across: the communities are plain."""
    return arrays(nx.convert_node_labels_to_integers(nx.planted_partition_graph(groups, size, 0.25, 0.004,
                                                                                seed=seed)))


def found_labels(g: GraphArrays) -> np.ndarray:
    labels = np.full(g.size, -1)
    edges = [(g.keys[a], g.keys[b], 1.0) for a, b in zip(g.sources, g.targets)]
    index = {k: i for i, k in enumerate(g.keys)}
    for number, members in enumerate(partition(edges)):
        labels[[index[k] for k in members]] = number
    return labels


def test_the_community_layout_draws_each_community_as_a_group():
    g = planted()
    labels = found_labels(g)
    assert labels.max() + 1 >= 10 and (labels >= 0).all()
    xy = community_layout(g, labels)
    assert xy.shape == (g.size, 2) and np.isfinite(xy).all()
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, g.size, (2, 5000))
    same = labels[a] == labels[b]
    apart = np.linalg.norm(xy[a] - xy[b], axis=1)
    assert apart[same].mean() < 0.25 * apart[~same].mean()
    centres = np.array([xy[labels == c].mean(axis=0) for c in range(labels.max() + 1)])
    nearest_centre = np.linalg.norm(xy[:, None, :] - centres[None, :, :], axis=2).argmin(axis=1)
    assert (nearest_centre == labels).mean() > 0.95  # a node sits in its own community's region


def test_communities_are_connected_and_the_layout_is_the_same_every_time():
    g = planted(seed=5)
    labels = found_labels(g)
    assert np.array_equal(found_labels(g), labels)
    graph = nx.Graph(list(zip(g.sources.tolist(), g.targets.tolist())))
    for c in range(labels.max() + 1):
        assert nx.is_connected(graph.subgraph(np.nonzero(labels == c)[0].tolist()))  # Leiden's guarantee
    first = community_layout(g, labels)
    assert np.array_equal(community_layout(g, labels), first)
    assert not np.array_equal(community_layout(g, labels, seed=8), first)


def test_a_cancel_stops_the_layout_at_the_next_question():
    g = arrays(nx.convert_node_labels_to_integers(nx.random_regular_graph(3, 2000, seed=1)))
    asked = []
    force_layout(g, cancel=lambda: asked.append(1) and False)
    assert len(asked) > 3  # one big component: still asked several times on the way
    for stop_at in (1, 3):
        asked.clear()
        with pytest.raises(LayoutCancelled):
            force_layout(g, cancel=lambda stop_at=stop_at: (asked.append(1) or len(asked)) >= stop_at)
        assert len(asked) == stop_at
    labels = found_labels(planted())
    asked.clear()
    with pytest.raises(LayoutCancelled):
        community_layout(planted(), labels, cancel=lambda: (asked.append(1) or len(asked)) >= 5)
    assert len(asked) == 5


def test_reopening_reads_the_stored_positions_and_lays_nothing_out(tmp_path):
    with open_store(tmp_path) as store:
        build_graph(store, star_corpus(8, 20))
        graph = read_graph(store)
        first = cached_layout(store, graph)
        assert first.placed == graph.size

        def no_layout() -> bool:
            raise AssertionError("a reopened graph was laid out again")

        again = cached_layout(store, read_graph(store), cancel=no_layout)
        assert again.placed == 0 and np.array_equal(again.xy, first.xy) and again.unit == first.unit
        with pytest.raises(LayoutCancelled):
            cached_layout(store, graph, relayout=True, cancel=lambda: True)  # a re-layout does ask


def test_layouts_on_several_threads_at_once_get_their_own_seeded_results():
    g = planted(groups=20, size=30, seed=9)
    edges = [(g.keys[a], g.keys[b], 1.0) for a, b in zip(g.sources, g.targets)]
    alone = partition(edges), force_layout(g)
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda _: (partition(edges), force_layout(g)), range(8)))
    assert all(parts == alone[0] and np.array_equal(xy, alone[1]) for parts, xy in together)


@pytest.mark.parametrize("groups", [2, 3])
def test_communities_with_nothing_between_them_stay_near_each_other(groups):
    """Two (or three) unlinked groups: their centres once lay on a line with no area, and spacing 1 made
    them millions of units apart, so the explorer showed one node or an empty view."""
    graph = nx.disjoint_union_all([nx.cycle_graph(8) for _ in range(groups)])
    g = arrays(graph)
    labels = np.repeat(np.arange(groups), 8)
    xy = community_layout(g, labels)
    extent = xy.max(axis=0) - xy.min(axis=0)
    edge, _ = mean_edge_and_pair_distance(xy, g)
    assert np.isfinite(xy).all() and extent.max() < 40 * edge  # a few groups wide, not millions
