"""Prompt profiles: all four load, render cleanly, speak the format the parser reads, and
the compact profile costs at most half the prompt tokens of lightrag."""

from __future__ import annotations

import json
import re

import pytest
from docatlas.core.base.settings import ExtractionSettings
from docatlas.core.base.tokens import count_tokens
from docatlas.core.ingest.extract import first_messages, follow_up
from docatlas.core.ingest.parse import parse_reply
from docatlas.core.prompts.catalog import (
    MERGE_PROMPT_NAMES,
    PROMPT_NAMES,
    available_profiles,
    load_profile,
    merge_prompt,
    render,
    validate,
)

PROFILES = ("compact", "graphrag", "json", "lean", "lightrag", "typing")
SETTINGS = ExtractionSettings()
PASSAGE = "Maria Lopez founded Harbor Analytics in Lisbon."


def test_the_six_profiles_are_bundled():
    assert tuple(available_profiles()) == PROFILES


@pytest.mark.parametrize("name", PROFILES)
def test_every_prompt_of_every_profile_is_valid(name):
    profile = load_profile(name)
    assert set(profile.prompts) == set(PROMPT_NAMES)
    for prompt_name, template in profile.prompts.items():
        assert validate(prompt_name, template) == [], (name, prompt_name)


@pytest.mark.parametrize("name", PROFILES)
def test_rendered_prompts_leave_no_placeholder_behind(name):
    profile = load_profile(name)
    text = first_messages(profile, PASSAGE, SETTINGS)[0]["content"]
    assert PASSAGE in text and "person, organization" in text and "English" in text
    for rendered in (text, follow_up(profile, "glean", SETTINGS)["content"],
                     follow_up(profile, "loop_check", SETTINGS)["content"]):
        assert not re.search(r"\{[a-z_]+\}", rendered)


@pytest.mark.parametrize("name", PROFILES)
def test_each_loop_check_asks_for_yes_or_no(name):
    assert "YES or NO" in load_profile(name).prompts["loop_check"]


@pytest.mark.parametrize(
    ("name", "entities", "relations"),
    [("lightrag", 4, 4), ("compact", 3, 2), ("graphrag", 3, 2), ("json", 3, 2)],
)
def test_each_profile_example_is_read_back_by_the_parser(name, entities, relations):
    """The example teaches the format; the parser must read it record for record."""
    profile = load_profile(name)
    values = profile.values(entity_types=SETTINGS.entity_types, language=SETTINGS.language)
    example = values["examples"]
    marker = "Example JSON:\n" if name == "json" else ("Example records:\n" if name != "compact" else "Records:\n")
    result = parse_reply(example.split(marker, 1)[1])
    assert (len(result.entities), len(result.relations)) == (entities, relations)
    assert all(r.strength is not None for r in result.relations) or name == "compact"


def test_json_profile_carries_a_schema_the_parser_agrees_with():
    profile = load_profile("json")
    schema = profile.json_schema
    assert schema is not None and schema["required"] == ["entities", "relationships"]
    entity = schema["properties"]["entities"]["items"]
    relation = schema["properties"]["relationships"]["items"]
    assert set(entity["properties"]) == {"name", "type", "description", "confidence"}
    assert "confidence" not in entity["required"]
    assert set(relation["required"]) == {"source", "target", "keywords", "description", "strength"}
    sample = {"entities": [{"name": "Ada", "type": "person", "description": "d", "confidence": 0.8}],
              "relationships": [{"source": "Ada", "target": "Alan", "keywords": "letters",
                                 "description": "They wrote.", "strength": 7}]}
    parsed = parse_reply(json.dumps(sample))
    assert parsed.entities[0].confidence == 0.8 and parsed.relations[0].strength == 7
    for name in ("lightrag", "compact", "graphrag"):
        assert load_profile(name).json_schema is None


def _overhead(name: str, prompt: str) -> int:
    profile = load_profile(name)
    if prompt == "extract":
        return count_tokens(first_messages(profile, "", SETTINGS)[0]["content"])
    return count_tokens(follow_up(profile, prompt, SETTINGS)["content"])


@pytest.mark.parametrize("prompt", ["extract", "glean"])
def test_compact_prompt_is_at_most_half_of_lightrag(prompt):
    """What a profile adds to every chunk (first pass and each gleaning turn), in tiktoken tokens."""
    assert 2 * _overhead("compact", prompt) <= _overhead("lightrag", prompt)


def test_merge_prompts_are_valid_and_overridable():
    for name in MERGE_PROMPT_NAMES:
        assert validate(name, merge_prompt(name)) == []
    assert merge_prompt("summarize", {"summarize": "Sum up {descriptions}"}) == "Sum up {descriptions}"
    assert validate("summarize", "Sum up nothing") == ["The summarize prompt must contain {descriptions}."]
    with pytest.raises(ValueError, match="no merge prompt"):
        merge_prompt("translate")
    rendered = render(merge_prompt("summarize"), {"entity_name": "Ada", "descriptions": "- a\n- b",
                                                  "language": "English", "max_words": "100"})
    assert "Ada" in rendered and "- a\n- b" in rendered


def test_unknown_profile_names_the_choices():
    with pytest.raises(ValueError, match="compact, graphrag, json, lean, lightrag"):
        load_profile("fancy")
