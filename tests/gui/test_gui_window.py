"""The window itself: workspaces (new, open, recent), remembered layout, themes, the log, start-up."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from core.helpers import settings_for
from docatlas.core.base import paths
from docatlas.core.base.settings import save_settings
from docatlas.gui import app
from docatlas.gui.gui_state import load_state
from gui_helpers import statuses, wait_idle, wait_read
from PySide6.QtCore import QTimer, QUrl
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication


def test_workspaces_can_be_created_opened_and_reopened_from_the_recent_list(qtbot, make_window, corpus, tmp_path):
    window = make_window()
    first = window.workspace.folder
    window.documents_panel.add_paths([corpus / "alpha.txt"])
    wait_idle(qtbot, window)

    second = tmp_path / "not-yet" / "second-workspace"  # New makes the folder (and its parent)
    window.interaction.choose_new_folder = lambda title="": second
    window.actions_by_name["new_workspace"].trigger()
    assert window.workspace.folder == second.resolve() and (second / "docatlas.sqlite").exists()
    assert statuses(window) == {} and "second-workspace" in window.windowTitle()
    recent = [a.text() for a in window.recent_menu.actions()]
    assert recent[:2] == [str(second.resolve()), str(first.resolve())]

    window.recent_menu.actions()[1].trigger()
    assert window.workspace.folder == first.resolve()
    wait_read(qtbot, window)  # the reopened workspace is read in the background
    assert list(statuses(window)) == ["alpha.txt"]
    window.close()
    state = load_state()
    assert state.last_workspace == str(first.resolve()) and state.recent[1] == str(second.resolve())
    assert app.choose_workspace(None, state) == Path(paths.data_dir())  # DOCATLAS_DATA_DIR wins here


def test_a_workspace_that_cannot_be_opened_is_explained(qtbot, make_window, tmp_path):
    window = make_window()
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file, not a folder", encoding="utf-8")
    told: list[str] = []
    window.interaction.inform = lambda title, text, **kw: told.append(text)
    assert not window.open_workspace(blocker)
    assert told and str(blocker) in told[0]
    assert window.workspace.is_open


def test_size_layout_tab_and_mode_are_remembered(qtbot, make_window):
    window = make_window()
    window.resize(720, 560)  # within the offscreen screen (800 x 800); the width stops at the minimum
    window.tabs.setCurrentIndex(1)
    window.chat_panel.set_mode("local")
    window.close()
    state = load_state()
    assert state.geometry and state.window_state and state.tab == 1 and state.chat_mode == "local"

    again = make_window()
    assert again.tabs.currentIndex() == 1 and again.chat_panel.mode == "local"
    assert (again.width(), again.height()) == (max(720, again.minimumSizeHint().width()), 560)


def test_themes_and_the_log_menu(qtbot, make_window):
    window = make_window()
    window.actions_by_name["theme_dark"].trigger()
    assert QApplication.palette().color(QPalette.ColorRole.Window).lightness() < 80
    window.actions_by_name["theme_light"].trigger()
    assert QApplication.palette().color(QPalette.ColorRole.Window).lightness() > 180
    opened: list[QUrl] = []
    window.interaction.open_url = lambda url: opened.append(url) or True
    window.actions_by_name["open_log"].trigger()
    assert opened and opened[0].toLocalFile() == str(paths.log_dir() / "docatlas.log")
    assert window.actions_by_name["add_files"].shortcut().toString()
    assert window.actions_by_name["new_chat"].shortcut().toString()


def test_main_opens_the_window_and_returns_when_it_closes(qtbot, monkeypatch, server):
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # main installs its own hooks; put them back after
    monkeypatch.setattr(logging.getLogger(), "handlers", list(logging.getLogger().handlers))
    monkeypatch.setattr(logging.getLogger("docatlas"), "propagate", True)
    save_settings(settings_for(server), paths.settings_path())
    monkeypatch.setenv("OLLAMA_HOST", server.host)
    seen: dict[str, object] = {}

    def close_all() -> None:
        windows = [w for w in QApplication.topLevelWidgets() if w.isVisible()]
        seen["titles"] = [w.windowTitle() for w in windows]
        for w in windows:
            w.close()

    QTimer.singleShot(300, close_all)
    try:
        assert app.main(data_dir=str(paths.data_dir())) == 0
    finally:
        logging.captureWarnings(False)
    assert any(title.endswith(" — DocAtlas") and title.count("DocAtlas") == 1 for title in seen["titles"])


def test_wrong_values_in_settings_json_are_shown_in_the_window(qtbot, server, workspace_dir):
    import json

    from docatlas.gui.main_window import MainWindow

    save_settings(settings_for(server), paths.settings_path())
    data = json.loads(paths.settings_path().read_text(encoding="utf-8"))
    data["ollama"]["parallel"] = 99
    paths.settings_path().write_text(json.dumps(data), encoding="utf-8")
    window = MainWindow(workspace_dir, check_ollama=False)  # loads settings.json itself
    qtbot.addWidget(window)
    window.show()
    sentence = 'settings.json: "parallel" must be a whole number from 1 to 16; using 2.'
    assert window.settings.ollama.parallel == 2
    assert window.settings_label.isVisible() and window.settings_label.text() == sentence
    assert sentence in window.statusBar().currentMessage()
    window.apply_settings(window.settings)  # as after the Ollama set-up saved them: the file is right again
    assert not window.settings_label.isVisible()
    assert window.shutdown(10_000)
    window.close()
