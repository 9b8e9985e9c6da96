"""The prompt catalog and the checks a text passes before it may be used as a prompt."""

from __future__ import annotations

import pytest
from docatlas.core.prompts.catalog import (
    ANSWER_MODES,
    available_profiles,
    brace_problems,
    catalog,
    check,
    effective_text,
    prompt_keys,
    render,
    spec,
    validate,
)
from docatlas.core.retrieval.answer import MODES


def test_the_catalog_lists_every_prompt_docatlas_sends():
    keys = prompt_keys()
    assert len(keys) == len(set(keys))
    for profile in available_profiles():
        assert {f"{profile}/{n}" for n in ("extract", "glean", "loop_check", "examples")} <= set(keys)
    assert {"merge/summarize", "merge/same_entity", "query/keywords", "query/answer",
            "query/community_report", "query/community_map"} <= set(keys)
    assert ANSWER_MODES == MODES
    assert {f"query/answer_{m}" for m in MODES} <= set(keys)


@pytest.mark.parametrize("key", prompt_keys())
def test_every_bundled_default_passes_its_own_check(key):
    assert check(key, spec(key).default_text()) == []


def test_an_answer_mode_falls_back_to_the_all_modes_answer():
    item = spec("query/answer_naive")
    assert item.falls_back_to == "query/answer" and not item.extraction
    assert effective_text("query/answer_naive") == spec("query/answer").default_text()
    mine = {"query/answer": "All: {context}"}
    assert effective_text("query/answer_naive", mine) == "All: {context}"
    mine["query/answer_naive"] = "Naive: {context}"
    assert effective_text("query/answer_naive", mine) == "Naive: {context}"
    assert effective_text("query/answer_mix", mine) == "All: {context}"


def test_unknown_placeholders_are_named_with_their_place_and_a_hint():
    text = "Read this.\nUse {context_data} and {respons_type}.\nAlso {Context}."
    problems = check("query/answer", text)
    messages = [p.message for p in problems]
    assert (problems[0].line, problems[0].column, problems[0].length) == (2, 5, len("{context_data}"))
    assert messages[0] == ("Line 2, column 5: {context_data} is not a placeholder of this prompt; "
                           "write {context} instead.")
    assert "Line 2, column 24: {respons_type}" in messages[1] and "did you mean {response_type}?" in messages[1]
    assert "Line 3, column 6: {Context}" in messages[2] and "write {context} instead" in messages[2]
    assert messages[-1].startswith("This prompt must contain {context}")


def test_a_placeholder_known_elsewhere_is_still_unknown_here():
    problems = check("lightrag/glean", "Add what is missing from {input_text}.")
    assert len(problems) == 1 and "{input_text} is not a placeholder of this prompt" in problems[0].message


def test_missing_required_placeholders_and_empty_text():
    assert [p.message for p in check("merge/same_entity", "Same? {first}")] == [
        "This prompt must contain {second}: the second entry goes there."]
    assert check("lightrag/extract", "   \n")[0].message.startswith("This prompt is empty")


def test_unbalanced_braces_say_where():
    problems = brace_problems('Reply {"a": 1}}\nthen {input_text\nand {x')
    assert [(p.line, p.column) for p in problems] == [(1, 15), (2, 6), (3, 5)]
    assert problems[0].message == "Line 1, column 15: this } closes no {."
    assert problems[1].message == "Line 2, column 6: this { is never closed."
    assert check("query/community_map", 'Q {question} R {reports} {"points": []}') == []


def test_json_braces_in_a_prompt_are_fine_and_left_alone():
    text = 'Reply like {"high_level": ["a"], "low_level": []}\n{history}\nQuestion: {question}'
    assert check("query/keywords", text) == []
    assert render(text, {"question": "Who?", "history": "-"}).startswith('Reply like {"high_level"')


def test_the_old_validate_still_works_for_short_names():
    assert validate("summarize", "Sum up nothing") == ["The summarize prompt must contain {descriptions}."]
    assert validate("answer", "Use {context} and {response_type}") == []
    assert all(s.required <= s.allowed for s in catalog())
