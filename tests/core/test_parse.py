"""Tests for the reply parser: the project's own cases, then the shared corpus."""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path

import pytest
from docatlas.core.base.records import EntityRecord, ParseResult, RelationRecord
from docatlas.core.ingest.parse import parse_reply
from docatlas.core.ingest.repair import (
    clean_text,
    is_junk_name,
    load_json_object,
    load_json_values,
    word_count,
)

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
needs_corpus = pytest.mark.skipif(
    not CORPUS.is_dir(), reason=f"shared corpus not found at {CORPUS} (it lives beside the checkout)"
)


def _load_counts():
    spec = importlib.util.spec_from_file_location(
        "corpus_counts", Path(__file__).with_name("corpus_counts.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


COUNTS = _load_counts()


def names(result: ParseResult) -> list[str]:
    return [e.name for e in result.entities]


def pairs(result: ParseResult) -> list[tuple[str, str]]:
    return [(r.source, r.target) for r in result.relations]


def one_entity(text: str, **kw) -> EntityRecord:
    result = parse_reply(text, **kw)
    assert len(result.entities) == 1, result
    return result.entities[0]


def one_relation(text: str, **kw) -> RelationRecord:
    result = parse_reply(text, **kw)
    assert len(result.relations) == 1, result
    return result.relations[0]


# ============================================================================ the four formats

LIGHTRAG = (
    '("entity"<|>"Alice"<|>"person"<|>"Alice is an engineer at Acme.")##\n'
    '("entity"<|>"Acme"<|>"organization"<|>"Acme builds rockets.")##\n'
    '("relationship"<|>"Alice"<|>"Acme"<|>"Alice works at Acme as an engineer."'
    '<|>"employment, engineering"<|>8)##\n'
    '("content_keywords"<|>"rockets, employment")<|COMPLETE|>'
)
GRAPHRAG = (
    '("entity"<|>ALICE<|>PERSON<|>Alice is an engineer at Acme)\n##\n'
    '("entity"<|>ACME<|>ORGANIZATION<|>Acme builds rockets)\n##\n'
    '("relationship"<|>ALICE<|>ACME<|>Alice works at Acme<|>7)\n<|COMPLETE|>'
)
COMPACT = (
    "entity<|#|>Alice<|#|>person<|#|>Alice is an engineer at Acme.\n"
    "entity<|#|>Acme<|#|>organization<|#|>Acme builds rockets.\n"
    "relation<|#|>Alice<|#|>Acme<|#|>employment, engineering<|#|>Alice works at Acme.\n"
    "<|COMPLETE|>"
)
JSON_REPLY = json.dumps(
    {
        "entities": [
            {"name": "Alice", "type": "person", "description": "An engineer.", "confidence": 0.9},
            {"name": "Acme", "type": "organization", "description": "Builds rockets."},
        ],
        "relationships": [
            {
                "source": "Alice",
                "target": "Acme",
                "keywords": "employment",
                "description": "Alice works at Acme.",
                "strength": 8,
            }
        ],
    }
)


def test_lightrag_tuples():
    r = parse_reply(LIGHTRAG)
    assert names(r) == ["Alice", "Acme"]
    assert r.entities[0] == EntityRecord("Alice", "person", "Alice is an engineer at Acme.")
    rel = r.relations[0]
    assert (rel.keywords, rel.description, rel.strength) == (
        "employment, engineering",
        "Alice works at Acme as an engineer.",
        8.0,
    )
    assert r.content_keywords == ["rockets", "employment"]
    assert r.status == "ok" and r.completed


def test_graphrag_tuples():
    r = parse_reply(GRAPHRAG)
    assert names(r) == ["ALICE", "ACME"]
    assert [e.type for e in r.entities] == ["person", "organization"]
    rel = r.relations[0]
    assert (rel.source, rel.target, rel.description, rel.keywords, rel.strength) == (
        "ALICE", "ACME", "Alice works at Acme", "", 7.0,
    )
    assert r.completed


def test_compact_lines_keywords_before_description():
    r = parse_reply(COMPACT)
    assert names(r) == ["Alice", "Acme"]
    rel = r.relations[0]
    assert rel.keywords == "employment, engineering"
    assert rel.description == "Alice works at Acme."
    assert rel.strength is None
    assert r.completed


def test_lean_lines_carry_no_description_and_a_relations_last_field_is_its_keywords():
    r = parse_reply("entity<|#|>Alice Moreau<|#|>person\nentity<|#|>Acme Labs<|#|>organization\n"
                    "relation<|#|>Alice Moreau<|#|>Acme Labs<|#|>works for\n<|COMPLETE|>")
    assert [(e.name, e.type, e.description) for e in r.entities] == [
        ("Alice Moreau", "person", ""), ("Acme Labs", "organization", "")]
    rel = r.relations[0]
    assert (rel.source, rel.target, rel.keywords, rel.description) == ("Alice Moreau", "Acme Labs", "works for", "")
    # a compact relation whose one text field is a sentence keeps it as the description
    said = parse_reply("relation<|#|>Alice Moreau<|#|>Acme Labs<|#|>Alice Moreau works for Acme Labs.\n<|COMPLETE|>")
    assert (said.relations[0].keywords, said.relations[0].description) == ("", "Alice Moreau works for Acme Labs.")
    assert r.completed


def test_json_reply():
    r = parse_reply(JSON_REPLY)
    assert names(r) == ["Alice", "Acme"]
    assert r.entities[0].confidence == 0.9
    rel = r.relations[0]
    assert (rel.keywords, rel.description, rel.strength) == (
        "employment", "Alice works at Acme.", 8.0,
    )
    assert r.status == "ok" and not r.completed


@pytest.mark.parametrize(
    "reply",
    [
        ('{"entities":[{"entity_name":"Alice","entity_type":"PERSON","entity_description":"x."}],'
        '"relations":[{"source_entity":"Alice","target_entity":"Bob","relationship_type":"knows",'
        '"relationship_description":"They met.","relationship_strength":"6"}]}'),
        ('{"entities":[{"name":"Alice","type":"person","description":"x."}],'
        '"edges":[{"source":"Alice","target":"Bob","type":"knows","description":"They met.",'
        '"weight":6}]}'),
        ('{"entities":[{"name":"Alice","type":"person","description":"x."}],'
        '"relationships":[{"source":"Alice","target":"Bob","keywords":["knows"],'
        '"description":"They met.","strength":6.0}]}'),
    ],
)
def test_json_key_spellings(reply):
    r = parse_reply(reply)
    assert r.entities == [EntityRecord("Alice", "person", "x.")]
    assert r.relations == [RelationRecord("Alice", "Bob", "knows", "They met.", 6.0)]


# ============================================================================ think blocks


@pytest.mark.parametrize(
    "reply",
    [
        ("<think>Format: entity<|#|>entity_name<|#|>entity_type<|#|>desc\n"
        "entity<|#|>Ghost<|#|>person<|#|>Only thought about.</think>\n"
        "entity<|#|>Alice<|#|>person<|#|>An engineer.\n<|COMPLETE|>"),
        ('<think>\n("entity"<|>"Ghost"<|>"person"<|>"x.")\n</think>\n'
        '("entity"<|>"Alice"<|>"person"<|>"An engineer.")<|COMPLETE|>'),
        # chat template swallowed the opening tag: only the closing one is left
        "entity<|#|>Ghost<|#|>person<|#|>x.\n</think>\nentity<|#|>Alice<|#|>person<|#|>An engineer.",
        "<THINK>entity<|#|>Ghost<|#|>person<|#|>x.</THINK>entity<|#|>Alice<|#|>person<|#|>An engineer.",
    ],
)
def test_think_blocks_never_yield_records(reply):
    assert names(parse_reply(reply)) == ["Alice"]


def test_unclosed_think_drops_everything_after_it():
    reply = (
        "entity<|#|>Alice<|#|>person<|#|>An engineer.\n<think>\n"
        "entity<|#|>Ghost<|#|>person<|#|>still thinking...\n\n"
        "entity<|#|>Bob<|#|>person<|#|>A manager.\n<|COMPLETE|>"
    )
    r = parse_reply(reply)
    assert names(r) == ["Alice"]
    assert not r.completed


def test_think_only_reply_is_empty():
    r = parse_reply("<think>The user wants entities. entity<|#|>X<|#|>person<|#|>y.")
    assert r.status == "empty" and r.record_count == 0


# ============================================================================ markdown


@pytest.mark.parametrize(
    "reply",
    [
        "```text\nentity<|#|>Alice<|#|>person<|#|>An engineer.\n```",
        "```\n(\"entity\"<|>\"Alice\"<|>\"person\"<|>\"An engineer.\")\n```\nDone!",
        "## Entities\n\nentity<|#|>Alice<|#|>person<|#|>An engineer.\n\n## Notes\nThat is all.",
        '1. ("entity"<|>"Alice"<|>"person"<|>"An engineer.")',
        "- entity<|#|>Alice<|#|>person<|#|>An engineer.",
        "* entity<|#|>Alice<|#|>person<|#|>An engineer.",
        "**entity**<|#|>**Alice**<|#|>person<|#|>An engineer.",
        ("Sure! Here are the entities I found:\n\nentity<|#|>Alice<|#|>person<|#|>An engineer.\n\n"
        "Note: I skipped dates."),
        "**Entities:**\n\n##(\"entity\"<|>\"Alice\"<|>\"person\"<|>\"An engineer.\")##\n\n**##**",
    ],
)
def test_markdown_wrapping(reply):
    e = one_entity(reply)
    assert (e.name, e.type, e.description) == ("Alice", "person", "An engineer.")


def test_numbered_lists_without_record_delimiter():
    reply = (
        "**Entities:**\n\n"
        '1. ("entity"<|>"Alice"<|>"person"<|>"An engineer.")\n'
        '2. ("entity"<|>"Bob"<|>"person"<|>"A manager.")\n\n'
        "**Relationships:**\n\n"
        '1. ("relationship"<|>"Alice"<|>"Bob"<|>"Alice reports to Bob."<|>7)\n'
    )
    r = parse_reply(reply)
    assert names(r) == ["Alice", "Bob"]
    assert pairs(r) == [("Alice", "Bob")]
    assert r.relations[0].strength == 7.0


# ============================================================================ quotes, brackets


@pytest.mark.parametrize(
    "reply, name, description",
    [
        ("(“entity”<|>“Alice”<|>“person”<|>“An engineer.”)", "Alice", "An engineer."),
        ('(""entity""<|>""Alice""<|>""person""<|>""An engineer.""))', "Alice", "An engineer."),
        ('("entity"<|>"Alice<|>"person<|>"An engineer.)', "Alice", "An engineer."),
        ('("entity"<|>Alice<|>person<|>An engineer.)', "Alice", "An engineer."),
        ("(entity<|>'Alice'<|>'person'<|>'An engineer.')", "Alice", "An engineer."),
        ('(("entity"<|>"[Alice"<|>"person"<|>"An engineer."', "Alice", "An engineer."),
        ('("entity"<|>"Internal Revenue Service (IRS)"<|>"organization"<|>"Tax agency.")',
         "Internal Revenue Service (IRS)", "Tax agency."),
        ('("entity"<|>"  Alice \t  Smith "<|>"person"<|>"An   engineer.")',
         "Alice Smith", "An engineer."),
        ('("entity"<|>"Scrooge\'s Nephew"<|>"person"<|>"Fred.")', "Scrooge's Nephew", "Fred."),
    ],
)
def test_quotes_and_brackets(reply, name, description):
    e = one_entity(reply)
    assert (e.name, e.description) == (name, description)


@pytest.mark.parametrize(
    "raw, clean",
    [
        ('"Alice"', "Alice"),
        ('""Alice""', "Alice"),
        ("“Alice”", "Alice"),
        ("**Alice**", "Alice"),
        ("`Alice`", "Alice"),
        ("(Alice", "Alice"),
        ("Alice)", "Alice"),
        ("[Alice]", "[Alice]"),
        ("'Alice'", "Alice"),
        ("Alice's", "Alice's"),
        ("  a \n b  ", "a b"),
        ("A\x00l\x08ice", "Alice"),
        ("Scrooge\\'s nephew", "Scrooge's nephew"),
        ('\\"Alice\\"', "Alice"),
    ],
)
def test_clean_text(raw, clean):
    assert clean_text(raw) == clean


# ============================================================================ delimiters


@pytest.mark.parametrize(
    "delimiter", ["<|#|>", "<|##|>", "<|#|", "|#|>", "<||#>", "<|>", "{tuple_delimiter}"]
)
def test_corrupted_tuple_delimiters(delimiter):
    reply = (
        f"entity{delimiter}Alice{delimiter}person{delimiter}An engineer.\n"
        f"relation{delimiter}Alice{delimiter}Bob{delimiter}reports to{delimiter}"
        "Alice reports to Bob.\n<|COMPLETE|>"
    )
    r = parse_reply(reply)
    assert r.entities == [EntityRecord("Alice", "person", "An engineer.")]
    assert r.relations == [RelationRecord("Alice", "Bob", "reports to", "Alice reports to Bob.")]


def test_mixed_delimiters_within_a_record():
    e = one_entity("entity<|#|>Alice<|>person<|#|>An engineer.")
    assert (e.name, e.type, e.description) == ("Alice", "person", "An engineer.")


def test_bare_pipe_when_no_other_delimiter():
    r = parse_reply(
        "entity|Alice|person|An engineer.\nrelation|Alice|Bob|reports to|Alice reports to Bob."
    )
    assert names(r) == ["Alice"]
    assert r.relations[0].keywords == "reports to"


def test_bare_pipe_table_rows_are_not_records():
    r = parse_reply("| Name | Type |\n|---|---|\n| Alice | person |")
    assert r.record_count == 0


def test_doubled_tuple_delimiter():
    e = one_entity('("entity"<|><|>"Alice"<|>"person"<|><|>"An engineer.")')
    assert (e.name, e.type, e.description) == ("Alice", "person", "An engineer.")


@pytest.mark.parametrize(
    "strength_delimiter", ['"|>', '"</|>', '" <|>', '"<||>']
)
def test_corrupted_delimiter_before_strength(strength_delimiter):
    rel = one_relation(f'("relationship"<|>"A"<|>"B"<|>"A helps B.{strength_delimiter}9)')
    assert (rel.description, rel.strength) == ("A helps B.", 9.0)


@pytest.mark.parametrize(
    "reply",
    [
        '("entity"<|>"Alice"<|>"person"<|>"An engineer.")\n("entity"<|>"Bob"<|>"person"<|>"A manager.")',
        '("entity"<|>"Alice"<|>"person"<|>"An engineer.")##("entity"<|>"Bob"<|>"person"<|>"A manager.")',
        '("entity"<|>"Alice"<|>"person"<|>"An engineer.") ("entity"<|>"Bob"<|>"person"<|>"A manager.")',
        '("entity"<|>"Alice"<|>"person"<|>"An engineer.")("entity"<|>"Bob"<|>"person"<|>"A manager.")',
        "entity<|#|>Alice<|#|>person<|#|>An engineer.entity<|#|>Bob<|#|>person<|#|>A manager.",
        "entity<|#|>Alice<|#|>person<|#|>An engineer.<|#|>entity<|#|>Bob<|#|>person<|#|>A manager.",
        ("(entity{tuple_delimiter}Alice{tuple_delimiter}person{tuple_delimiter}An engineer.)"
        "{record_delimiter}(entity{tuple_delimiter}Bob{tuple_delimiter}person{tuple_delimiter}"
        "A manager.){completion_delimiter}"),
    ],
)
def test_record_separation(reply):
    r = parse_reply(reply)
    assert names(r) == ["Alice", "Bob"]
    assert [e.description for e in r.entities] == ["An engineer.", "A manager."]


@pytest.mark.parametrize(
    "marker, completed",
    [
        ("<|COMPLETE|>", True),
        ("<|complete|>", True),
        ("<|COMPLETE|", True),
        ("|COMPLETE|>", True),
        ("<COMPLETE>", True),
        ("{completion_delimiter}", True),
        ("", False),
    ],
)
def test_completion_marker(marker, completed):
    r = parse_reply(f'("entity"<|>"Alice"<|>"person"<|>"An engineer."){marker}')
    assert names(r) == ["Alice"]
    assert r.completed is completed


@pytest.mark.parametrize(
    "reply",
    [
        '("entity"<|>"Alice"<|>"person"<|>"An engineer\nwho builds rockets.")',
        "(“entity”<|>“Alice”<|>“person”<|>“An engineer\nwho builds rockets.”)",
        '("entity"<|>"Alice"<|>"person"<|>"An engineer\nwho builds\nrockets.")##',
    ],
)
def test_multiline_quoted_description_is_joined(reply):
    assert one_entity(reply).description == "An engineer who builds rockets."


def test_prose_after_blank_line_never_joins_a_cut_record():
    r = parse_reply(
        '("entity"<|>"Alice"<|>"person"<|>"An engineer.")##\n'
        '("entity"<|>"Bob"<|>"person"<|>"A manager who\n\nNote: the output was cut short.'
    )
    assert names(r) == ["Alice"]


# ============================================================================ tags and fields


@pytest.mark.parametrize(
    "reply, name, etype",
    [
        ('("organization"<|>"Acme"<|>"organization"<|>"A company.")', "Acme", "organization"),
        ('("event"<|>"Launch"<|>"event"<|>"The rocket launch.")', "Launch", "event"),
        ('("Entity"<|>"Acme"<|>"ORGANIZATION"<|>"A company.")', "Acme", "organization"),
        ('("person"<|>"Alice"<|>"An engineer at Acme.")', "Alice", "person"),
        ('("entity"<|>"Acme"<|>""<|>"A company.")', "Acme", "unknown"),
        ('("entity"<|>"Acme"<|>"Organization, Company"<|>"A company.")', "Acme", "organization"),
    ],
)
def test_entity_tags_and_types(reply, name, etype):
    e = one_entity(reply)
    assert (e.name, e.type) == (name, etype)


@pytest.mark.parametrize("tag", ["relationship", "relation", "Relation", "RELATIONSHIP", "edge"])
def test_relation_tag_spellings(tag):
    rel = one_relation(f'("{tag}"<|>"Alice"<|>"Bob"<|>"Alice reports to Bob."<|>6)')
    assert (rel.source, rel.target, rel.strength) == ("Alice", "Bob", 6.0)


def test_relation_mislabelled_as_entity():
    r = parse_reply(
        "entity<|#|>Alice<|#|>person<|#|>An engineer.\n"
        "entity<|#|>Alice<|#|>Bob<|#|>works with<|#|>Alice works with Bob.\n"
    )
    assert names(r) == ["Alice"]
    assert r.relations == [RelationRecord("Alice", "Bob", "works with", "Alice works with Bob.")]


@pytest.mark.parametrize(
    "reply, etype",
    [
        ('("entity"<|>"Alice"<|>"Scientist"<|>"Alice is a scientist."<|>0.9)', "scientist"),
        ('("entity"<|>"Alice"<|>"PERSON"<|>"engineer"<|>"Alice is an engineer.")', "person"),
        ('("entity"<|>"Alice"<|>"person"<|>"engineer"<|>"Alice is an engineer.")', "person"),
    ],
)
def test_entity_rows_with_extra_fields_stay_entities(reply, etype):
    r = parse_reply(reply)
    assert r.relations == [] and [(e.name, e.type) for e in r.entities] == [("Alice", etype)]


def test_entity_confidence_from_trailing_number():
    e = one_entity('("entity"<|>"Alice"<|>"person"<|>"An engineer."<|>0.9)')
    assert (e.description, e.confidence) == ("An engineer.", 0.9)


@pytest.mark.parametrize("name", ["person", "Organization", "EVENT"])
def test_entity_named_after_its_type_is_dropped(name):
    reply = f'("entity"<|>"{name}"<|>"{name}"<|>"A thing.")'
    assert parse_reply(reply).entities == []


def test_five_field_entity_with_type_slot_stays_entity():
    e = one_entity('("entity"<|>"Premium"<|>"number"<|>"5220000.0"<|>"The total cost.")')
    assert (e.name, e.type) == ("Premium", "number")
    assert "The total cost." in e.description and "5220000.0" in e.description


@pytest.mark.parametrize(
    "reply, keywords, description, strength",
    [
        # graphrag: 4 fields, numeric last = strength
        ('("relationship"<|>"A"<|>"B"<|>"A funds B."<|>7)', "", "A funds B.", 7.0),
        # lightrag classic: 6 fields
        ('("relationship"<|>"A"<|>"B"<|>"A funds B."<|>"funding, money"<|>0.8)',
         "funding, money", "A funds B.", 0.8),
        # 3 fields: description only
        ('("relationship"<|>"A"<|>"B"<|>"A funds B.")', "", "A funds B.", None),
        # lightrag classic without strength
        ('("relationship"<|>"A"<|>"B"<|>"A funds B."<|>"funding")', "funding", "A funds B.", None),
        # swapped by the model: keywords first in a tuple -> the sentence is the description
        ('("relationship"<|>"A"<|>"B"<|>"funding"<|>"A funds B every year."<|>5)',
         "funding", "A funds B every year.", 5.0),
        # compact swapped: description first
        ("relation<|#|>A<|#|>B<|#|>A funds B every year.<|#|>funding", "funding",
         "A funds B every year.", None),
        # compact with an extra strength field
        ("relation<|#|>A<|#|>B<|#|>funding<|#|>A funds B.<|#|>9", "funding", "A funds B.", 9.0),
        # strength clamps to [0, 10]
        ('("relationship"<|>"A"<|>"B"<|>"A funds B."<|>15)', "", "A funds B.", 10.0),
        # a year is no strength
        ('("relationship"<|>"A"<|>"B"<|>"A founded B."<|>1998)', "1998", "A founded B.", None),
        # a numeric description never becomes a weight
        ('("relationship"<|>"A"<|>"B"<|>"1000")', "", "1000", None),
        ("relation<|#|>A<|#|>B<|#|>knows<|#|>12", "knows", "12", None),
        ("relation<|#|>A<|#|>B<|#|>knows<|#|>-1.5", "knows", "-1.5", None),
    ],
)
def test_relation_fields(reply, keywords, description, strength):
    rel = one_relation(reply)
    assert (rel.keywords, rel.description, rel.strength) == (keywords, description, strength)


# ============================================================================ truncation


def test_truncated_last_tuple_record_is_dropped():
    r = parse_reply(
        '("entity"<|>"Alice"<|>"person"<|>"An engineer.")##\n'
        '("entity"<|>"Bob"<|>"person"<|>"A manager who'
    )
    assert names(r) == ["Alice"]
    assert not r.completed


def test_truncated_relation_missing_fields_is_dropped():
    r = parse_reply(
        '("entity"<|>"Alice"<|>"person"<|>"An engineer.")##\n("relationship"<|>"Alice"<|>"Bo'
    )
    assert names(r) == ["Alice"] and r.relations == []


def test_last_record_without_paren_but_complete_sentence_is_kept():
    r = parse_reply(
        '("entity"<|>"Alice"<|>"person"<|>"An engineer.")##\n'
        '("entity"<|>"Bob"<|>"person"<|>"A manager."'
    )
    assert names(r) == ["Alice", "Bob"]


def test_last_relation_without_paren_ending_in_strength_is_kept():
    r = parse_reply('("relationship"<|>"A"<|>"B"<|>"A funds B."<|>8')
    assert r.relations[0].strength == 8.0


def test_missing_paren_mid_reply_is_not_truncation():
    r = parse_reply(
        '("entity"<|>"Alice"<|>"person"<|>"An engineer\n("entity"<|>"Bob"<|>"person"<|>"A manager.")'
    )
    assert names(r) == ["Alice", "Bob"]


def test_compact_cut_line_is_dropped_but_full_line_kept():
    r = parse_reply(
        "entity<|#|>Alice<|#|>person<|#|>An engineer.\nentity<|#|>Bob<|#|>pers"
    )
    assert names(r) == ["Alice"]
    r = parse_reply("entity<|#|>Alice<|#|>person<|#|>An engineer\nrelation<|#|>Alice<|#|>Bob<|#|>kn")
    assert names(r) == ["Alice"] and r.relations == []


def test_truncated_json_keeps_complete_objects():
    r = parse_reply(
        '```json\n{"entities": [{"name": "Alice", "type": "person", "description": "An engineer."},'
        ' {"name": "Bob", "type": "person", "description": "A man'
    )
    assert names(r) == ["Alice"]


def test_truncated_json_between_lists():
    r = parse_reply(
        '{"entities": [{"name": "Alice", "type": "person", "description": "x."}, '
        '{"name": "Bob", "type": "person", "description": "y."}], "relationships": [{"source": '
        '"Alice", "target": "Bob", "description": "z."}, {"source": "Bob", "targ'
    )
    assert names(r) == ["Alice", "Bob"]
    assert pairs(r) == [("Alice", "Bob")]


# ============================================================================ refusal / empty


@pytest.mark.parametrize(
    "reply",
    [
        "I'm sorry, I can't help with that request.",
        "I’m sorry, but I cannot extract entities from this document.",
        "As an AI language model, I do not have access to the document.",
        "I am unable to process this text.",
        "Please provide the text document and list of entity types for me to analyze.",
    ],
)
def test_refusals(reply):
    r = parse_reply(reply)
    assert r.status == "refusal" and r.record_count == 0


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "   \n\n ",
        "Here is a summary: the text is about a man named Scrooge who dislikes Christmas.",
        "**Person**\n\n* Ebenezer Scrooge\n* Fred (Scrooge's nephew)",
        "<|COMPLETE|>",
    ],
)
def test_prose_only_is_empty(reply):
    r = parse_reply(reply)
    assert r.status == "empty" and r.record_count == 0


