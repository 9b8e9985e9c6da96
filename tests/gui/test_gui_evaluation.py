"""The chat's "Evaluate…" button: pick a question set, run it on the runner, read the table."""

from __future__ import annotations

import json
import re

import pytest
from fixtures.fact_model import fact_responder
from fixtures.known_facts import build
from gui_helpers import wait_idle
from PySide6.QtCore import Qt

CORPUS = build(seed=5, documents=24, groups=2)
MODES = ["naive", "local", "global", "hybrid", "mix"]


@pytest.fixture
def ready(qtbot, make_window, server, tmp_path):
    """A window whose workspace holds the known-facts corpus, extracted by the fact model."""
    server.responder = fact_responder
    folder = tmp_path / "facts"
    folder.mkdir()
    for name, text in CORPUS.documents.items():
        (folder / name).write_text(text, encoding="utf-8")
    window = make_window()
    window.documents_panel.add_paths([folder])
    wait_idle(qtbot, window)
    return window


def questions_file(tmp_path):
    path = tmp_path / "my questions.jsonl"
    lines = [{"question": q.text, "absent": True} if q.kind == "absent" else
             {"question": q.text, "answer": list(q.answers), "documents": list(q.documents)}
             for q in CORPUS.questions]
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    return path


def open_dialog(qtbot, window):
    chat = window.chat_panel
    qtbot.mouseClick(chat.evaluate_button, Qt.MouseButton.LeftButton)
    dialog = chat.evaluation
    qtbot.waitUntil(dialog.isVisible)
    return dialog


def test_evaluate_runs_the_question_set_in_every_mode_and_shows_the_table(qtbot, ready, tmp_path):
    dialog = open_dialog(qtbot, ready)
    path = questions_file(tmp_path)
    dialog.choose_file = lambda: str(path)
    qtbot.mouseClick(dialog.browse_button, Qt.MouseButton.LeftButton)
    assert dialog.path_edit.text() == str(path)
    qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
    assert not dialog.run_button.isEnabled() and dialog.stop_button.isEnabled()
    qtbot.waitUntil(lambda: dialog.task is None, timeout=60_000)
    table = dialog.table
    assert [table.horizontalHeaderItem(c).text() for c in range(4)] == [
        "Mode", "Correct", "Evidence found", "Seconds per question"]
    rows = [[table.item(r, c).text() for c in range(4)] for r in range(table.rowCount())]
    assert [r[0] for r in rows] == MODES
    total = len(CORPUS.questions)
    correct = {}
    for mode, share, evidence, seconds in rows:
        found = re.fullmatch(rf"(\d+) of {total} \((\d+)%\)", share)
        assert found and re.fullmatch(r"\d+%", evidence) and re.fullmatch(r"\d+\.\d s", seconds)
        correct[mode] = int(found.group(1))
    assert correct["local"] == total > correct["naive"]  # counted in the graph; naive misses the second hop
    assert dialog.best.text().startswith("Best: ") and "more than naive" in dialog.best.text()
    assert dialog.status.text() == "Finished." and dialog.progress.value() == total * len(MODES)
    assert dialog.run_button.isEnabled() and not dialog.stop_button.isEnabled()


def test_a_bad_question_file_says_which_line(qtbot, ready, tmp_path):
    dialog = open_dialog(qtbot, ready)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "Who?", "answer": "Ana"}\n{oops\n', encoding="utf-8")
    dialog.path_edit.setText(str(bad))
    qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.task is None, timeout=20_000)
    assert dialog.status.text().startswith("Line 2 of bad.jsonl is not JSON")
    assert dialog.table.rowCount() == 0


def test_the_dialog_fits_a_small_screen(qtbot, ready):
    dialog = open_dialog(qtbot, ready)
    for width, height in ((1366, 768), (1280, 720)):
        ready.resize(width, height)
        assert dialog.sizeHint().width() <= width and dialog.height() <= height - 60
