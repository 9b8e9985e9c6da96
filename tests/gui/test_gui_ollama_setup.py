"""Ollama set-up: down at start then up, first run, model pickers, pulling, remote hosts, saving."""

from __future__ import annotations

import json

from docatlas.core.base import paths
from docatlas.core.llm.admin import host_label, is_remote
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel


def test_ollama_down_at_start_then_up(qtbot, make_window, server):
    server.stop()
    window = make_window(check_ollama=True)
    qtbot.waitUntil(lambda: window.ollama_dialog is not None and window.ollama_dialog.isVisible(), timeout=10_000)
    dialog = window.ollama_dialog
    assert "not reachable" in dialog.status_label.text() and "start Ollama" in dialog.status_label.text()
    assert "not reachable" in window.ollama_button.text() and window.ollama_button.state == "unreachable"
    assert host_label(server.host) in window.ollama_button.toolTip()
    assert "qwen2.5:7b" in window.ollama_button.text() and "nomic-embed-text" in window.ollama_button.toolTip()

    server.start()
    qtbot.mouseClick(dialog.check_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.last_probe is not None and dialog.last_probe.reachable, timeout=10_000)
    assert "2 models installed" in dialog.status_label.text()
    chat = [dialog.chat_box.itemText(i) for i in range(dialog.chat_box.count())]
    embed = [dialog.embed_box.itemText(i) for i in range(dialog.embed_box.count())]
    assert chat == ["qwen2.5:7b — 4.7 GB, qwen2 7.6B"]
    assert embed == ["nomic-embed-text — 274 MB, nomic-bert 137M"]
    qtbot.waitUntil(lambda: window.ollama_button.state == "ready", timeout=5000)
    assert "reachable" in window.ollama_button.text()


def test_first_run_opens_the_set_up_and_saving_writes_settings(qtbot, make_window, server):
    window = make_window(check_ollama=True, write_settings=False)
    assert window.first_run
    qtbot.waitUntil(lambda: window.ollama_dialog is not None and window.ollama_dialog.isVisible(), timeout=10_000)
    dialog = window.ollama_dialog
    qtbot.waitUntil(lambda: dialog.last_probe is not None and dialog.last_probe.reachable, timeout=10_000)
    dialog.context_spin.setValue(16384)
    dialog.parallel_spin.setValue(3)
    qtbot.mouseClick(dialog.buttons.button(dialog.buttons.StandardButton.Save), Qt.MouseButton.LeftButton)
    saved = json.loads(paths.settings_path().read_text(encoding="utf-8"))
    assert saved["ollama"]["max_context"] == 16384 and saved["ollama"]["parallel"] == 3
    assert saved["ollama"]["host"] == server.host and saved["ollama"]["model"] == "qwen2.5:7b"
    assert window.settings.ollama.parallel == 3
    assert not dialog.isVisible()


def test_missing_model_is_flagged_and_can_be_pulled_with_progress(qtbot, make_window, server):
    window = make_window(check_ollama=True, ollama__model="llama3.2:3b")
    qtbot.waitUntil(lambda: window.last_probe is not None, timeout=10_000)
    assert window.ollama_button.state == "missing" and "llama3.2:3b" in window.ollama_button.text()
    dialog = window.open_ollama_setup()
    assert dialog.chat_box.currentText() == "llama3.2:3b (not installed)"
    notices = [label.text() for label in dialog.findChildren(QLabel)]
    assert any("only time DocAtlas lets Ollama go online" in text for text in notices)
    steps = []
    dialog.pull_edit.setText("llama3.2:3b")
    qtbot.mouseClick(dialog.pull_button, Qt.MouseButton.LeftButton)
    dialog.pull_task.progressed.connect(steps.append)
    qtbot.waitUntil(lambda: dialog.pull_task is None, timeout=10_000)
    assert dialog.pull_status.text() == "llama3.2:3b is installed."
    assert dialog.pull_bar.value() == dialog.pull_bar.maximum()
    qtbot.waitUntil(lambda: dialog.chat_box.currentData() == "llama3.2:3b"
                    and "not installed" not in dialog.chat_box.currentText(), timeout=10_000)
    assert any(r["path"] == "/api/pull" for r in server.requests)


def test_a_remote_host_is_allowed_but_flagged(qtbot, make_window):
    assert is_remote("192.168.1.20:11434") and is_remote("https://ollama.example.org")
    assert not is_remote("127.0.0.1:11434") and not is_remote("localhost") and not is_remote("[::1]:11434")
    window = make_window()
    dialog = window.open_ollama_setup()
    assert not dialog.remote_label.isVisibleTo(dialog)
    dialog.host_edit.setText("192.168.1.20:11434")
    assert dialog.remote_label.isVisibleTo(dialog)
    assert "documents" in dialog.remote_label.text()
    remote = window.settings.with_overrides(ollama__host="192.168.1.20:11434")
    window.ollama_button.show_status(remote, None)  # shown without contacting that address
    assert "REMOTE: documents leave this computer" in window.ollama_button.text()