# ============================================================================ junk


@pytest.mark.parametrize(
    "name",
    [
        "entity_name", "<entity_name>", "ENTITY_NAME", "entity_type", "source_entity", "NAME",
        "TYPE", "DESCRIPTION", "N/A", "none", "None", "unknown", "...", "…", "",
        "Alice<|>Bob", "Alice <| Bob", 'Al"ice', "# Heading", "Entities:",
        "this is clearly a whole sentence that someone wrote instead of a short name here",
        "The company was founded by three engineers in 1998.",
        "x" * 121, "__proto__", "constructor", "prototype",
        "討論室須4人以上才可預約；團體視聽室須3人以上才可預約。",
    ],
)
def test_junk_names(name):
    assert is_junk_name(name)
    assert parse_reply(f'("entity"<|>"{name}"<|>"person"<|>"Something.")').entities == []


@pytest.mark.parametrize(
    "name",
    [
        "Alice", "X", "Acme Corp.", "U.S. copyright law", "Internal Revenue Service (IRS)",
        "A red-faced gentleman with a pendulous excrescence on his nose", "Constructor",
        "圖書館2樓櫃台及5樓櫃台", "1個月內無法使用空間座位預約管理系統", "Section 4: Information",
        "Project Gutenberg™", "x" * 120,
    ],
)
def test_real_names_are_kept(name):
    assert not is_junk_name(name)


