"""Likely duplicates: found by name, offered as suggestions, merged only when accepted."""

from __future__ import annotations

import random
import string

import pytest
from docatlas.cli import main
from docatlas.core.graph.export import graph_data
from docatlas.core.graph.merge import rebuild
from docatlas.core.graph.similarity import (
    MAX_BLOCK,
    Named,
    _form,
    candidate_pairs,
    find_duplicates,
    score_pair,
)
from docatlas.core.graph.suggest import (
    accept,
    confirm_with_model,
    list_suggestions,
    reject,
    suggest_merges,
    unmerge,
)
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.storage.database import Store
from helpers import settings_for
from test_merge import add_chunk


def named(name: str, etype: str = "unknown") -> Named:
    from docatlas.core.base.keys import entity_key

    return Named(entity_key(name), name, etype)


@pytest.mark.parametrize(
    ("a", "b", "reason"),
    [
        ("John Doe", "John T. Doe", "initials"),
        ("J. Doe", "John Doe", "initials"),
        ("IBM", "International Business Machines", "acronym"),
        ("I.B.M.", "International Business Machines Corporation", "acronym"),
        ("BoA", "Bank of America", "acronym"),
        ("Harbor Analytics Ltd", "Harbor Analytics", "legal form"),
        ("Jean-Luc Picard", "Jean Luc Picard", "same words"),
        ("Harbour Analytics", "Harbor Analytics", "spelling"),
    ],
)
def test_likely_duplicates_are_recognised(a, b, reason):
    found = score_pair(named(a), named(b))
    assert found is not None and found[1] == reason and found[0] >= 0.7


@pytest.mark.parametrize(
    ("a", "b"),
    [("John Doe", "Jane Doe"), ("John Doe", "John Smith"), ("Windows 10", "Windows 11"),
     ("Maria Lopez", "Priya Nair"), ("IBM", "Intel"), ("Paris", "Paris Hilton"), ("Harbor Analytics", "Analytics")],
)
def test_different_entities_are_left_alone(a, b):
    assert score_pair(named(a), named(b)) is None


def test_types_weigh_in():
    assert score_pair(named("Northwind", "organization"), named("Northwind Labs", "organization"))[1] == "contained"
    assert score_pair(named("Northwind", "organization"), named("Northwind Labs", "location")) is None
    # a clear rule still holds across a type mismatch, with a lower score
    same, mixed = (score_pair(named("IBM", "organization"), named("International Business Machines", t))
                   for t in ("organization", "technology"))
    assert mixed[0] < same[0]


def test_blocking_keeps_the_comparisons_near_linear_on_ten_thousand_names():
    rng = random.Random(3)
    first = ["".join(rng.choices(string.ascii_lowercase, k=6)).title() for _ in range(400)]
    last = ["".join(rng.choices(string.ascii_lowercase, k=7)).title() for _ in range(400)]
    names = list(dict.fromkeys(f"{rng.choice(first)} {rng.choice(last)}" for _ in range(10_500)))[:10_000]
    names += ["Grace Hopper", "Grace M. Hopper", "IBM", "International Business Machines"]
    forms = [_form(named(n)) for n in names]
    pairs = candidate_pairs(forms)
    # all pairs would be 5 * 10^7; blocks (by word, prefix, acronym) leave a few per name
    assert len(pairs) < 60 * len(names)
    found = {(m.a_key, m.b_key) for m in find_duplicates(named(n) for n in names)}
    assert ("grace hopper", "grace m. hopper") in found
    assert ("ibm", "international business machines") in found


def test_an_oversized_block_is_compared_by_sorted_neighbourhood():
    names = [f"Labs {i:04d} Group" for i in range(MAX_BLOCK + 50)] + ["Acme Labs", "Acme Labs Ltd"]
    forms = [_form(named(n)) for n in names]
    pairs = candidate_pairs(forms)
    assert len(pairs) < len(names) * 25
    assert any(m.reason == "legal form" for m in find_duplicates(named(n) for n in names))


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "ws" / "docatlas.sqlite") as s:
        add_chunk(s, "/a.txt", [("John Doe", "person", "An engineer at IBM."), ("IBM", "organization", "A firm.")],
                  [("John Doe", "IBM", "employment", "John Doe works at IBM.", 7)])
        add_chunk(s, "/b.txt", [("John T. Doe", "person", "Wrote the report."),
                                ("International Business Machines", "organization", "A computer maker."),
                                ("Priya Nair", "person", "Leads a lab.")],
                  [("John T. Doe", "Priya Nair", "co-authors", "They wrote together.", 5)])
        add_chunk(s, "/c.txt", [("IBM", "organization", "Sells mainframes.")])
        rebuild(s)
        yield s


def test_suggestions_are_stored_and_nothing_is_merged(store):
    graph = graph_data(store)
    found = suggest_merges(store)
    pairs = {(s.a_name, s.b_name, s.reason) for s in found}
    assert pairs == {("John Doe", "John T. Doe", "initials"),
                     ("IBM", "International Business Machines", "acronym")}
    assert all(s.status == "open" for s in found)
    assert graph_data(store) == graph  # never merged silently
    assert suggest_merges(store) == found  # found again: the same rows, no duplicates
    assert store.query("SELECT COUNT(*) AS n FROM entity_aliases")[0]["n"] == 0


