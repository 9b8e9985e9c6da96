"""`docatlas evaluate QUESTIONS`: the question file read (bad lines named), every mode asked,
the report per mode (correct share, evidence, time) as a table or JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from docatlas.cli import main
from docatlas.core.base import paths
from docatlas.core.jobs.evaluate import QuestionFileError, contains, read_questions
from docatlas.core.jobs.ingest import index
from docatlas.core.storage.database import Store
from fixtures.fact_model import fact_responder
from fixtures.known_facts import build
from helpers import settings_for, write_corpus

CORPUS = build(seed=5, documents=24, groups=2)


def question_lines() -> list[dict]:
    """The corpus's questions as a user would write them: answers, documents, absent."""
    lines = []
    for q in CORPUS.questions:
        if q.kind == "absent":
            lines.append({"question": q.text, "absent": True})
        elif q.kind == "count":
            lines.append({"question": q.text, "answer": [str(q.count), *q.answers], "documents": list(q.documents)})
        else:
            lines.append({"question": q.text, "answer": list(q.answers), "documents": list(q.documents)})
    return lines


@pytest.fixture
def workspace(fake_ollama, monkeypatch, tmp_path) -> tuple[str, Path]:
    fake_ollama.responder = fact_responder
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    settings_file = paths.settings_path()
    settings_file.parent.mkdir(parents=True, exist_ok=True)
    settings_file.write_text(json.dumps({"ollama": {"retries": 1, "backoff_s": 0.01}}),
                             encoding="utf-8")
    ws = tmp_path / "ws"
    with Store(paths.database_path(ws)) as store:
        list(index(store, [write_corpus(tmp_path / "docs", CORPUS.documents)],
                   settings_for(fake_ollama, ollama__embed_model="")))
    questions = tmp_path / "questions.jsonl"
    questions.write_text("# my question set\n\n" + "\n".join(json.dumps(x) for x in question_lines()) + "\n",
                         encoding="utf-8")
    return str(ws), questions


def test_evaluate_prints_each_mode_with_its_share_evidence_and_time(workspace, capsys):
    ws, questions = workspace
    code = main(["--data-dir", ws, "evaluate", str(questions), "--modes", "naive,local"])
    out, err = capsys.readouterr()
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(f"{len(CORPUS.questions)} questions from questions.jsonl")
    assert lines[1].split() == ["mode", "correct", "evidence", "s/question"]
    rows = {line.split()[0]: line.split() for line in lines[2:4]}
    total = len(CORPUS.questions)
    naive, local = (int(rows[m][1].split("/")[0]) for m in ("naive", "local"))
    assert rows["naive"][1] == f"{naive}/{total}" and 0 < naive < local == total  # the graph counts, naive misses
    assert 0 < float(rows["naive"][3]) <= 1 and float(rows["local"][3]) == 1.0
    assert lines[4] == f"Best: local, {local} of {total} correct, {local - naive} more than naive."


def test_evaluate_json_has_one_row_a_mode(workspace, capsys):
    ws, questions = workspace
    assert main(["--data-dir", ws, "evaluate", str(questions), "--modes", "mix", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (row,) = data["modes"]
    assert data["questions"] == row["questions"] == len(CORPUS.questions)
    assert row["mode"] == "mix" and row["correct"] == len(CORPUS.questions) and row["correct_share"] == 1.0
    assert row["evidence"] == 1.0 and row["seconds_per_question"] >= 0 and row["failures"] == []


@pytest.mark.parametrize(("text", "says"), [
    ('{"question": "Who?", "answer": "Ana"}\nnot json\n', "Line 2 of q.jsonl is not JSON"),
    ('{"answer": "Ana"}\n', 'Line 1 of q.jsonl has no "question" text.'),
    ('{"question": "Who?"}\n', "Line 1 of q.jsonl says nothing to check"),
    ('{"question": "Who?", "answer": 3}\n', 'Line 1 of q.jsonl: "answer" must be a text or a list of texts.'),
    ("# only a comment\n", "q.jsonl holds no questions"),
])
def test_a_bad_question_file_is_one_sentence_naming_the_line(tmp_path, text, says):
    path = tmp_path / "q.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(QuestionFileError) as info:
        read_questions(path)
    assert info.value.message.startswith(says)


def test_evaluate_with_a_bad_file_exits_with_the_sentence(workspace, capsys, tmp_path):
    ws, _ = workspace
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{nope\n", encoding="utf-8")
    assert main(["--data-dir", ws, "evaluate", str(bad)]) == 1
    assert capsys.readouterr().err.strip().endswith('Line 1 of bad.jsonl is not JSON; write one object a line, '
                                                    'e.g. {"question": "...", "answer": "..."}.')


def test_an_expected_answer_counts_only_as_a_whole_word():
    assert contains("She worked with 4 organizations.", "4") and not contains("She worked with 14.", "4")
    assert contains("funded by ZADEL TONI [C2].", "Zadel Toni") and not contains("Zadel Tonio", "Zadel Toni")