def test_template_echo_yields_nothing():
    reply = (
        '("entity"<|><entity_name><|><entity_type><|><entity_description>)##\n'
        '("relationship"<|><source_entity><|><target_entity><|><relationship_description>'
        "<|><relationship_strength>)<|COMPLETE|>"
    )
    r = parse_reply(reply)
    assert r.record_count == 0 and r.status == "empty"


@pytest.mark.parametrize("etype", ["__proto__", "constructor", "prototype", "Constructor"])
def test_reserved_type_drops_entity(etype):
    assert parse_reply(f"entity<|#|>GLOBEX LTD<|#|>{etype}<|#|>Supplies equipment.").entities == []


@pytest.mark.parametrize(
    "source, target",
    [("Alice", "N/A"), ("entity_name", "Bob"), ("Alice", "alice"), ("Alice ", " ALICE"),
     ("Alice", "__proto__"), ("Alice", "")],
)
def test_relations_with_junk_endpoints_or_self_loops_are_dropped(source, target):
    assert parse_reply(f'("relationship"<|>"{source}"<|>"{target}"<|>"x."<|>5)').relations == []


def test_relation_to_type_name_is_dropped():
    reply = (
        '("entity"<|>"Launch"<|>"event"<|>"x.")##\n'
        '("relationship"<|>"Web booking"<|>"event"<|>"A kind of booking.")##\n'
        '("relationship"<|>"Acme"<|>"company"<|>"Acme is a company.")##\n'
        '("relationship"<|>"Acme"<|>"Launch"<|>"Acme runs the launch.")'
    )
    assert pairs(parse_reply(reply)) == [("Acme", "company"), ("Acme", "Launch")]
    assert pairs(parse_reply(reply, entity_types=["company", "event"])) == [("Acme", "Launch")]


