"""A bad host entry in settings.json, seen from the window: the set-up dialog shows the user's text and
the sentence naming the entry, checks and saves nothing until it is fixed, then saves the fix."""

from __future__ import annotations

import json

import pytest
from docatlas.core.base import paths
from docatlas.core.base.settings import DEFAULT_HOST
from docatlas.gui.main_window import MainWindow
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication


@pytest.fixture
def window_with_bad_host(qtbot, server, workspace_dir):
    """A window that read settings.json itself, whose host has a bad second entry."""
    typed = f"{server.host}*3, gpu2:11434*many"
    paths.settings_path().parent.mkdir(parents=True, exist_ok=True)
    paths.settings_path().write_text(json.dumps({"ollama": {"host": typed, "parallel": 3}}), encoding="utf-8")
    window = MainWindow(workspace_dir, check_ollama=False)
    qtbot.addWidget(window)
    window.show()
    yield window, typed
    assert window.shutdown(10_000)
    window.close()


def test_the_set_up_dialog_shows_the_users_host_text_and_which_entry_is_bad(qtbot, server, window_with_bad_host):
    window, typed = window_with_bad_host
    assert "gpu2:11434*many" in window.settings_label.text()  # the window says it at once
    window.actions_by_name["ollama_setup"].trigger()
    dialog = window.ollama_dialog
    qtbot.waitUntil(dialog.isVisible, timeout=5000)
    QApplication.processEvents()  # the dialog's first check runs now
    assert dialog.host_edit.text() == typed  # what the user wrote, not the default
    message = dialog.status_label.text()
    assert message == ("The Ollama host entry 'gpu2:11434*many' must end in * and a whole number of calls from 1 "
                       f"to 16, e.g. gpu1:11434*3; until it is fixed DocAtlas uses {DEFAULT_HOST}.")
    assert dialog.status_label.isVisibleTo(dialog)
    assert not any(r["path"] == "/api/tags" for r in server.requests)  # a bad entry is not checked

    save = dialog.buttons.button(dialog.buttons.StandardButton.Save)
    qtbot.mouseClick(save, Qt.MouseButton.LeftButton)
    assert dialog.isVisible() and "'gpu2:11434*many'" in dialog.status_label.text()
    assert json.loads(paths.settings_path().read_text(encoding="utf-8"))["ollama"]["host"] == typed

    dialog.host_edit.selectAll()
    qtbot.keyClicks(dialog.host_edit, f"{server.host}*3")
    qtbot.mouseClick(dialog.check_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.last_probe is not None and dialog.last_probe.reachable, timeout=10_000)
    qtbot.mouseClick(save, Qt.MouseButton.LeftButton)
    assert not dialog.isVisible()
    assert json.loads(paths.settings_path().read_text(encoding="utf-8"))["ollama"]["host"] == f"{server.host}*3"
    assert window.settings.ollama.host == f"{server.host}*3" and not window.settings_label.isVisibleTo(window)


def test_choosing_a_profile_keeps_the_bad_host_text_and_the_window_still_says_so(qtbot, window_with_bad_host):
    window, typed = window_with_bad_host
    window.tabs.setCurrentWidget(window.prompts_tab)
    panel = window.prompts_tab
    qtbot.waitUntil(lambda: not panel.reading and panel.profile_combo.findData("compact") >= 0, timeout=10_000)
    panel.profile_combo.setCurrentIndex(panel.profile_combo.findData("compact"))
    panel.profile_combo.activated.emit(panel.profile_combo.currentIndex())  # what a pick in the list sends
    qtbot.waitUntil(lambda: window.settings.extraction.profile == "compact", timeout=10_000)
    saved = json.loads(paths.settings_path().read_text(encoding="utf-8"))
    assert saved["extraction"]["profile"] == "compact" and saved["ollama"]["host"] == typed
    assert window.settings_label.isVisibleTo(window) and "'gpu2:11434*many'" in window.settings_label.text()
