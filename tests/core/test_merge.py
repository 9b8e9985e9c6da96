"""Merging per-chunk records into the graph: names, types, descriptions, relations, and a
re-merge that writes only what changed. Real SQLite; no model here (see test_merge_summaries)."""

from __future__ import annotations

import pytest
from docatlas.core.base.keys import distinct, entity_key, relation_pair
from docatlas.core.base.records import EntityRecord, RelationRecord
from docatlas.core.graph.merge import join_descriptions, merge_entity, merge_relation, rebuild
from docatlas.core.storage.database import NewChunk, Store


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "ws" / "docatlas.sqlite") as s:
        yield s


def add_chunk(store: Store, path: str, entities: list[tuple], relations: list[tuple] = ()) -> set[str]:
    """One document of one chunk with the given records; returns the keys it touched."""
    store.put_document(path=path, title=path, kind="txt", content_hash=path, size=1,
                       chunks=[NewChunk("text of " + path, 3, None, None)])
    chunk = next(c for c in store.work_chunks() if c.status == "pending")
    ents = [EntityRecord(*e) for e in entities]
    rels = [RelationRecord(*r) for r in relations]
    keys = [entity_key(e.name) for e in ents]
    pairs = [(entity_key(r.source), entity_key(r.target)) for r in rels]
    store.finish_chunk(chunk.id, ents, rels, status="done", profile="lightrag", model="m", calls=1,
                       keys=keys, relation_keys=pairs)
    return set(keys) | {k for p in pairs for k in p}


def test_keys_ignore_space_quotes_and_case_but_keep_the_display_form():
    assert entity_key('  "Harbor   Analytics" ') == entity_key("HARBOR ANALYTICS") == "harbor analytics"
    assert entity_key("\u201cStraße\u201d") == "strasse"
    merged = merge_entity("harbor analytics", ["Harbor Analytics", "HARBOR ANALYTICS", "Harbor Analytics"],
                          ["organization"] * 3, ["A firm."] * 3)
    assert merged.name == "Harbor Analytics" and merged.mentions == 3


def test_type_by_vote_ignores_unknown_and_first_seen_breaks_ties():
    votes = ["person", "unknown", "Organization", "organization"]
    assert merge_entity("x", ["X"] * 4, votes, []).type == "organization"
    assert merge_entity("x", ["X"] * 2, ["location", "event"], []).type == "location"
    assert merge_entity("x", ["X"], ["unknown"], []).type == "unknown"


def test_descriptions_are_deduplicated_then_joined():
    assert distinct(["A firm.", "a  firm", "", "Based in Lisbon.", "A firm."]) == ["A firm.", "Based in Lisbon."]
    assert join_descriptions("X", ["A firm.", "a firm", "Based in Lisbon."]) == "A firm.\nBased in Lisbon."


def test_relations_are_undirected_with_summed_weights_and_unioned_keywords():
    assert relation_pair("b", "a") == relation_pair("a", "b") == ("a", "b")
    merged = merge_relation(("a", "b"), ["founder, leadership", "Leadership; owner"], ["Founded it.", "Owns it."],
                            [8.0, None])
    assert merged.keywords == "founder, leadership, owner"
    assert merged.weight == 9.0 and merged.mentions == 2  # a missing strength counts 1
    assert merged.description == "Founded it.\nOwns it."


def test_rebuild_creates_endpoints_matches_names_and_drops_self_loops(store):
    add_chunk(store, "/a.txt", [("Maria Lopez", "person", "Founder.")],
              [("maria lopez", "Harbor Analytics", "founder", "She founded it.", 9),
               ("Maria Lopez", "MARIA LOPEZ", "self", "Herself.", 1)])
    add_chunk(store, "/b.txt", [("Harbor Analytics", "organization", "A firm.")],
              [("Harbor Analytics", "Maria Lopez", "owner", "She owns it.", 2)])
    rebuild(store)
    entities = {r["key"]: r for r in store.query("SELECT * FROM entities")}
    assert set(entities) == {"maria lopez", "harbor analytics"}
    relations = store.query("SELECT * FROM relations")
    assert len(relations) == 1  # both directions are one edge; the self-loop is gone
    edge = relations[0]
    assert (edge["source_key"], edge["target_key"]) == ("harbor analytics", "maria lopez")
    assert edge["weight"] == 11 and edge["keywords"] == "founder, owner" and edge["mentions"] == 2