def test_type_name_that_is_a_declared_entity_stays():
    reply = (
        '("entity"<|>"Event"<|>"concept"<|>"The Event, a festival.")##\n'
        '("relationship"<|>"Alice"<|>"Event"<|>"Alice runs the Event.")'
    )
    assert pairs(parse_reply(reply)) == [("Alice", "Event")]


def test_duplicates():
    reply = (
        '("entity"<|>"Alice"<|>"person"<|>"An engineer.")##\n'
        '("entity"<|>"Alice"<|>"person"<|>"An engineer.")##\n'
        '("entity"<|>"alice"<|>"person"<|>"Likes rockets.")##\n'
        '("entity"<|>"Alice"<|>"person"<|>"An\x08 engineer.")##\n'
        '("relationship"<|>"Alice"<|>"Bob"<|>"x."<|>5)##\n'
        '("relationship"<|>"Alice"<|>"Bob"<|>"x."<|>5)'
    )
    r = parse_reply(reply)
    assert [(e.name, e.description) for e in r.entities] == [
        ("Alice", "An engineer."),
        ("alice", "Likes rockets."),
    ]
    assert len(r.relations) == 1


def test_description_is_kept_as_written():
    e = one_entity('("entity"<|>"Alice"<|>"PERSON"<|>"  Alice LOVES <b>rockets</b>; see Fig. 3  ")')
    assert e.type == "person"
    assert e.description == "Alice LOVES <b>rockets</b>; see Fig. 3"


