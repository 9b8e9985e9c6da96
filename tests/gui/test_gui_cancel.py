"""The window's Cancel with calls in flight that no timeout would end soon: the connections are cut."""

from __future__ import annotations

import threading

from gui_helpers import wait_idle
from PySide6.QtCore import Qt
from test_gui_runs import SMALL_CHUNKS, long_corpus


def calls_running() -> list[str]:
    """The extraction pool's threads still alive (each one is blocked in a model call)."""
    return [t.name for t in threading.enumerate() if t.name.startswith("docatlas-llm_")]


def chat_calls(server) -> int:
    return sum(1 for p in server.paths() if p == "/api/chat")


def test_cancel_cuts_calls_waiting_for_their_first_byte(qtbot, make_window, server, tmp_path):
    server.latency = 600.0  # every call thinks for ten minutes before its first byte
    window = make_window(ollama__timeout_s=120.0, **SMALL_CHUNKS)  # no deadline would end them soon
    panel = window.documents_panel
    panel.add_paths([long_corpus(tmp_path)])
    qtbot.waitUntil(lambda: chat_calls(server) >= 2 and panel.cancel_button.isEnabled(), timeout=20_000)
    qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)
    # the calls in flight end too, not two minutes later: their reads were cut under them
    qtbot.waitUntil(lambda: not calls_running(), timeout=20_000)
    assert window.workspace.store.counts()["chunks_pending"] > 0
    assert "still pending" in panel.notice.text()