def test_an_endpoint_named_only_in_a_relation_becomes_a_node(store):
    add_chunk(store, "/a.txt", [("Ada Byron", "person", "A mathematician.")],
              [("Ada Byron", "Charles Babbage", "letters", "They wrote letters.", 5)])
    rebuild(store)
    babbage = store.query("SELECT * FROM entities WHERE key = 'charles babbage'")[0]
    assert (babbage["name"], babbage["type"], babbage["mentions"]) == ("Charles Babbage", "unknown", 0)


def test_a_rebuild_that_changes_nothing_writes_nothing(store):
    add_chunk(store, "/a.txt", [("Ada Byron", "person", "A mathematician."), ("Alan Turing", "person", "A logician.")],
              [("Ada Byron", "Alan Turing", "influence", "He read her notes.", 4)])
    rebuild(store)
    version = store.get_meta("graph_version")
    queued = store.query("SELECT COUNT(*) AS n FROM embed_queue")[0]["n"]
    rebuild(store)
    rebuild(store, {"ada byron"})
    assert store.get_meta("graph_version") == version  # no row was rewritten
    assert store.query("SELECT COUNT(*) AS n FROM embed_queue")[0]["n"] == queued


def test_a_partial_rebuild_rewrites_only_what_changed(store):
    add_chunk(store, "/a.txt", [("Ada Byron", "person", "A mathematician."), ("Alan Turing", "person", "A logician.")])
    rebuild(store)
    touched = add_chunk(store, "/b.txt", [("Ada Byron", "person", "Wrote the first program.")])
    with store.transaction() as conn:
        conn.execute("DELETE FROM embed_queue")
    rebuild(store, touched | {"alan turing"})
    ada = store.query("SELECT description, mentions FROM entities WHERE key = 'ada byron'")[0]
    assert ada == {"description": "A mathematician.\nWrote the first program.", "mentions": 2}
    # the changed row is rewritten (and queued for a new embedding); Alan's is left alone
    assert store.query("SELECT kind, ref FROM embed_queue") == [{"kind": "entity", "ref": "ada byron"}]


def test_descriptions_join_in_chunk_order_whatever_order_the_records_were_written(store):
    first = add_chunk(store, "/a.txt", [("Ada Byron", "person", "First.")])
    second = add_chunk(store, "/b.txt", [("Ada Byron", "person", "Second.")])
    ids = [r["id"] for r in store.query("SELECT id FROM chunks ORDER BY id")]
    # rewrite the first chunk's records after the second's, as a parallel run may finish them
    store.finish_chunk(ids[0], [EntityRecord("Ada Byron", "person", "First.")], [], status="done",
                       profile="lightrag", model="m", calls=0, keys=["ada byron"], relation_keys=[])
    rebuild(store, first | second)
    assert store.query("SELECT description FROM entities")[0]["description"] == "First.\nSecond."


def test_deleting_a_document_rederives_from_the_records_left(store):
    add_chunk(store, "/a.txt", [("Ada Byron", "person", "From a.")], [("Ada Byron", "Alan Turing", "x", "a", 1)])
    add_chunk(store, "/b.txt", [("Ada Byron", "person", "From b.")])
    rebuild(store)
    doc = store.document_by_path("/a.txt")
    rebuild(store, store.delete_document(doc.id))
    assert {r["key"]: r["description"] for r in store.query("SELECT key, description FROM entities")} == {
        "ada byron": "From b."}
    assert store.query("SELECT * FROM relations") == []