def test_na_description_becomes_empty():
    e = one_entity('("entity"<|>"Formosa Plastics Group"<|>"organization"<|>N/A)')
    assert (e.name, e.description) == ("Formosa Plastics Group", "")


# ============================================================================ JSON damage


@pytest.mark.parametrize(
    "reply",
    [
        ('Here you go:\n```json\n{"entities": [{"name": "Alice", "type": "person", '
        '"description": "An engineer."}]}\n```\nLet me know!'),
        '{"entities": [{"name": "Alice", "type": "person", "description": "An engineer.",},],}',
        '{entities: [{name: "Alice", type: "person", description: "An engineer."}]}',
        "{'entities': [{'name': 'Alice', 'type': 'person', 'description': 'An engineer.'}]}",
        ('{\n  // the people\n  "entities": [ /* one */ {"name": "Alice", "type": "person",'
        ' "description": "An engineer."}]\n}'),
        ('{"entities": [{"name": "Alice", "type": "person", "description": "An engineer.", '
        '"confidence": None, "verified": True}]}'),
        '{“entities”: [{“name”: “Alice”, “type”: “person”, “description”: “An engineer.”}]}',
        '{"entities": [{"name": "Alice" "type": "person" "description": "An engineer."}]}',
        '[{"name": "Alice", "type": "person", "description": "An engineer."}]',
    ],
)
def test_damaged_json(reply):
    e = one_entity(reply)
    assert (e.name, e.type, e.description) == ("Alice", "person", "An engineer.")


