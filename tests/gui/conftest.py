"""GUI test set-up: offscreen Qt, a fake Ollama that extracts, finds keywords and answers,
and windows that are always shut down (their background threads stopped) after a test."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from chat_script import GuiResponder
from core.helpers import settings_for, write_corpus
from docatlas.core.base import paths
from docatlas.core.base.settings import save_settings
from docatlas.gui.main_window import MainWindow


@pytest.fixture
def server(fake_ollama):
    """The fake Ollama, scripted for extraction and answers."""
    fake_ollama.responder = GuiResponder()
    return fake_ollama


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """Three small documents with people and organisations in them."""
    return write_corpus(tmp_path / "corpus")


@pytest.fixture
def workspace_dir() -> Path:
    """The per-test workspace (DOCATLAS_DATA_DIR)."""
    return paths.data_dir()


@pytest.fixture
def make_window(qtbot, server, workspace_dir):
    """Build main windows on the fake server; settings.json is written first (not a first run)."""
    windows: list[MainWindow] = []

    def make(workspace: Path | None = None, check_ollama: bool = False, write_settings: bool = True,
             **overrides: object) -> MainWindow:
        settings = settings_for(server, **overrides)
        if write_settings:
            save_settings(settings, paths.settings_path())
        window = MainWindow(workspace or workspace_dir, settings=settings, check_ollama=check_ollama)
        window.interaction.confirm = lambda *args, **kw: pytest.fail(f"unexpected question: {args}")
        window.interaction.inform = lambda *args, **kw: pytest.fail(f"unexpected message box: {args}")
        window.interaction.open_url = lambda url: pytest.fail(f"unexpected open_url: {url}")
        window.interaction.choose_new_folder = lambda *args, **kw: pytest.fail(f"unexpected folder dialog: {args}")
        qtbot.addWidget(window)
        window.show()
        windows.append(window)
        return window

    yield make
    for window in windows:
        assert window.shutdown(10_000), "background work did not stop"
        window.close()
