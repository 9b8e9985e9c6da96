"""Grounding and type rules as pure functions: what the chunk's text backs, what types are allowed."""

from __future__ import annotations

from docatlas.core.base.records import EntityRecord, RelationRecord
from docatlas.core.base.settings import DEFAULT_ENTITY_TYPES
from docatlas.core.ingest.entity_types import allowed_type, hold_types
from docatlas.core.ingest.grounding import EXAMPLE, NOT_IN_TEXT, ground
from docatlas.core.ingest.health import ChunkHealth, reply_format, totals, verdict
from docatlas.core.prompts.catalog import available_profiles, load_profile
from docatlas.core.prompts.examples import example_names, shipped_example_names

TEXT = ("Ebenezer Scrooge's nephew, Fred, came to the counting-house. Marley was dead: to begin with. "
        "Bob Cratchit worked for Scroge in Zürich.")


def entity(name: str, kind: str = "person") -> EntityRecord:
    return EntityRecord(name, kind, "")


def names(records) -> list[str]:
    return [r.name for r in records]


def test_names_written_differently_are_still_found_in_the_text():
    found = ground([entity(n) for n in ("ebenezer scrooge", "Scrooge", "FRED", "Counting House",
                                        "Bob  Cratchit", "The Marley", "Zurich", "Scrooge's nephew")], [], TEXT)
    assert names(found.entities) == ["ebenezer scrooge", "Scrooge", "FRED", "Counting House", "Bob  Cratchit",
                                     "The Marley", "Zurich", "Scrooge's nephew"]
    assert found.ungrounded == []


def test_a_close_fuzzy_match_counts_but_a_short_or_different_name_does_not():
    found = ground([entity("Bob Cratchitt"), entity("Tim"), entity("Felix"), entity("Jacob Marly")], [], TEXT)
    assert names(found.entities) == ["Bob Cratchitt"]
    assert [(u.record.name, u.reason) for u in found.ungrounded] == [
        ("Tim", NOT_IN_TEXT), ("Felix", NOT_IN_TEXT), ("Jacob Marly", NOT_IN_TEXT)]


def test_an_alias_grounds_a_name_and_an_accepted_key_counts_as_backed():
    found = ground([entity("Old Ebenezer"), entity("Lady Jane")], [], TEXT,
                   aliases={"old ebenezer": ["Ebenezer Scrooge"]}, accepted={"lady jane"})
    assert names(found.entities) == ["Old Ebenezer", "Lady Jane"]


def test_a_prompt_example_name_needs_the_exact_words_in_the_chunk():
    examples = ["Amara Osei", "BlueCurrent", "Turin"]
    found = ground([entity("Amara Osei"), entity("Blue Current"), entity("Turin")], [], "Amara Ose went to Turin.",
                   examples=examples)
    assert names(found.entities) == ["Turin"]  # the chunk really names Turin
    # "Amara Ose" would pass the fuzzy rule for an ordinary name, not for an example's
    assert [(u.record.name, u.reason) for u in found.ungrounded] == [("Amara Osei", EXAMPLE),
                                                                      ("Blue Current", NOT_IN_TEXT)]


def test_a_relation_needs_both_ends_in_the_text():
    relations = [RelationRecord("Fred", "Marley", "kin", "x"), RelationRecord("Fred", "Felix", "met", "y")]
    found = ground([], relations, TEXT)
    assert found.relations == relations[:1]
    assert [u.record for u in found.ungrounded] == relations[1:]


def test_every_shipped_profile_names_its_example_entities():
    for name in available_profiles():
        assert len(example_names(load_profile(name))) >= 3, name
    assert {"Amara Osei", "Rosa Maretti", "Turin", "Lena Fischer"} <= shipped_example_names()


def test_types_outside_the_list_map_to_the_nearest_or_other_with_a_note():
    assert allowed_type("family member of scrooge's", DEFAULT_ENTITY_TYPES) == "person"
    assert allowed_type("organisation", DEFAULT_ENTITY_TYPES) == "organization"
    assert allowed_type("city", DEFAULT_ENTITY_TYPES) == "location"
    assert allowed_type("unknown", DEFAULT_ENTITY_TYPES) == "other"
    held, notes = hold_types([entity("Fred", "family"), entity("Marley", "person")], DEFAULT_ENTITY_TYPES)
    assert [e.type for e in held] == ["person", "person"]
    assert [(n.name, n.written, n.stored) for n in notes] == [("Fred", "family", "person")]


def test_the_run_verdict_speaks_only_when_most_chunks_gave_nothing():
    good = ChunkHealth(found=4, grounded=4, grounded_entities=3, reply_format="tuple")
    empty = ChunkHealth(found=0, reply_format="prose")
    assert verdict(totals([good, good, empty]), "lightrag") == ""
    message = verdict(totals([good, empty, empty]), "lightrag")
    assert message.startswith("2 of 3 chunks gave no entity") and "--profile typing" in message
    assert "larger model" in verdict(totals([good, empty, empty]), "typing")  # typing already: nothing smaller to try
    assert reply_format('{"entities": []}') == "json" and reply_format("Sure! Here it is.") == "prose"
    assert reply_format("entity<|#|>A<|#|>person<|#|>d") == "compact" and reply_format("  ") == "empty"