def test_json_unescaped_inner_quotes():
    e = one_entity(
        '{"entities": [{"name": "Alice", "type": "person", "description": "Known as "Al" at work."}]}'
    )
    assert e.description == 'Known as "Al" at work.'


def test_several_json_objects():
    r = parse_reply(
        '{"entities": [{"name": "Alice", "type": "person", "description": "x."}]}\n'
        "And the relations:\n"
        '{"relationships": [{"source": "Alice", "target": "Bob", "description": "y."}]}'
    )
    assert names(r) == ["Alice"] and pairs(r) == [("Alice", "Bob")]


def test_json_junk_and_content_keywords():
    r = parse_reply(
        '{"entities": [{"name": "entity_name", "type": "entity_type"}, {"name": "# Heading"},'
        ' {"name": "Alice", "type": "", "description": "x."}], "relationships": [{"source": '
        '"Alice", "target": "person", "description": "y."}], "content_keywords": ["a", "b"]}'
    )
    assert r.entities == [EntityRecord("Alice", "unknown", "x.")]
    assert r.relations == [] and r.content_keywords == ["a", "b"]


def test_json_strength_and_confidence_clamp():
    r = parse_reply(
        '{"entities": [{"name": "A", "type": "t", "description": "x.", "confidence": 3}],'
        ' "relationships": [{"source": "A", "target": "B", "description": "y.", "weight": 42}]}'
    )
    assert r.entities[0].confidence == 1.0 and r.relations[0].strength == 10.0


@pytest.mark.parametrize(
    "text, expected",
    [
        ("analysis: [draft] {name:\"x\", type:\"Chart\", description:\"ok\",}",
         {"name": "x", "type": "Chart", "description": "ok"}),
        ('{"facts":[{"text":"ok"}]} trailing {brace}', {"facts": [{"text": "ok"}]}),
        ("no json here", None),
        ("{'a': True, 'b': None, 'c': 1.5, # note\n 'd': [1, 2,]}",
         {"a": True, "b": None, "c": 1.5, "d": [1, 2]}),
    ],
)
def test_load_json_object(text, expected):
    assert load_json_object(text) == expected


