"""Drops heal: a process stopped between a drop and its merge leaves the keys on disk, and the
next writing job re-derives them first, so sources and weights come out exact."""

from __future__ import annotations

from pathlib import Path

import pytest
from docatlas.core.graph.export import graph_data
from docatlas.core.jobs import ingest as pipeline
from docatlas.core.storage import healing
from docatlas.core.storage.database import Store
from fixtures.scripted_model import lightrag_responder
from helpers import DOCUMENTS, settings_for, write_corpus


class Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs, no except clause catches it."""


@pytest.fixture
def model(fake_ollama):
    fake_ollama.responder = lightrag_responder
    return fake_ollama


def graph_of(store: Store) -> dict:
    """The graph without document ids (a clean run numbers its documents differently)."""
    data = graph_data(store)
    return {"entities": sorted((e["name"], e["type"], e["description"], tuple(sorted(e["sources"])))
                               for e in data["entities"]),
            "relations": sorted((r["source"], r["target"], r["keywords"], r["weight"], tuple(sorted(r["sources"])))
                                for r in data["relations"])}


def clean_graph(tmp_path: Path, corpus: Path, settings) -> dict:
    with Store(tmp_path / "clean" / "docatlas.sqlite") as clean:
        list(pipeline.index(clean, [corpus], settings))
        return graph_of(clean)


def test_delete_killed_before_its_merge_heals_on_the_next_run(model, tmp_path, monkeypatch):
    corpus = write_corpus(tmp_path / "docs")
    settings = settings_for(model)
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        list(pipeline.index(store, [corpus], settings))
        gamma = next(d for d in store.documents() if d.path.endswith("gamma.txt"))

        def killed(*args, **kwargs):
            raise Killed

        monkeypatch.setattr(pipeline, "rebuild", killed)
        with pytest.raises(Killed):
            pipeline.remove_document(store, gamma.id)
        monkeypatch.undo()
        owed = healing.pending(store)
        assert owed  # written with the drop, before any merge
        broken = graph_of(store)

    (corpus / "gamma.txt").unlink()
    expected = clean_graph(tmp_path, corpus, settings)
    assert broken != expected  # the kill really left the graph wrong
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        last = list(pipeline.index(store, [], settings))[-1]  # any writing job heals first
        assert last.stage == "done"
        assert graph_of(store) == expected
        assert healing.pending(store) == set()


def test_changed_document_killed_before_its_merge_heals(model, tmp_path, monkeypatch):
    corpus = write_corpus(tmp_path / "docs")
    settings = settings_for(model)
    db = tmp_path / "ws" / "docatlas.sqlite"
    with Store(db) as store:
        list(pipeline.index(store, [corpus], settings))
    # The changed alpha.txt says less; its old records support relations that others state too.
    (corpus / "alpha.txt").write_text("Maria Lopez founded Harbor Analytics in Lisbon.", encoding="utf-8")
    stored = Store.put_document

    def put_then_die(self, **kwargs):
        stored(self, **kwargs)
        raise Killed  # the old version is dropped and the new one stored; no merge, no extraction

    monkeypatch.setattr(Store, "put_document", put_then_die)
    with Store(db) as store, pytest.raises(Killed):
        list(pipeline.index(store, [corpus], settings))
    monkeypatch.undo()

    expected = clean_graph(tmp_path, corpus, settings)
    with Store(db) as store:
        assert healing.pending(store)
        last = list(pipeline.index(store, [corpus], settings))[-1]
        assert last.stage == "done" and last.documents_skipped == 3  # nothing read again
        assert graph_of(store) == expected
        assert healing.pending(store) == set()


def test_delete_heals_what_an_earlier_delete_left(model, tmp_path, monkeypatch):
    corpus = write_corpus(tmp_path / "docs")
    settings = settings_for(model)
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        list(pipeline.index(store, [corpus], settings))
        docs = {Path(d.path).name: d.id for d in store.documents()}
        monkeypatch.setattr(pipeline, "rebuild", lambda *a, **k: (_ for _ in ()).throw(Killed()))
        with pytest.raises(Killed):
            pipeline.remove_document(store, docs["gamma.txt"])
        monkeypatch.undo()
        pipeline.remove_document(store, docs["beta.md"])  # the next delete heals gamma's keys too
        healed = graph_of(store)
        assert healing.pending(store) == set()

    only_alpha = write_corpus(tmp_path / "alpha-only", {"alpha.txt": DOCUMENTS["alpha.txt"]})
    expected = clean_graph(tmp_path, only_alpha, settings)
    assert [(n, t, d) for n, t, d, _ in healed["entities"]] == [(n, t, d) for n, t, d, _ in expected["entities"]]
    assert [r[:4] for r in healed["relations"]] == [r[:4] for r in expected["relations"]]
    assert all(len(sources) == 1 for *_, sources in healed["entities"])
