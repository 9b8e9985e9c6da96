"""Merging and summarising yield `Progress` and stop on cancel, leaving `graph_dirty=1` and
nothing half-written; the next run finishes the merge."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest
from docatlas.core.base.progress import Progress
from docatlas.core.graph.merge import rebuild, rebuild_steps
from docatlas.core.graph.summarize import ModelSummarizer
from docatlas.core.jobs.ingest import index
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.storage.database import Store
from fixtures.scripted_model import SUMMARY_MARK, responder_for
from helpers import settings_for, write_corpus
from test_edits_helpers import build_graph, open_store, snapshot, star_corpus

SHARED = {"Harbor Analytics", "Priya Nair", "Jonas Weber", "Tomas Berg"}  # named in several documents


def summary_calls(server) -> int:
    return sum(SUMMARY_MARK in r["body"]["messages"][0]["content"] for r in server.requests
               if r["path"] == "/api/chat")


@pytest.fixture
def model(fake_ollama):
    fake_ollama.responder = responder_for("lightrag", varied=True)
    return fake_ollama


@pytest.fixture
def joined(model, tmp_path):
    """A workspace ingested below no summary threshold, and a summariser with a low one."""
    settings = settings_for(model)
    store = Store(tmp_path / "ws" / "docatlas.sqlite")
    list(index(store, [write_corpus(tmp_path / "docs")], settings))
    summarize = ModelSummarizer(OllamaLLM(settings.ollama, cache=store),
                                replace(settings.extraction, summary_tokens=20))
    yield store, summarize
    store.close()


def test_summaries_and_the_merge_report_their_steps(model, joined):
    store, summarize = joined
    steps = list(rebuild_steps(store, None, summarize))
    assert all(isinstance(s, Progress) and s.stage in ("merge", "summarize") for s in steps)
    summaries = [s for s in steps if s.stage == "summarize"]
    assert [(s.step_done, s.step_total) for s in summaries] == [(i, len(SHARED)) for i in range(1, len(SHARED) + 1)]
    merged = [s for s in steps if s.stage == "merge"]
    total = merged[0].step_total
    assert total == store.counts()["entities"] + store.counts()["relations"]
    assert merged[-1].step_done == total and [s.step_done for s in merged] == sorted(s.step_done for s in merged)
    assert summary_calls(model) == len(SHARED) and store.get_meta("graph_dirty") == "0"


def test_a_cancelled_summary_run_writes_nothing_and_the_next_run_finishes(model, joined):
    store, summarize = joined
    before = snapshot(store)
    cancel = threading.Event()
    for step in rebuild_steps(store, None, summarize, cancel):
        if step.stage == "summarize":
            cancel.set()
    assert summary_calls(model) == 1  # stopped between items
    assert snapshot(store) == before and store.get_meta("graph_dirty") == "1"
    rebuild(store, None, summarize)
    assert summary_calls(model) == len(SHARED)  # the first summary came from the cache
    names = {r["name"]: r["description"] for r in store.query("SELECT name, description FROM entities")}
    assert all(names[n].startswith("Summary of ") for n in SHARED) and store.get_meta("graph_dirty") == "0"


def test_a_merge_cancelled_between_keys_writes_nothing(tmp_path):
    with open_store(tmp_path) as store:
        build_graph(store, star_corpus(4, 30))
        before = snapshot(store)
        with store.transaction() as conn:
            conn.execute("DELETE FROM relations WHERE source_key LIKE 'hub%' AND target_key LIKE 'item 2-%'")
        stale = snapshot(store)
        cancel = threading.Event()
        seen = []
        for step in rebuild_steps(store, None, None, cancel):
            seen.append(step)
            if step.step_done > 0:
                cancel.set()
        assert seen[-1].message == "Merge stopped; the next run finishes it."
        assert 0 < seen[-2].step_done < seen[-2].step_total
        assert snapshot(store) == stale and store.get_meta("graph_dirty") == "1"
        rebuild(store)
        assert snapshot(store) == before and store.get_meta("graph_dirty") == "0"


def test_a_merge_closed_by_its_caller_writes_nothing_but_graph_dirty(tmp_path):
    with open_store(tmp_path) as store:
        build_graph(store, star_corpus(2, 30))
        with store.transaction() as conn:
            conn.execute("DELETE FROM entities WHERE key LIKE 'item 1-%'")
        stale = snapshot(store)
        assert store.get_meta("graph_dirty") == "0"  # a deletion, say, that does not mark it
        steps = rebuild_steps(store, {"hub 1"})
        assert next(steps).step_total > 30
        steps.close()  # the window closed the job between two steps
        assert snapshot(store) == stale and store.get_meta("graph_dirty") == "1"
        for step in rebuild_steps(store, {"hub 1"}):
            last = step
        assert last.step_done == last.step_total and store.get_meta("graph_dirty") == "0"


def test_ingest_shows_the_merge_and_its_summaries(model, tmp_path):
    settings = settings_for(model, summary_tokens=20)
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        events = list(index(store, [write_corpus(tmp_path / "docs")], settings))
        assert [e for e in events if e.stage == "summarize"][-1].step_done == len(SHARED)
        merged = [e for e in events if e.stage == "merge" and e.step_total]
        assert merged[-1].step_done == merged[-1].step_total == store.counts()["entities"] + store.counts()[
            "relations"]
        assert events[-1].stage == "done" and events[-1].chunks_done == 3


def test_an_ingest_cancelled_in_the_merge_finishes_it_on_the_next_run(model, tmp_path):
    settings = settings_for(model, summary_tokens=20)
    cancel = threading.Event()
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        events = []
        for event in index(store, [write_corpus(tmp_path / "docs")], settings, cancel=cancel):
            events.append(event)
            if event.stage == "summarize":
                cancel.set()
        assert events[-1].stage == "cancelled" and store.get_meta("graph_dirty") == "1"
        # None of the final merge's summaries was written; the batches merged during the run keep
        # every record in the graph, descriptions joined.
        names = {r["name"]: r["description"] for r in store.query("SELECT name, description FROM entities")}
        assert SHARED <= set(names) and not any(d.startswith("Summary of ") for d in names.values())
        last = list(index(store, [tmp_path / "docs"], settings))[-1]
        assert last.stage == "done" and store.get_meta("graph_dirty") == "0"
        names = {r["name"]: r["description"] for r in store.query("SELECT name, description FROM entities")}
        assert all(names[n].startswith("Summary of ") for n in SHARED)