def test_load_json_values_reports_cut():
    values = load_json_values('{"a": [1, 2], "b": {"c": "unfinish')
    assert len(values) == 1 and values[0][1] is False and values[0][0]["a"] == [1, 2]


# ============================================================================ robustness


@pytest.mark.parametrize(
    "reply",
    [
        "(((((", ")))))", "<|><|><|>", "<|#|><|#|>", "##########", "{{{{", "[[[[" * 50,
        "{" * 500, '{"a": ' * 300, "entity<|#|>", "(\"entity\"<|>", "|||", '"""', "\x00\x01",
        "entity<|#|>A<|#|>" * 100, "<think>", "</think>", "```", "```json\n{",
    ],
)
def test_never_raises(reply):
    result = parse_reply(reply)
    assert result.status in {"ok", "empty", "refusal"}


def test_large_reply_is_fast():
    record = '("entity"<|>"Entity {i}"<|>"person"<|>"Description number {i}.")##\n'
    reply = "".join(record.format(i=i) for i in range(3000)) + "<|COMPLETE|>"
    start = time.perf_counter()
    r = parse_reply(reply)
    assert len(r.entities) == 3000
    assert time.perf_counter() - start < 3.0


def test_word_count_counts_cjk_pairs():
    assert word_count("Alice Smith") == 2
    assert word_count("圖書館") == 2
    assert word_count("U.S. copyright law") == 3


# ============================================================================ shared corpus

LIGHTRAG_FIXTURES = CORPUS / "peer_cases" / "lightrag" / "lightrag_test_fixtures.json"


def _fixtures():
    if not LIGHTRAG_FIXTURES.is_file():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{LIGHTRAG_FIXTURES} absent"))]
    cases = json.loads(LIGHTRAG_FIXTURES.read_text(encoding="utf-8"))
    return [pytest.param(case, id=case["id"]) for case in cases]


# fixtures whose expectation is about LightRAG internals, mapped to parse_reply terms
_FIXTURE_NOTES = {
    "json_top_level_array": "DocAtlas deliberately reads a bare array of entity objects",
    "merge_descriptions_dedup": "merging is not the parser's job; checked as exact dedup",
}


@needs_corpus
@pytest.mark.parametrize("case", _fixtures())
def test_lightrag_fixture(case):
    exp = case["expected"]
    if "input_pairs" in case:  # description merging: parser only drops exact duplicates
        for _stored, _new, combined in case["input_pairs"]:
            reply = "\n".join(f"entity<|#|>A<|#|>t<|#|>{d}" for d in _stored + _new)
            got = [e.description for e in parse_reply(reply).entities if e.description]
            assert got == [c for c in combined if c.strip("\x00\x08")]
        return
    if "input_fields" in case:
        reply = "<|#|>".join(case["input_fields"])
        r = parse_reply(reply)
        if "entity" in exp and exp["entity"] is None:
            assert r.entities == []
        if "entity_type" in exp:
            assert r.entities[0].type == exp["entity_type"]
        if "description" in exp:
            rel = r.relations[0]
            assert rel.description == exp["description"]
            assert rel.strength is None  # LightRAG's default weight 1.0 == "not given" here
        return
    r = parse_reply(case["input"])
    if "object" in exp:
        assert load_json_object(case["input"]) == exp["object"]
    if case["id"] == "json_top_level_array":
        # LightRAG expects nothing ("array is not an object"); DocAtlas reads the entity.
        assert names(r) == ["Alice"]
        return
    if "entities" in exp:
        assert names(r) == exp["entities"]
    if "relations" in exp:
        assert [list(p) for p in pairs(r)] == exp["relations"]
    if "entity" in exp:
        assert names(r) == [exp["entity"]]
    if "description_contains" in exp:
        assert exp["description_contains"] in r.entities[0].description
    if isinstance(exp.get("fields"), int):
        assert len(r.entities) == 1 and r.entities[0].description
    if isinstance(exp.get("fields"), list):
        _tag, name, etype, description = exp["fields"]
        assert r.entities == [EntityRecord(name, etype, description)]
    if case["id"] == "inline_records_on_one_line_joined_by_tuple_delimiter":
        baseline = next(c for c in json.loads(LIGHTRAG_FIXTURES.read_text()) if
                        c["id"] == "inline_records_multiline_baseline")
        assert parse_reply(baseline["input"]) == r
    if case["id"] == "relation_row_misprefixed_as_entity":
        assert names(r) == ["Alice", "Acme Corp"]
        assert r.relations == [
            RelationRecord("Alice", "Acme Corp", "founded", "Alice founded Acme Corp.")
        ]


def _corpus_files():
    return [pytest.param(rel, id=Path(rel).name[:40]) for rel in COUNTS.HAND_COUNTS]


@needs_corpus
@pytest.mark.parametrize("rel", _corpus_files())
def test_corpus_hand_counts(rel):
    path = CORPUS / rel
    if not path.is_file():
        pytest.skip(f"{path} absent from the corpus")
    r = parse_reply(path.read_text(encoding="utf-8"))
    assert (len(r.entities), len(r.relations)) == COUNTS.HAND_COUNTS[rel]
    assert r.status == COUNTS.EXPECTED_STATUS.get(rel, "ok")


@needs_corpus
def test_every_corpus_reply_is_counted():
    replies = {
        str(p.relative_to(CORPUS))
        for folder in ("raw_outputs", "peer_cases/graphrag", "peer_cases/nano_graphrag_mock_cache")
        for p in (CORPUS / folder).glob("*.txt")
        if not p.name.endswith(".input_prompt.txt")
    }
    assert replies == set(COUNTS.HAND_COUNTS)