def test_accepting_merges_records_relations_and_sources(store):
    ibm = next(s for s in suggest_merges(store) if s.reason == "acronym")
    survivor = accept(store, ibm.id)
    assert survivor == "ibm"  # two mentions against one
    keys = {r["key"] for r in store.query("SELECT key FROM entities")}
    assert "international business machines" not in keys
    row = store.query("SELECT * FROM entities WHERE key = 'ibm'")[0]
    assert row["mentions"] == 3 and "A computer maker." in row["description"]
    sources = next(e["sources"] for e in graph_data(store)["entities"] if e["name"] == "IBM")
    assert sources == ["/a.txt", "/b.txt", "/c.txt"]
    # the names the model wrote are kept; only the key moved
    assert store.query("SELECT name FROM chunk_entities WHERE key = 'ibm' ORDER BY rowid")[1]["name"] == (
        "International Business Machines")
    assert [s.status for s in list_suggestions(store, None) if s.id == ibm.id] == ["accepted"]


def test_accepting_a_person_repoints_the_relations(store):
    doe = next(s for s in suggest_merges(store) if s.reason == "initials")
    survivor = accept(store, doe.id, keep="john t. doe")
    assert survivor == "john t. doe"
    edges = {(r["source_key"], r["target_key"]) for r in store.query("SELECT * FROM relations")}
    assert edges == {("ibm", "john t. doe"), ("john t. doe", "priya nair")}


def test_records_written_later_under_a_merged_name_land_on_the_survivor(store):
    ibm = next(s for s in suggest_merges(store) if s.reason == "acronym")
    accept(store, ibm.id, keep="international business machines")
    touched = add_chunk(store, "/d.txt", [("IBM", "organization", "Opened a lab in Zurich.")])
    rebuild(store, touched)
    keys = {r["key"] for r in store.query("SELECT key FROM entities")}
    assert "ibm" not in keys
    row = store.query("SELECT * FROM entities WHERE key = 'international business machines'")[0]
    assert "Opened a lab in Zurich." in row["description"] and row["mentions"] == 4


def test_a_rejected_pair_is_never_suggested_again(store):
    doe = next(s for s in suggest_merges(store) if s.reason == "initials")
    reject(store, doe.id)
    assert [s.reason for s in suggest_merges(store)] == ["acronym"]
    with pytest.raises(ValueError, match="already rejected"):
        accept(store, doe.id)


def test_unmerge_takes_a_merge_back(store):
    graph = graph_data(store)
    ibm = next(s for s in suggest_merges(store) if s.reason == "acronym")
    accept(store, ibm.id)
    unmerge(store, "international business machines")
    assert graph_data(store) == graph
    assert all(s.reason != "acronym" for s in suggest_merges(store))  # taken back: not offered again


def test_suggestions_disappear_with_their_entities(store):
    suggest_merges(store)
    doc = store.document_by_path("/b.txt")
    rebuild(store, store.delete_document(doc.id))
    assert suggest_merges(store) == []


def test_the_model_can_confirm_or_refuse(store, fake_ollama):
    fake_ollama.responder = lambda request: ("YES" if "International Business" in request["messages"][0]["content"]
                                             else "No.")
    suggest_merges(store)
    llm = OllamaLLM(settings_for(fake_ollama).ollama)
    try:
        counts = confirm_with_model(store, llm)
    finally:
        llm.close()
    assert counts == {"accepted": 1, "rejected": 1, "unclear": 0}
    decided = {s.reason: (s.status, s.decided_by) for s in list_suggestions(store, None)}
    assert decided == {"acronym": ("accepted", "model"), "initials": ("rejected", "model")}
    prompts = [r["body"]["messages"][0]["content"] for r in fake_ollama.requests if r["path"] == "/api/chat"]
    assert len(prompts) == 2
    assert "First: John Doe (person): An engineer at IBM." in prompts[0] and "YES or NO" in prompts[0]


def test_cli_lists_accepts_and_rejects(store, capsys):
    ws = str(store.path.parent)
    assert main(["--data-dir", ws, "suggestions"]) == 0
    out = capsys.readouterr().out
    assert "IBM  <->  International Business Machines  (acronym, 0.85)" in out and "2 merge suggestions" in out
    ids = {s.reason: s.id for s in list_suggestions(store)}
    assert main(["--data-dir", ws, "suggestions", "--reject", str(ids["initials"])]) == 0
    assert main(["--data-dir", ws, "suggestions", "--accept", str(ids["acronym"])]) == 0
    out = capsys.readouterr().out
    assert "Kept John Doe and John T. Doe apart." in out and "Merged International Business Machines into IBM." in out
    assert main(["--data-dir", ws, "suggestions", "--accept", "999"]) == 1
    assert "no merge suggestion 999" in capsys.readouterr().err
