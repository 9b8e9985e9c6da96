"""Importing prompt files written for LightRAG or GraphRAG: read with `ast`, never run, mapped and reported.

The seed files live outside the repository (../shared/seeds); the tests that read them
are skipped, with the reason, when the folder is not there.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from docatlas.core.prompts.catalog import check
from docatlas.core.prompts.importer import read_prompt_file, read_python, translate

SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"


def seed(marker: str) -> Path:
    """The seed file holding `marker` (their names are hashes)."""
    if not SEEDS.is_dir():
        pytest.skip(f"the seed prompt files are not here ({SEEDS} is missing)")
    for path in sorted(SEEDS.iterdir()):
        if marker in path.read_text(encoding="utf-8", errors="replace"):
            return path
    pytest.skip(f"no seed file in {SEEDS} holds {marker!r}")


def assert_usable(report) -> None:
    for key, text in report.prompts.items():
        assert check(key, text) == [], key


def test_lightrag_prompt_module_maps_nine_prompts():
    report = read_prompt_file(seed('PROMPTS["entity_extraction"] = '))
    assert report.kind == "LightRAG" and report.profile == "lightrag"
    assert dict((k, s) for s, k in report.mapped) == {
        "lightrag/extract": 'PROMPTS["entity_extraction"]',
        "lightrag/examples": 'PROMPTS["entity_extraction_examples"]',
        "lightrag/glean": 'PROMPTS["entity_continue_extraction"]',
        "lightrag/loop_check": 'PROMPTS["entity_if_loop_extraction"]',
        "merge/summarize": 'PROMPTS["summarize_entity_descriptions"]',
        "query/keywords": 'PROMPTS["keywords_extraction"]',
        "query/answer": 'PROMPTS["rag_response"]',
        "query/answer_naive": 'PROMPTS["naive_rag_response"]',
        "query/answer_mix": 'PROMPTS["mix_rag_response"]',
    }
    assert_usable(report)
    assert "{context}" in report.prompts["query/answer"] and "{context_data}" not in report.prompts["query/answer"]
    assert "{history}" in report.prompts["query/answer"]
    assert "{question}" in report.prompts["query/keywords"]
    assert "high_level_keywords" in report.prompts["query/keywords"]  # its examples were put in
    assert "{descriptions}" in report.prompts["merge/summarize"]
    assert report.prompts["lightrag/examples"].count("Example ") == 3
    skipped = dict(report.skipped)
    assert set(skipped) == {"GRAPH_FIELD_SEP", 'PROMPTS["fail_response"]', 'PROMPTS["similarity_check"]'}
    text = report.text()
    assert "{context_data} became {context}" in text and "DEFAULT_ENTITY_TYPES" in text
    assert "Not imported (3):" in text


def test_lightrag_optimized_prompts_go_to_the_compact_profile_and_one_dict_is_chosen():
    path = seed("PROMPTS_OPTIMIZED")
    report = read_prompt_file(path)
    assert report.profile == "compact" and report.sources == ["PROMPTS_OPTIMIZED", "PROMPTS_BALANCED"]
    assert sorted(report.prompts) == ["compact/examples", "compact/extract", "compact/glean"]
    assert_usable(report)
    extract = report.prompts["compact/extract"]
    assert "Knowledge Graph Specialist" in extract
    assert "Extract entities and relationships from the text above" in extract
    assert "joined into one extraction prompt" in report.text()
    assert all("PROMPTS_BALANCED" in source and "already gave" in why for source, why in report.skipped)
    assert "compare_token_counts (code)" in report.text()  # a function: its text is not read

    balanced = read_prompt_file(path, source="PROMPTS_BALANCED")
    assert "BOTH concrete and abstract entities" in balanced.prompts["compact/extract"] and not balanced.skipped
    forced = read_prompt_file(path, profile="lightrag")
    assert sorted(forced.prompts) == ["lightrag/examples", "lightrag/extract", "lightrag/glean"]
    assert "'<|#|>' but the lightrag profile fills {tuple_delimiter} with '<|>'" in forced.text()
    with pytest.raises(ValueError, match="has no PROMPTS_FAST; it holds: PROMPTS_OPTIMIZED, PROMPTS_BALANCED"):
        read_prompt_file(path, source="PROMPTS_FAST")


def test_graphrag_module_constants_after_a_path_line():
    path = seed("GRAPH_EXTRACTION_PROMPT = ")
    report = read_prompt_file(path)
    assert report.kind == "GraphRAG" and report.profile == "graphrag"
    assert dict((k, s) for s, k in report.mapped) == {
        "graphrag/extract": "GRAPH_EXTRACTION_PROMPT", "graphrag/glean": "CONTINUE_PROMPT",
        "graphrag/loop_check": "LOOP_PROMPT"}
    assert_usable(report)
    assert "{input_text}" in report.prompts["graphrag/extract"] and not report.skipped


@pytest.mark.parametrize(("marker", "language"), [("pub const ENTITY_EXTRACTION_PROMPT", "Rust"),
                                                  ("export const ENTITY_EXTRACTION_SYSTEM", "TypeScript")])
def test_other_languages_are_refused_in_one_sentence(marker, language):
    path = seed(marker)
    with pytest.raises(ValueError) as refused:
        read_prompt_file(path)
    message = str(refused.value)
    assert message.startswith(f"{path.name} is not a Python prompt module (line ")
    assert f"looks like {language}" in message and message.count(". ") == 0


def test_the_file_is_never_run(tmp_path):
    marker = tmp_path / "ran"
    module = tmp_path / "prompts.py"
    module.write_text(
        "My prompts for LightRAG, v2\n"
        "import pathlib\n"
        f"pathlib.Path({str(marker)!r}).write_text('x')\n"
        "raise SystemExit(3)\n"
        'PROMPTS = {}\n'
        'PROMPTS["rag_response"] = """Answer from {context_data}.\\nFormat: {response_type}"""\n',
        encoding="utf-8")
    report = read_prompt_file(module)
    assert not marker.exists()
    assert report.prompts == {"query/answer": "Answer from {context}.\nFormat: {response_type}"}
    assert "Line 1 ('My prompts for LightRAG, v2') is not Python and was skipped." in report.notes


def test_strings_built_without_code_are_read_and_code_is_reported():
    found, notes = read_python(
        'BASE = "Use {context_data}" + " well."\n'
        'PROMPTS = {"rag_response": BASE, "naive_rag_response": """  x {content_data}  """.strip()}\n'
        'PROMPTS.update({"keywords_extraction": "\\n".join(["Q: {query}", "H: {history}"])})\n'
        'name = "x"\n'
        'PROMPTS["mix_rag_response"] = f"Hello {name}"\n'
        'def build():\n    return "hidden"\n')
    values = {f.source: f.value for f in found}
    assert values['PROMPTS["rag_response"]'] == "Use {context_data} well."
    assert values['PROMPTS["naive_rag_response"]'] == "x {content_data}"
    assert values['PROMPTS["keywords_extraction"]'] == "Q: {query}\nH: {history}"
    assert 'PROMPTS["mix_rag_response"]' not in values
    assert notes == ['Not read, because their text only exists when the code runs: PROMPTS["mix_rag_response"] '
                     "(an f-string), build (code)."]


def test_translation_unescapes_renames_fills_and_completes():
    theirs = 'Report on:\n{input_text}\nAt most {max_report_length} words. JSON like {{"title": 1}}'
    text, notes, _ = translate("query/community_report", theirs)
    assert text is not None and "Entities:\n{entities}\n\nRelations:\n{relations}" in text
    assert "At most 500 words" in text and '{"title": 1}' in text
    assert notes[0].startswith("{{ and }} became { and }")
    text, notes, _ = translate("query/keywords", "List the keywords.")
    assert text is not None and text.endswith("Question: {question}\n")
    assert notes == ["added {question} at the end, where DocAtlas puts it"]
    text, _, why = translate("lightrag/glean", "Continue for {entity_count} entities.")
    assert text is None and why == "{entity_count} has no counterpart in DocAtlas's lightrag/glean prompt"


def test_broken_json_and_unreadable_files_are_one_sentence(tmp_path):
    bad = tmp_path / "set.json"
    bad.write_text('{"format": ', encoding="utf-8")
    with pytest.raises(ValueError, match=r"^set.json is not valid JSON \(line 1"):
        read_prompt_file(bad)
    with pytest.raises(ValueError, match=r"^nothing.py could not be read"):
        read_prompt_file(tmp_path / "nothing.py")
    with pytest.raises(ValueError, match="no extraction profile called 'fancy'"):
        read_prompt_file(bad, profile="fancy")
