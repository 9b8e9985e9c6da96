"""Pure pieces of retrieval: keyword replies as small models write them, full-text queries,
rank fusion, citations, history trimming, token truncation."""

from __future__ import annotations

import pytest
from docatlas.core.base.tokens import count_tokens
from docatlas.core.retrieval.budget import truncate
from docatlas.core.retrieval.conversation import history_text, recent_history
from docatlas.core.retrieval.fulltext import match_expression
from docatlas.core.retrieval.keywords import fallback_keywords, parse_keywords
from docatlas.core.retrieval.references import cited_labels
from docatlas.core.retrieval.search import fuse


@pytest.mark.parametrize("reply", [
    '{"high_level": ["trade"], "low_level": ["Kestrel Motors", "Leeds"]}',
    '```json\n{"high_level_keywords": ["trade"], "low_level_keywords": ["Kestrel Motors", "Leeds"]}\n```',
    "Here you go: {'high_level': ['trade'], 'low_level': ['Kestrel Motors', 'Leeds'],} Hope it helps!",
    '<think>hmm</think>{"High-Level": "trade", "Low-Level": "Kestrel Motors, Leeds"}',
])
def test_keyword_replies_are_read_tolerantly(reply):
    parsed = parse_keywords(reply)
    assert parsed is not None and parsed.high_level == ("trade",)
    assert parsed.low_level == ("Kestrel Motors", "Leeds") and parsed.source == "model"


def test_one_list_stands_in_for_the_other_and_junk_gives_none():
    parsed = parse_keywords('{"low_level": ["Leeds"]}')
    assert parsed.high_level == parsed.low_level == ("Leeds",)
    assert parse_keywords("I cannot help with that.") is None
    assert parse_keywords('{"high_level": [], "low_level": []}') is None


def test_fallback_keywords_come_from_the_question():
    kw = fallback_keywords("Who supplied parts to Kestrel Motors after the move?")
    assert kw.source == "fallback" and kw.low_level[0] == "Kestrel Motors"
    assert "supplied" in kw.high_level and "Who" not in kw.high_level and "the" not in kw.low_level


def test_match_expression_quotes_phrases_and_words():
    assert match_expression(["Kestrel Motors", "the parts"]) == '"kestrel motors" OR "kestrel" OR "motors" OR "parts"'
    assert match_expression(['say "hi" AND NEAR(']) == '"say hi and near" OR "hi" OR "near"'
    assert match_expression(["Kestrel Motors of Leeds"]).startswith('"kestrel motors of leeds" OR')
    assert match_expression(["the", "of"]) is None


def test_fusion_rewards_agreement():
    assert fuse([["a", "b", "c"], ["c", "a"]], 3) == ["a", "c", "b"]
    assert fuse([["a"], []], 5) == ["a"] and fuse([], 5) == []


def test_citations_are_read_in_order():
    text = "Maria founded it [C2]. It is in Lisbon [E1, C2][R3]; see [C10] and [not a label]."
    assert cited_labels(text) == ["C2", "E1", "R3", "C10"]


def test_history_keeps_whole_recent_turns():
    history = [{"role": "user", "content": "q1"}, {"role": "assistant", "content": "a1"},
               {"role": "system", "content": "ignored"}, {"role": "user", "content": "q2"},
               {"role": "assistant", "content": "a2"}]
    assert [m["content"] for m in recent_history(history, 1, 1000)] == ["q2", "a2"]
    assert recent_history(history, 0, 1000) == []
    assert [m["content"] for m in recent_history(history, 5, 1000)] == ["q1", "a1", "q2", "a2"]
    assert history_text(recent_history(history, 1, 1000)) == "User: q2\nAssistant: a2"


def test_truncate_keeps_within_the_limit():
    text = "word " * 500
    cut = truncate(text, 50)
    assert count_tokens(cut) <= 50 and cut.endswith("…")
    assert truncate("short", 50) == "short" and truncate("anything", 0) == ""
