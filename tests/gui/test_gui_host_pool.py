"""Several Ollama hosts in the window: each host's load during a run, the set-up dialog with two hosts."""

from __future__ import annotations

import json

import pytest
from chat_script import GuiResponder
from core.helpers import long_document
from docatlas.core.base import paths
from docatlas.core.base.progress import HostLoad
from docatlas.gui.views.host_loads import host_text
from fixtures.ollama_fixture import default_models
from fixtures.ollama_server import FakeOllama
from gui_helpers import wait_idle
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from test_gui_fit import LAPTOPS, on_screen


@pytest.fixture
def second():
    server = FakeOllama(default_models())
    server.responder = GuiResponder()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def chats(server: FakeOllama) -> int:
    return sum(1 for p in server.paths() if p == "/api/chat")


def test_each_host_load_is_shown_during_a_run_started_from_the_menu(qtbot, make_window, server, second, tmp_path):
    server.latency = second.latency = 0.02
    folder = tmp_path / "long"
    folder.mkdir()
    (folder / "letters.txt").write_text(long_document(120), encoding="utf-8")
    window = make_window(ollama__host=f"{server.host}*2, {second.host}*1",
                         chunking__chunk_tokens=80, chunking__overlap_tokens=8)
    window.interaction.choose_folder = lambda *a, **k: folder
    view = window.host_loads
    assert not view.isVisibleTo(window)  # no run yet
    window.actions_by_name["add_folder"].trigger()

    def both_answered() -> bool:
        loads = window.ingestion.last_progress.hosts if window.ingestion.last_progress else ()
        return window.ingestion.busy and len(loads) == 2 and all(h.calls > 0 for h in loads)

    qtbot.waitUntil(both_answered, timeout=30_000)
    # the host lines follow with the run's next redraw (at most a quarter second later)
    qtbot.waitUntil(lambda: view.isVisibleTo(window) and sum(row.isVisibleTo(window) for row in view.rows) == 2,
                    timeout=5000)
    first_row, second_row = (row.text() for row in view.rows[:2])
    assert first_row.startswith(f"{server.host} — this computer") and "/2 in flight" in first_row
    assert second_row.startswith(f"{second.host} — this computer") and "/1 in flight" in second_row
    assert "calls/min" in first_row and "calls/min" in second_row
    for width, height in LAPTOPS.values():  # the lines fit a laptop beside the run's controls
        window.resize(width, height)
        qtbot.waitUntil(lambda w=width: window.width() == w, timeout=5000)
        assert all(on_screen(row, window) and row.width() >= row.sizeHint().width() for row in view.rows[:2])
        assert on_screen(window.documents_panel.cancel_button, window)
    wait_idle(qtbot, window, 60_000)
    assert window.workspace.store.counts()["chunks_pending"] == 0
    assert chats(server) > 0 and chats(second) > 0  # the work was spread over both


def test_a_remote_host_is_named_in_its_load_line():
    remote = HostLoad(host="http://gpu1:11434", remote=True, slots=3, in_flight=2, calls=40, calls_per_minute=12.5)
    assert host_text(remote) == ("gpu1:11434 — another computer · 12.5 calls/min · 40 calls · "
                                 "2/3 in flight · ok")
    aside = HostLoad(host="http://127.0.0.1:11434", remote=False, slots=2, failures=3, state="set aside")
    assert "this computer" in host_text(aside) and "3 failed" in host_text(aside) and "set aside" in host_text(aside)


def test_the_set_up_dialog_takes_two_hosts_and_names_the_remote_one(qtbot, make_window, server, second):
    window = make_window()
    dialog = window.open_ollama_setup()
    qtbot.waitUntil(lambda: dialog.last_probe is not None, timeout=10_000)
    dialog.host_edit.clear()
    QTest.keyClicks(dialog.host_edit, f"{server.host}*3, {second.host}")
    assert not dialog.remote_label.isVisibleTo(dialog)  # both are 127.0.0.1
    qtbot.mouseClick(dialog.check_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.last_probe is not None and len(dialog.last_probe.hosts) == 2, timeout=10_000)
    assert dialog.status_label.text().startswith("Connected to 2 of 2 Ollama hosts")
    lines = dialog.hosts_label.text().splitlines()
    assert lines == [f"{server.host} — this computer: reachable, 2 models",
                     f"{second.host} — this computer: reachable, 2 models"]
    assert dialog.hosts_label.isVisibleTo(dialog)

    dialog.host_edit.setText(f"{server.host}*3, 192.168.1.20:11434")  # typed only: nothing contacts it
    assert dialog.remote_label.isVisibleTo(dialog)
    assert "192.168.1.20:11434" in dialog.remote_label.text() and server.host not in dialog.remote_label.text()

    dialog.host_edit.setText(f"{server.host}*3, {second.host}*many")
    dialog.buttons.button(dialog.buttons.StandardButton.Save).click()
    assert dialog.isVisible() and "*many" in dialog.status_label.text()  # one sentence, nothing saved
    dialog.host_edit.setText(f"{server.host}*3, {second.host}")
    dialog.buttons.button(dialog.buttons.StandardButton.Save).click()
    saved = json.loads(paths.settings_path().read_text(encoding="utf-8"))
    assert saved["ollama"]["host"] == f"{server.host}*3, {second.host}"
    assert window.settings.ollama.host == f"{server.host}*3, {second.host}"
    assert window.settings.ollama.total_parallel == 3 + window.settings.ollama.parallel
