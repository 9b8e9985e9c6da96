"""The on-disk vector index: the same ranking as an exact scan, kept in step incrementally,
and never a wrong answer when it lags SQL, is damaged, or the vectors change size."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from docatlas.core.retrieval import vector_index, vectors
from docatlas.core.retrieval.embed import embed_pending
from docatlas.core.storage import vectors as stored
from docatlas.core.storage.database import SCHEMA_VERSION, Store
from docatlas.core.storage.migrations import m013_vector_keys
from helpers import workspace_before
from test_retrieval_helpers import build_graph, client, open_store, settings_for

MODEL = "test-embed"


def clustered(rng: np.random.Generator, n: int, dim: int, topics: int = 40) -> np.ndarray:
    """Unit vectors around a few topics, as embeddings of real text are."""
    centres = rng.standard_normal((topics, dim))
    rows = 0.8 * centres[rng.integers(0, topics, n)] + 0.6 * rng.standard_normal((n, dim))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def put(store: Store, refs: list[str], rows: np.ndarray, kind: str = "entity", model: str = MODEL) -> None:
    """Store vectors the way embedding does (one transaction, the real write path)."""
    stored.write_vectors(store, model, [stored.NewVector(0, kind, ref, "h", rows.shape[1], vectors.pack(row))
                                        for ref, row in zip(refs, rows)])


def drop(store: Store, refs: list[str], kind: str = "entity") -> None:
    stored.drop_queued(store, [], [(kind, ref) for ref in refs])


def brute_force(truth: dict[str, np.ndarray], query: np.ndarray, limit: int) -> list[str]:
    """The exact ranking, computed here from the vectors the test made."""
    refs = sorted(truth)
    scores = np.array([float(np.dot(truth[r], query)) for r in refs])
    return [refs[i] for i in np.argsort(-scores, kind="stable")[:limit]]


def queries(rng: np.random.Generator, truth: dict[str, np.ndarray], count: int) -> list[np.ndarray]:
    """Questions near stored vectors (cosine about 0.7), as real ones are."""
    out = []
    for ref in rng.choice(sorted(truth), count, replace=False):
        noise = rng.standard_normal(truth[ref].shape[0])
        mixed = truth[ref] + noise / np.linalg.norm(noise)
        out.append(vectors.unit(mixed))
    return out


def assert_exact(store: Store, truth: dict[str, np.ndarray], rng: np.random.Generator, limit: int = 10) -> None:
    """The ranking is the exact one; through the groups (only the PROBES nearest are read) at
    least 95% of the exact top results are found."""
    approximate = vector_index.EXACT_BELOW == 0
    found_right = wanted = 0
    for query in queries(rng, truth, 12):
        found = vectors.search(store, "entity", MODEL, query, limit, -1.0)
        exact = brute_force(truth, query, limit)
        if approximate:
            found_right += len({r for r, _ in found} & set(exact))
            wanted += len(exact)
        else:
            assert [r for r, _ in found] == exact
        # whatever is found is scored exactly, so it is ranked right among itself
        assert np.allclose([s for _, s in found], [np.dot(truth[r], query) for r, _ in found], atol=1e-5)
    if approximate:
        assert found_right >= 0.95 * wanted


@pytest.mark.parametrize("exhaustive_below", [vector_index.EXACT_BELOW, 0])  # one group read whole, then many
def test_search_ranks_like_an_exact_scan_and_the_index_takes_in_only_what_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exhaustive_below: int) -> None:
    monkeypatch.setattr(vector_index, "EXACT_BELOW", exhaustive_below)
    rng = np.random.default_rng(7)
    rows = clustered(rng, 2400, 32)
    truth = {f"e{i}": row for i, row in enumerate(rows)}
    with Store(tmp_path / "w.sqlite") as store:
        put(store, list(truth)[:2000], rows[:2000])
        change = vectors.refresh_index(store, "entity", MODEL)
        assert (change.added, change.removed, change.rebuilt, change.written) == (2000, 0, True, True)
        first = {k: truth[k] for k in list(truth)[:2000]}
        assert_exact(store, first, rng)

        put(store, list(truth)[2000:], rows[2000:])  # a new document's entities
        change = vectors.refresh_index(store, "entity", MODEL)
        assert (change.added, change.removed, change.rebuilt) == (400, 0, False)  # only the new ones written
        drop(store, ["e1", "e5", "e2100"])
        change = vectors.refresh_index(store, "entity", MODEL, force=True)
        assert (change.added, change.removed, change.rebuilt) == (0, 3, False)
        assert vectors.refresh_index(store, "entity", MODEL).written is False  # in step: nothing to do
        for gone in ("e1", "e5", "e2100"):
            del truth[gone]
        assert_exact(store, truth, rng)
        view = vector_index._view(vector_index.index_path(store, "entity", MODEL, 32))
        assert view is not None and view.size == len(truth)  # searched from the file, which holds them all


def test_a_lagging_index_still_gives_the_exact_answer(tmp_path: Path) -> None:
    """A crash between the SQLite commit and the index write: vectors added, replaced and
    removed that the index never saw are found, or never returned."""
    rng = np.random.default_rng(11)
    rows = clustered(rng, 1500, 24)
    truth = {f"e{i}": row for i, row in enumerate(rows)}
    with Store(tmp_path / "w.sqlite") as store:
        put(store, list(truth)[:1200], rows[:1200])
        vectors.refresh_index(store, "entity", MODEL)
        put(store, list(truth)[1200:], rows[1200:])  # never refreshed
        replaced = clustered(rng, 50, 24)
        put(store, [f"e{i}" for i in range(50)], replaced)  # same refs, new vectors: new keys
        truth.update({f"e{i}": replaced[i] for i in range(50)})
        drop(store, [f"e{i}" for i in range(100, 160)])
        for i in range(100, 160):
            del truth[f"e{i}"]
        assert_exact(store, truth, rng)
        for query in queries(rng, {f"e{i}": rows[i] for i in range(50)}, 10):  # the old vectors are gone for good
            found = dict(vectors.search(store, "entity", MODEL, query, 5, -1.0))
            assert all(abs(score - float(np.dot(truth[ref], query))) < 1e-5 for ref, score in found.items())


def test_a_damaged_index_file_is_not_trusted_and_is_built_again(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    rows = clustered(rng, 600, 16)
    truth = {f"e{i}": row for i, row in enumerate(rows)}
    with Store(tmp_path / "w.sqlite") as store:
        put(store, list(truth), rows)
        vectors.refresh_index(store, "entity", MODEL)
        path = vector_index.index_path(store, "entity", MODEL, 16)
        path.write_bytes(b"not an index" * 100)
        assert_exact(store, truth, rng)  # an exact scan of SQL instead
        assert vectors.refresh_index(store, "entity", MODEL).rebuilt
        assert_exact(store, truth, rng)


def test_vectors_of_a_new_size_get_a_new_index(tmp_path: Path) -> None:
    """The same model name now gives 48 numbers, not 16: the old file goes, a new one is built."""
    rng = np.random.default_rng(9)
    with Store(tmp_path / "w.sqlite") as store:
        put(store, [f"e{i}" for i in range(300)], clustered(rng, 300, 16))
        vectors.refresh_index(store, "entity", MODEL)
        old = vector_index.index_path(store, "entity", MODEL, 16)
        assert old.is_file()
        rows = clustered(rng, 300, 48)
        put(store, [f"e{i}" for i in range(300)], rows)
        truth = {f"e{i}": row for i, row in enumerate(rows)}
        assert vectors.search(store, "entity", MODEL, vectors.unit(rng.standard_normal(16)), 5, -1.0) == []
        assert_exact(store, truth, rng)
        change = vectors.refresh_index(store, "entity", MODEL)
        assert change.rebuilt and change.added == 300
        assert not old.exists() and vector_index.index_path(store, "entity", MODEL, 48).is_file()
        assert_exact(store, truth, rng)


def test_a_new_embedding_model_gets_its_own_file_and_the_old_one_goes(tmp_path: Path) -> None:
    rng = np.random.default_rng(13)
    with Store(tmp_path / "w.sqlite") as store:
        put(store, [f"e{i}" for i in range(200)], clustered(rng, 200, 16))
        vectors.refresh_index(store, "entity", MODEL)
        old = vector_index.index_path(store, "entity", MODEL, 16)
        rows = clustered(rng, 200, 16)
        put(store, [f"e{i}" for i in range(200)], rows, model="other-embed")  # every vector re-made by the new model
        truth = {f"e{i}": row for i, row in enumerate(rows)}
        assert vectors.search(store, "entity", MODEL, vectors.unit(rows[0]), 5, -1.0) == []  # none of its own left
        assert vectors.refresh_index(store, "entity", "other-embed").rebuilt
        assert not old.exists() and vector_index.index_path(store, "entity", "other-embed", 16).is_file()
        for query in queries(rng, truth, 8):
            found = vectors.search(store, "entity", "other-embed", query, 10, -1.0)
            assert [r for r, _ in found] == brute_force(truth, query, 10)


def test_embedding_keeps_the_index_in_step(fake_ollama, tmp_path, caplog) -> None:
    """Through the real embedding job: the first run builds the files, a changed entity is
    written into them as one added and one removed vector."""
    settings = settings_for(fake_ollama)
    model = settings.ollama.embed_model
    with open_store(tmp_path) as store:
        build_graph(store)
        list(embed_pending(store, client(fake_ollama), settings))
        for kind in ("entity", "relation", "chunk"):
            assert vector_index.index_path(store, kind, model, 16).is_file()
        with store.transaction() as conn:
            conn.execute("UPDATE entities SET description = 'Founder and CEO.' WHERE key = 'maria lopez'")
        caplog.clear()  # the first run may have been logged too (another test may have set the level)
        with caplog.at_level(logging.INFO, logger="docatlas.retrieval"):
            list(embed_pending(store, client(fake_ollama), settings))
        assert "vector index entity: 1 added, 1 removed" in caplog.text
        assert "vector index relation" not in caplog.text  # nothing of it changed: its file is left alone


def test_the_migration_keys_the_vectors_already_stored(tmp_path: Path) -> None:
    conn = workspace_before(tmp_path / "old.sqlite", m013_vector_keys)  # as it was before that migration
    conn.executemany("INSERT INTO embeddings(kind, ref, model, hash, dim, vector) VALUES ('entity', ?, ?, 'h', 2, ?)",
                     [(f"e{i}", MODEL, vectors.pack([1.0, float(i)])) for i in range(5)])
    conn.commit()
    conn.close()
    with Store(tmp_path / "old.sqlite") as store:
        assert store.schema_version == SCHEMA_VERSION
        keys = [r["seq"] for r in store.query("SELECT seq FROM embeddings ORDER BY seq")]
        assert keys == [1, 2, 3, 4, 5]
        put(store, ["e9"], np.array([[0.0, 1.0]], dtype=np.float32))
        assert store.query("SELECT seq FROM embeddings WHERE ref = 'e9'")[0]["seq"] == 6
        found = vectors.search(store, "entity", MODEL, vectors.unit([0.0, 1.0]), 2, -1.0)
        assert [r for r, _ in found] == ["e9", "e4"]


class CountingReader:
    """A real index file, read through; counts the bytes a search takes from it."""

    opened: ClassVar[list[CountingReader]] = []

    def __init__(self, path: Path) -> None:
        self.file = open(path, "rb")
        self.read_bytes = 0
        CountingReader.opened.append(self)

    def __getattr__(self, name: str):
        return getattr(self.file, name)

    def __enter__(self) -> CountingReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.file.close()

    def read(self, size: int = -1) -> bytes:
        data = self.file.read(size)
        self.read_bytes += len(data)
        return data


def test_a_search_reads_only_the_nearest_groups_of_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A question never loads all vectors: it reads the head and the nearest groups of the file."""
    monkeypatch.setattr(vector_index, "EXACT_BELOW", 0)
    rng = np.random.default_rng(3)
    rows = clustered(rng, 3000, 64)
    truth = {f"e{i}": row for i, row in enumerate(rows)}
    with Store(tmp_path / "w.sqlite") as store:
        put(store, list(truth), rows)
        vectors.refresh_index(store, "entity", MODEL)
        path = vector_index.index_path(store, "entity", MODEL, 64)
        assert vector_index._view(path).head.centroids.shape[0] > 3 * vector_index.PROBES  # many groups
        vector_index.forget_views()
        monkeypatch.setattr(vector_index, "_open", CountingReader)
        for query in queries(rng, truth, 5):
            CountingReader.opened.clear()
            found = vectors.search(store, "entity", MODEL, query, 10, -1.0)
            assert [r for r, _ in found] == brute_force(truth, query, 10)
            assert len(CountingReader.opened) == 1  # the index file, once
            assert CountingReader.opened[0].read_bytes < path.stat().st_size / 2  # not the whole file


