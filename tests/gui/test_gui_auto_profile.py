"""The window's default extraction profile is `auto`: tried on the first chunks, kept per model,
and the Prompts tab shows (and dates the graph against) the profile that was really used."""

from __future__ import annotations

import json

import pytest
from docatlas.core.base import paths
from docatlas.core.base.settings import load_settings
from docatlas.core.jobs.auto_profile import AUTO, TRIAL_ORDER
from docatlas.core.storage import health as stored_health
from docatlas.gui.main_window import MainWindow
from gui_helpers import wait_idle
from test_prompt_editor import open_prompts, wait_prompts


def _window_from_settings_file(qtbot, server, workspace_dir) -> MainWindow:
    """A window that reads settings.json itself, the way a double-click starts it."""
    path = paths.settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"ollama": {"host": server.host, "timeout_s": 10.0, "retries": 2,
                                           "backoff_s": 0.01}}), encoding="utf-8")
    window = MainWindow(workspace_dir, check_ollama=False)
    window.interaction.confirm = lambda *args, **kw: pytest.fail(f"unexpected question: {args}")
    window.interaction.inform = lambda *args, **kw: pytest.fail(f"unexpected message box: {args}")
    qtbot.addWidget(window)
    window.show()
    return window


def test_settings_without_a_profile_give_the_callers_default():
    assert load_settings(None).extraction.profile == "lean"  # the CLI's default: fewest reply tokens
    assert load_settings(None, profile_default=AUTO).extraction.profile == AUTO


def test_a_profile_in_the_file_wins_over_the_windows_default(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"extraction": {"profile": "compact"}}), encoding="utf-8")
    assert load_settings(path, profile_default=AUTO).extraction.profile == "compact"


def test_the_window_extracts_with_auto_and_the_prompts_tab_shows_the_profile_used(
        qtbot, server, workspace_dir, corpus):
    window = _window_from_settings_file(qtbot, server, workspace_dir)
    try:
        assert window.settings.extraction.profile == AUTO
        panel = open_prompts(qtbot, window)
        assert panel.profile_combo.currentText() == "auto"
        assert "the most entities the text backs" in panel.profile_combo.itemData(0, 3)  # its tooltip

        window.documents_panel.add_paths([corpus])
        wait_idle(qtbot, window)
        used = stored_health.chosen_profile(window.workspace.store, window.settings.ollama.model) or TRIAL_ORDER[0]
        panel.refresh_workspace()
        wait_prompts(qtbot, panel)
        assert panel._groups[used].text(0).endswith("(in use)")
        # the chunks were extracted with the profile auto resolved to: nothing is out of date
        assert not panel.stale_banner.isVisibleTo(panel), panel.stale_label.text()
    finally:
        assert window.shutdown(10_000)
        window.close()