def _corpus(rel: str) -> ParseResult:
    path = CORPUS / rel
    if not path.is_file():
        pytest.skip(f"{path} absent")
    return parse_reply(path.read_text(encoding="utf-8"))


RAW = "raw_outputs/"
MOCK = "peer_cases/nano_graphrag_mock_cache/"


@needs_corpus
def test_spot_qwen_sentences_and_type_targets():
    r = _corpus(RAW + "qwen2.5_graphrag_chat-c4cb0411b6efb1468d138ba23418f07c.txt")
    assert "圖書館2樓櫃台及5樓櫃台" in names(r)
    assert "當日預約、利用網頁預約" in names(r)
    assert not any("。" in n or "，" in n for n in names(r))
    assert r.relations == []


@needs_corpus
def test_spot_qwen_type_tags_and_type_targets():
    r = _corpus(RAW + "qwen2.5_graphrag_chat-4b94cf327a603542a918f33b30306929.txt")
    assert r.entities[0] == EntityRecord(
        "cyut ibooking", "organization",
        "cyut ibooking is an organization providing reservation services for spaces or seats.",
    )
    assert ("reservation process", "event") in [(e.name, e.type) for e in r.entities]
    r = _corpus(RAW + "qwen2.5_graphrag_chat-6de5f796e0aef7b1b1d6a7c579c9a4ca.txt")
    assert "event" not in {t for p in pairs(r) for t in p}


@needs_corpus
def test_spot_qwen_event_tags_and_strengths():
    r = _corpus(RAW + "qwen2.5_graphrag_chat-6ebfb9efdf54aec979d03e033bf9616c.txt")
    assert "違規記點名單" in names(r) and "簽退手續" in names(r)
    assert [x.strength for x in r.relations] == [6.0, 8.0, 7.0]


@needs_corpus
def test_spot_qwen_trailing_note():
    r = _corpus(RAW + "qwen2.5_graphrag_chat-83da70859254374bf4081dc78b8afb42.txt")
    assert pairs(r) == [("5樓多媒體區櫃台", "簽退手續")]
    assert not any("Note" in e.description for e in r.entities)
    assert not r.completed


@needs_corpus
def test_spot_breeze_na_and_keywords():
    r = _corpus(RAW + "breeze-7b_nanographrag_5f0f0226e92ce0a241382b55d3e1141c.txt")
    assert "Formosa Plastics Group" in names(r)
    assert "N/A" not in names(r) and all(e.description != "N/A" for e in r.entities)
    assert r.content_keywords == ["Taiwanese companies", "chemical", "semiconductor"]
    assert all(x.keywords == "" and x.strength is None for x in r.relations)


@needs_corpus
def test_spot_breeze_extra_value_field():
    r = _corpus(RAW + "breeze-7b_nanographrag_742425fbc4624cf5d512aaf8ea870426.txt")
    by_name = {e.name: e for e in r.entities}
    assert by_name["保險總費用"].type == "number"
    assert "5220000.0" in by_name["保險總費用"].description
    assert by_name["保單內容"].type == "text"
    assert pairs(r) == [("國泰人壽", "悠年終身保險")]
    assert r.completed


@needs_corpus
def test_spot_breeze_missing_closing_quote():
    r = _corpus(RAW + "breeze-7b_nanographrag_1986b4b33ac3cf691d014fe49b37f473.txt")
    assert names(r) == ["要保人", "保險公司"]
    assert r.entities[1].description.endswith("for the policy.")


@needs_corpus
def test_spot_mock_corrupted_strength_delimiters():
    r = _corpus(MOCK + "08e3f86743dead684fc94f3e900ec57a.txt")
    assert [x.strength for x in r.relations] == [9.0, 8.0, 7.0, 6.0, 5.0, 7.0, 9.0]
    assert all("|" not in x.description for x in r.relations)
    r = _corpus(MOCK + "a4e8e3ec3dc5c90110a50b92bf1481b6.txt")
    room = next(x for x in r.relations if x.source == "The Room")
    assert room.strength == 8.0 and room.description.endswith("better life.")


@needs_corpus
def test_spot_mock_curly_quotes_and_relation_tag():
    r = _corpus(MOCK + "47f7f7f38ad3a8c64452a5d1b333665b.txt")
    assert ("Professor Michael S. Hart", "Project Gutenberg Literary Archive Foundation") in pairs(r)
    assert not any("“" in n or "”" in n for p in pairs(r) for n in p)
    r = _corpus(MOCK + "587cd9809b0bd6b7f79edc675c717dda.txt")
    assert ("Ebenezer", "Scrooge") in pairs(r)


@needs_corpus
def test_spot_mock_headings_lists_and_markers():
    r = _corpus(MOCK + "d2b14e1e9efe92d57b1f0160f95f7b51.txt")
    assert "Baker's Shop" in names(r)
    assert not any(n.startswith(("*", "#")) or n.endswith(":") for n in names(r))
    r = _corpus(MOCK + "6cf7c967ce656b4c9fd7ec33cff46e35.txt")
    assert r.completed
    assert "Internal Revenue Service (IRS)" in names(r)
    r = _corpus(MOCK + "dcd71c915550f52fc3244efe0d280b65.txt")
    assert ("Ebenezer Scrooge", "Seven Christmas Eves Ago") in pairs(r)


@needs_corpus
def test_spot_graphrag_stray_parentheses():
    r = _corpus("peer_cases/graphrag/gi_2024-04_doc_variant1.txt")
    assert names(r) == ["TEST_ENTITY_1", "TEST_ENTITY_2", "TEST_ENTITY_3"]
    assert r.relations[0].description.endswith("share the same address")
    assert [x.strength for x in r.relations] == [2.0, 1.0]
