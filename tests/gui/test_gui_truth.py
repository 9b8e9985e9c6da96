"""The window tells the truth: retries are said, the title shows progress once, the Ollama
status is one and follows Ollama stopping and coming back, a failed question can be retried."""

from __future__ import annotations

from core.helpers import long_document
from docatlas.gui.views.chat_panel import COMMUNITY, EMPTY_WORKSPACE
from gui_helpers import wait_idle, wait_read
from PySide6.QtCore import Qt

QUESTION = "Who founded Harbor Analytics?"


def test_a_retried_call_is_said_in_the_stage_label_and_the_status_bar(qtbot, make_window, corpus, server):
    window = make_window(ollama__backoff_s=0.05, ollama__retries=3)
    panel = window.documents_panel
    seen: list[tuple[str, str]] = []
    window.ingestion.progressed.connect(lambda item: seen.append((panel.stage_label.text(),
                                                                 window.work_label.text())))
    server.fail_next("http500", times=2, paths=("/api/chat",))
    panel.add_paths([corpus / "alpha.txt"])
    wait_idle(qtbot, window)
    said = [pair for pair in seen if pair[0].startswith("Ollama is not answering")]
    assert ("Ollama is not answering; retrying, 1 of 3", ) == (said[0][0],)
    assert any(label.startswith("Ollama is not answering; retrying, 2 of 3") for label, _ in said)
    assert all(status.startswith("Ollama is not answering") and "ETA" not in status for _, status in said)
    assert panel.notice.text().startswith("Done: 1 document")  # the retries worked


def test_the_title_shows_the_percentage_and_the_name_once(qtbot, make_window, server, tmp_path):
    server.latency = 0.05  # the run lasts past several redraws (four a second)
    window = make_window(chunking__chunk_tokens=80, chunking__overlap_tokens=8)
    (tmp_path / "long.txt").write_text(long_document(40), encoding="utf-8")
    titles: list[str] = []  # what the title bar shows, each time it changes (drawn at most four times a second)
    window.windowTitleChanged.connect(titles.append)
    window.documents_panel.add_paths([tmp_path / "long.txt"])
    wait_idle(qtbot, window)
    name = window.workspace.name
    counted = [t for t in titles if "%" in t]
    assert len(counted) >= 2 and all(t.endswith(f"% — {name} — DocAtlas") for t in counted)
    assert all(t.count("DocAtlas") == 1 and t.count(name) == 1 for t in titles)
    assert titles[-1] == window.windowTitle() == f"{name} — DocAtlas"


def test_one_ollama_status_follows_ollama_stopping_and_coming_back(qtbot, make_window, server):
    window = make_window(check_ollama=True)
    qtbot.waitUntil(lambda: window.ollama_button.state == "ready", timeout=10_000)
    dialog = window.open_ollama_setup()
    qtbot.waitUntil(lambda: dialog.last_probe is not None and dialog.last_probe.reachable, timeout=10_000)
    server.stop()
    # the watch polls every 1.5 s: both the status bar and the open dialog turn to "not reachable"
    qtbot.waitUntil(lambda: window.ollama_button.state == "unreachable", timeout=10_000)
    qtbot.waitUntil(lambda: "not reachable" in dialog.status_label.text(), timeout=10_000)
    assert "#2e7d32" not in dialog.status_label.styleSheet()  # not in green
    assert "not reachable" in window.ollama_button.text()
    server.start()
    qtbot.waitUntil(lambda: window.ollama_button.state == "ready", timeout=10_000)
    qtbot.waitUntil(lambda: dialog.status_label.text().startswith("Connected"), timeout=10_000)


def test_a_failed_question_keeps_its_text_says_why_in_plain_words_and_retry_answers(qtbot, make_window, corpus,
                                                                                    server):
    window = make_window(ollama__retries=0)
    window.documents_panel.add_paths([corpus])
    wait_idle(qtbot, window)
    chat = window.chat_panel
    server.stop()
    chat.question_edit.setPlainText(QUESTION)
    qtbot.mouseClick(chat.ask_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: chat.task is None, timeout=20_000)
    failed = chat.turns[-1]
    assert chat.question_edit.toPlainText() == QUESTION  # the question is still in the box
    assert failed.retry_button.isVisible()
    assert "`" not in failed.note_label.text() and "not reachable" in failed.note_label.text()
    assert not chat.workspace.conversations.current.turns  # the failed turn is not kept for the next start
    window.ollama_dialog.close()

    server.start()
    qtbot.mouseClick(failed.retry_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: chat.task is None, timeout=20_000)
    answered = chat.turns[-1]
    assert answered.turn.answer and not answered.turn.error and len(chat.turns) == 1
    assert [t.question for t in chat.workspace.conversations.current.turns] == [QUESTION]


def test_an_empty_workspace_says_add_documents_first(qtbot, make_window, server):
    window = make_window()
    wait_read(qtbot, window)
    chat = window.chat_panel
    chat.question_edit.setPlainText(QUESTION)
    qtbot.mouseClick(chat.ask_button, Qt.MouseButton.LeftButton)
    assert chat.task is None and chat.empty_hint.text() == EMPTY_WORKSPACE
    assert window.statusBar().currentMessage().startswith("Add documents first")
    assert chat.question_edit.toPlainText() == QUESTION


def test_the_chat_header_picks_a_model_and_modes_explain_themselves(qtbot, make_window, server):
    server.models["llama3.2:3b"] = {"context_length": 8192, "family": "llama", "size": 2_000_000_000,
                                    "parameter_size": "3.2B"}
    window = make_window(check_ollama=True)
    box = window.chat_panel.model_box
    qtbot.waitUntil(lambda: box.count() == 2, timeout=10_000)  # the two chat models, not the embedding one
    assert box.currentText() == "● qwen2.5:7b"
    box.setCurrentIndex(box.findData("llama3.2:3b"))
    box.activated.emit(box.currentIndex())
    assert box.current_model == "llama3.2:3b" and box.itemText(box.findData("llama3.2:3b")) == "● llama3.2:3b"
    modes = window.chat_panel.mode_box
    window.chat_panel.set_mode("naive")
    assert "similar passages only" in modes.toolTip()
    assert modes.findData(COMMUNITY) < 0  # no reports yet: no community mode
    window.chat_panel.offer_community(True)
    assert modes.findData(COMMUNITY) >= 0 and "topic reports" in modes.itemData(modes.findData(COMMUNITY),
                                                                                Qt.ItemDataRole.ToolTipRole)


def test_a_question_asked_right_after_a_run_is_not_told_to_add_documents(qtbot, make_window, corpus):
    window = make_window()
    wait_read(qtbot, window)
    assert window.workspace.counts_known and window.workspace.counts.documents == 0
    chat = window.chat_panel
    asked = []
    # the moment a run ends: documents changed, the counts read before it have not been read again yet
    window.ingestion.documents_changed.connect(lambda: asked.append(chat.question_edit.toPlainText()) or (
        qtbot.mouseClick(chat.ask_button, Qt.MouseButton.LeftButton)))
    chat.question_edit.setPlainText(QUESTION)
    window.documents_panel.add_paths([corpus])
    qtbot.waitUntil(lambda: bool(asked), timeout=20_000)
    assert chat.empty_hint.text() != EMPTY_WORKSPACE or not chat.empty_hint.isVisible()
    qtbot.waitUntil(lambda: chat.task is None and not window.ingestion.busy, timeout=20_000)
    assert chat.turns and chat.turns[-1].turn.question == QUESTION
