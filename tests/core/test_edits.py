"""Graph edits as overrides: each one applies, survives re-deriving the graph, and undoes exactly."""

from __future__ import annotations

import pytest
from docatlas.core.graph import edits
from docatlas.core.graph.edits import EditError
from docatlas.core.graph.overrides import apply_overrides, list_overrides
from test_edits_helpers import (
    add_document,
    build_graph,
    entity,
    open_store,
    rebuild_with_overrides,
    relation,
    snapshot,
)

HARBOR, LTD = "harbor analytics", "harbor analytics ltd"


@pytest.fixture
def store(tmp_path):
    with open_store(tmp_path) as s:
        yield build_graph(s)


@pytest.mark.parametrize("keys", [None, {"maria lopez"}, {"maria lopez", "lisbon"}])
def test_rename_retype_describe_survive_a_rebuild_and_undo_exactly(store, keys):
    before = snapshot(store)
    ids = [edits.rename(store, "maria lopez", "María López"),
           edits.retype(store, "maria lopez", "Founder"),
           edits.describe(store, "maria lopez", "Hand-written.")]
    expected = {"name": "María López", "type": "founder", "description": "Hand-written."}
    assert {k: entity(store, "maria lopez")[k] for k in expected} == expected
    rebuild_with_overrides(store, keys)
    assert {k: entity(store, "maria lopez")[k] for k in expected} == expected
    for override in reversed(ids):
        edits.undo(store, override)
    assert snapshot(store) == before


def test_delete_hides_the_entity_and_its_relations_even_when_mentioned_again(store):
    before = snapshot(store)
    override = edits.delete(store, "northwind labs")
    assert entity(store, "northwind labs") is None
    assert relation(store, "northwind labs", "priya nair") is None
    touched = add_document(store, "more.txt", [("Northwind Labs grew.", [("Northwind Labs", "organization", "Grew.")],
                                                [("Northwind Labs", "Lisbon", "moved to", "It moved.")])])
    rebuild_with_overrides(store, touched)
    assert entity(store, "northwind labs") is None and relation(store, "northwind labs", "lisbon") is None
    store.delete_document(store.find_documents("more.txt")[0].id)
    rebuild_with_overrides(store, touched)
    edits.undo(store, override)
    assert snapshot(store) == before


def test_merge_repoints_relations_joins_descriptions_and_keeps_provenance(store):
    before = snapshot(store)
    record = edits.merge(store, [HARBOR, LTD], HARBOR)
    assert entity(store, LTD) is None
    merged = entity(store, HARBOR)
    assert merged["name"] == "Harbor Analytics" and merged["type"] == "organization"
    assert "Employer of Jonas Weber." in merged["description"] and "Sells sensors." in merged["description"]
    assert merged["mentions"] == 3
    assert relation(store, "jonas weber", HARBOR)["keywords"] == "works at"
    both = relation(store, "northwind labs", HARBOR)
    assert both["weight"] == 2.0 and both["mentions"] == 2 and set(both["keywords"].split(", ")) == {
        "customer", "supplier"}
    assert store.query("SELECT COUNT(*) AS n FROM relations WHERE source_key = ? OR target_key = ?",
                       (LTD, LTD))[0]["n"] == 0
    documents = store.query("SELECT DISTINCT c.document_id AS d FROM chunk_entities e JOIN chunks c "
                            "ON c.id = e.chunk_id WHERE e.key = ?", (HARBOR,))
    assert len(documents) == 2  # provenance: the records of both are filed under the survivor
    after = snapshot(store)
    apply_overrides(store)  # idempotent
    assert snapshot(store) == after
    edits.undo_merge(store, record)
    assert snapshot(store) == before


@pytest.mark.parametrize("keys", [None, {LTD}, {HARBOR}, {"jonas weber"}, {"northwind labs", "lisbon"}])
def test_a_merge_survives_any_rebuild_exactly(store, keys):
    edits.merge(store, [HARBOR, LTD], HARBOR, name="Harbor Analytics Group")
    after = snapshot(store)
    rebuild_with_overrides(store, keys)
    assert snapshot(store) == after
    assert entity(store, HARBOR)["name"] == "Harbor Analytics Group"


