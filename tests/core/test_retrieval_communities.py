"""Communities and their reports (only changed ones are rewritten), and the community
(map/reduce) mode of `ask`."""

from __future__ import annotations

import json
import threading

import pytest
from docatlas.core.base.progress import Progress
from docatlas.core.graph.merge import rebuild
from docatlas.core.retrieval.answer import NO_CONTEXT_ANSWER, ask
from docatlas.core.retrieval.communities import detect, parse_report, refresh_communities
from docatlas.core.retrieval.embed import embed_pending
from docatlas.core.retrieval.global_search import parse_points
from test_retrieval_helpers import (
    ANSWER,
    REPORT,
    Script,
    add_document,
    build_graph,
    chat_requests,
    client,
    open_store,
    settings_for,
)


@pytest.fixture
def model(fake_ollama):
    fake_ollama.responder = Script()
    return fake_ollama


@pytest.fixture
def store(tmp_path):
    with open_store(tmp_path) as s:
        yield build_graph(s)


def refresh(store, server, **overrides) -> list[Progress]:
    return list(refresh_communities(store, client(server, store), settings_for(server, **overrides)))


def report_calls(server) -> list[dict]:
    return [b for b in chat_requests(server) if "title" in (b.get("format") or {}).get("properties", {})]


def members(store) -> list[set[str]]:
    rows = store.query("SELECT community_id, key FROM community_members ORDER BY community_id")
    groups: dict[int, set[str]] = {}
    for r in rows:
        groups.setdefault(r["community_id"], set()).add(r["key"])
    return list(groups.values())


def test_communities_follow_the_graph(store):
    groups = detect(store)
    garden = next(g for g in groups if "community garden" in g)
    assert set(garden) == {"community garden", "tomatoes", "basil"}
    assert all("maria lopez" not in g or "basil" not in g for g in groups)
    assert detect(store) == groups  # seeded: the same graph gives the same communities


def test_reports_are_written_once_and_only_changed_ones_again(model, store):
    events = refresh(store, model)
    assert events[0].stage == "communities" and events[-1].step_done == events[-1].step_total > 0
    assert all(isinstance(e, Progress) and e.stage == "communities" for e in events)
    rows = store.query("SELECT * FROM communities")
    assert all(r["status"] == "done" and r["title"] == REPORT["title"] and r["rating"] == 7.5 for r in rows)
    assert json.loads(rows[0]["findings"])[0]["summary"] == "Founded by Maria Lopez"
    written = len(report_calls(model))
    assert written == len(rows)
    prompt = report_calls(model)[0]["messages"][0]["content"]
    assert "Entities:" in prompt and " -- " in prompt

    assert refresh(store, model) == []  # nothing changed: no events, no calls
    assert len(report_calls(model)) == written

    # a new fact about the garden changes that community only
    add_document(store, "more.txt", [("Basil needs sun.", None, None,
                                      [("Basil", "concept", "Needs sun.")],
                                      [("Basil", "Tomatoes", "companion planting", "Basil helps tomatoes.")])])
    rebuild(store)
    refresh(store, model)
    assert len(report_calls(model)) == written + 1
    assert "Basil" in report_calls(model)[-1]["messages"][0]["content"]


def test_reports_respect_the_size_floor_and_the_cap(model, store):
    refresh(store, model, query__community_min_size=3, query__community_max_reports=1)
    rows = store.query("SELECT size, status FROM communities ORDER BY size DESC")
    assert len(rows) > 1 and all(r["size"] >= 3 for r in rows)
    assert [r["status"] for r in rows].count("done") == 1


def test_refresh_stops_on_cancel_and_resumes(model, store):
    cancel = threading.Event()
    events = []
    for event in refresh_communities(store, client(model, store), settings_for(model), cancel):
        events.append(event)
        if event.stage == "communities" and event.step_total and event.step_done == 1:
            cancel.set()
    assert events[-1].stage == "cancelled"
    left = store.query("SELECT COUNT(*) AS n FROM communities WHERE status != 'done'")[0]["n"]
    assert left > 0
    refresh(store, model)
    assert store.query("SELECT COUNT(*) AS n FROM communities WHERE status != 'done'")[0]["n"] == 0


def test_ollama_down_during_reports_is_one_sentence(model, store):
    model.stop()
    events = refresh(store, model)
    assert "Ollama is not reachable" in events[-1].warnings[0]


def test_community_mode_maps_over_reports_and_reduces(model, store):
    refresh(store, model)
    list(embed_pending(store, client(model), settings_for(model)))  # reports get vectors too
    assert store.query("SELECT COUNT(*) AS n FROM embeddings WHERE kind = 'community'")[0]["n"] > 0
    tokens: list[str] = []
    answer = ask(store, client(model, store), "What are the main themes?", settings_for(model),
                 mode="community", on_token=tokens.append)
    assert answer.answer == ANSWER == "".join(tokens) and answer.mode == "community"
    assert answer.context.points[0].text == "Harbor Analytics sells tide sensors."
    assert answer.context.reports and answer.references
    maps = [b for b in chat_requests(model) if "points" in (b.get("format") or {}).get("properties", {})]
    assert len(maps) == 1 and "[K1]" in maps[0]["messages"][0]["content"]
    final = [b for b in chat_requests(model) if not b.get("format")][-1]
    assert "[P1] Harbor Analytics sells tide sensors." in final["messages"][0]["content"]
    assert "reports" in answer.to_json()["context"]


def test_community_mode_without_helpful_points_says_so(model, store):
    refresh(store, model)
    model.responder = Script(points=[])
    answer = ask(store, client(model, store), "What about quarks?", settings_for(model), mode="community")
    assert answer.answer == NO_CONTEXT_ANSWER


def test_community_mode_without_reports_falls_back_to_global(model, store):
    answer = ask(store, client(model, store), "Which supply contract exists?", settings_for(model),
                 mode="community")
    assert answer.mode == "global" and "no community reports yet" in answer.warnings[0]


def test_report_and_point_parsing_is_tolerant():
    report = parse_report('Sure!\n```json\n{"title": "T", "summary": "S", "key_findings": ["a", "b"], '
                          '"rating": "11",}\n```', "Fallback")
    assert (report.title, report.summary, report.rating) == ("T", "S", 10.0)
    assert [f["summary"] for f in report.findings] == ["a", "b"]
    prose = parse_report("This group is about gardens.", "Basil, Tomatoes")
    assert prose.title == "Basil, Tomatoes" and prose.summary == "This group is about gardens."
    points = parse_points('{"points": [{"point": "x", "score": 0}, {"description": "y", "score": "n/a"}, '
                          '{"point": "z", "score": 90, "reports": "K1, K2"}]}')
    assert points == [("y", 50.0, ()), ("z", 90.0, ("K1", "K2"))]