def test_a_workspace_indexed_in_the_earlier_format_still_answers_and_is_indexed_again(tmp_path: Path) -> None:
    """A file of the usearch format: not read (the search scans SQL, exactly), then replaced."""
    rng = np.random.default_rng(17)
    rows = clustered(rng, 500, 16)
    truth = {f"e{i}": row for i, row in enumerate(rows)}
    with Store(tmp_path / "w.sqlite") as store:
        put(store, list(truth), rows)
        legacy = vector_index.index_folder(store) / vector_index.index_path(store, "entity", MODEL, 16).name
        legacy = legacy.with_suffix(".usearch")
        legacy.parent.mkdir(parents=True)
        legacy.write_bytes(b"\x00" * 4096)  # stands for the old file: its bytes are never read now
        assert_exact(store, truth, rng)
        change = vectors.refresh_index(store, "entity", MODEL)
        assert change.rebuilt and change.added == 500
        assert not legacy.exists() and vector_index.index_path(store, "entity", MODEL, 16).is_file()
        assert_exact(store, truth, rng)


def test_groups_are_learned_again_when_the_vectors_have_doubled(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vector_index, "EXACT_BELOW", 0)
    rng = np.random.default_rng(19)
    rows = clustered(rng, 1500, 16)
    truth = {f"e{i}": row for i, row in enumerate(rows)}
    with Store(tmp_path / "w.sqlite") as store:
        put(store, list(truth)[:500], rows[:500])
        vectors.refresh_index(store, "entity", MODEL)
        put(store, list(truth)[500:], rows[500:])  # twice as many new as the groups were learned on
        change = vectors.refresh_index(store, "entity", MODEL)
        assert change.rebuilt and change.added == 1500
        assert_exact(store, truth, rng)


def test_a_cut_short_index_file_is_not_trusted(tmp_path: Path) -> None:
    rng = np.random.default_rng(23)
    rows = clustered(rng, 400, 16)
    truth = {f"e{i}": row for i, row in enumerate(rows)}
    with Store(tmp_path / "w.sqlite") as store:
        put(store, list(truth), rows)
        vectors.refresh_index(store, "entity", MODEL)
        path = vector_index.index_path(store, "entity", MODEL, 16)
        path.write_bytes(path.read_bytes()[:-100])  # a copy that stopped early
        assert vector_index._view(path) is None
        assert_exact(store, truth, rng)
        assert vectors.refresh_index(store, "entity", MODEL).rebuilt