def test_a_new_mention_of_a_merged_away_name_joins_the_merged_entity(store):
    edits.merge(store, [HARBOR, LTD], HARBOR)
    touched = add_document(store, "ltd.txt", [("Harbor Analytics Ltd hired Tomas Berg.",
                                               [("Harbor Analytics Ltd", "organization", "Hired Tomas.")],
                                               [("Harbor Analytics Ltd", "Tomas Berg", "hired", "It hired him.")])])
    rebuild_with_overrides(store, touched)
    assert entity(store, LTD) is None
    assert "Hired Tomas." in entity(store, HARBOR)["description"]
    assert relation(store, HARBOR, "tomas berg")["keywords"] == "hired"


def test_merges_chain_and_undo_in_reverse(store):
    before = snapshot(store)
    first = edits.merge(store, [HARBOR, LTD], HARBOR)
    middle = snapshot(store)
    second = edits.merge(store, ["northwind labs", HARBOR], "northwind labs", name="Northwind Group")
    assert entity(store, HARBOR) is None and entity(store, LTD) is None
    assert relation(store, "northwind labs", "jonas weber") is not None
    assert relation(store, "northwind labs", "lisbon") is not None
    rebuild_with_overrides(store)
    assert entity(store, "northwind labs")["name"] == "Northwind Group"
    edits.undo_merge(store, second)
    assert snapshot(store) == middle
    edits.undo_merge(store, first)
    assert snapshot(store) == before


def test_an_edited_description_is_kept_when_merging(store):
    edits.describe(store, LTD, "Edited by hand.")
    before = snapshot(store)
    record = edits.merge(store, [HARBOR, LTD], HARBOR)
    description = entity(store, HARBOR)["description"]
    assert "Edited by hand." in description and "Sells sensors." in description
    rebuild_with_overrides(store)
    assert entity(store, HARBOR)["description"] == description
    edits.undo_merge(store, record)
    assert snapshot(store) == before


def test_delete_relation_survives_and_undoes(store):
    before = snapshot(store)
    override = edits.delete_relation(store, "tomas berg", "northwind labs")
    assert relation(store, "tomas berg", "northwind labs") is None
    rebuild_with_overrides(store)
    assert relation(store, "tomas berg", "northwind labs") is None
    edits.undo(store, override)
    assert snapshot(store) == before


def test_edits_that_cannot_be_made_say_why(store):
    with pytest.raises(EditError, match="at least two"):
        edits.merge(store, [HARBOR], HARBOR)
    with pytest.raises(EditError, match="no longer"):
        edits.merge(store, [HARBOR, "nobody"], HARBOR)
    with pytest.raises(EditError, match="no longer"):
        edits.rename(store, "nobody", "X")
    with pytest.raises(EditError, match="empty"):
        edits.rename(store, HARBOR, "  ")
    assert list_overrides(store) == []


def test_redo_puts_an_edit_back_in_its_place(store):
    first = edits.rename(store, "lisbon", "Lisboa")
    second = edits.rename(store, "lisbon", "Lisbon City")
    edits.undo(store, second)
    edits.undo(store, first)
    assert entity(store, "lisbon")["name"] == "Lisbon"
    edits.edit(store, "rename", "lisbon", {"name": "Lisboa"}, override_id=first)
    edits.edit(store, "rename", "lisbon", {"name": "Lisbon City"}, override_id=second)
    rebuild_with_overrides(store)
    assert entity(store, "lisbon")["name"] == "Lisbon City"


def test_an_accepted_suggestion_undoes_to_open_and_a_rejected_one_too(store):
    from docatlas.core.graph.suggest import list_suggestions, suggest_merges

    before = snapshot(store)
    found = next(s for s in suggest_merges(store) if {s.a_key, s.b_key} == {HARBOR, LTD})
    record = edits.accept_suggestion(store, found.id, keep=HARBOR)
    assert record.target == HARBOR and entity(store, LTD) is None
    assert found.id not in [s.id for s in list_suggestions(store)]
    rebuild_with_overrides(store)
    assert entity(store, LTD) is None
    edits.undo_merge(store, record)
    assert snapshot(store) == before
    assert found.id in [s.id for s in list_suggestions(store)]
    rejected = edits.reject_suggestion(store, found.id)
    assert found.id not in [s.id for s in list_suggestions(store)]
    edits.undo_merge(store, rejected)
    assert found.id in [s.id for s in list_suggestions(store)]
