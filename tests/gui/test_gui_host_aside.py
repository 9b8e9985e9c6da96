"""A host of the pool that stops answering during a run, seen in the window: the stage label and the
host lines say it was set aside while the other host carries its calls, and the run finishes."""

from __future__ import annotations

import test_gui_host_pool
from core.helpers import long_document
from docatlas.core.base.progress import HostLoad
from docatlas.gui.run_state import hosts_aside_text
from gui_helpers import wait_idle
from test_gui_fit import LAPTOPS, on_screen

second = test_gui_host_pool.second  # a second fake Ollama host


def test_a_host_that_stops_answering_is_named_while_the_other_carries_on(qtbot, make_window, server, second,
                                                                         tmp_path):
    server.latency = second.latency = 0.02
    folder = tmp_path / "long"
    folder.mkdir()
    (folder / "letters.txt").write_text(long_document(120), encoding="utf-8")
    window = make_window(ollama__host=f"{server.host}*2, {second.host}*2",
                         chunking__chunk_tokens=80, chunking__overlap_tokens=8)
    window.interaction.choose_folder = lambda *a, **k: folder
    second.stop()  # the second host has gone away: its calls get "connection refused"
    window.actions_by_name["add_folder"].trigger()

    said = f"{second.host} is not answering; its calls moved to the other host"
    stage = window.documents_panel.stage_label
    qtbot.waitUntil(lambda: window.ingestion.busy and said in stage.text(), timeout=30_000)
    assert stage.text().startswith("Extracting entities and relations — ")
    assert window.ingestion.run_state().phase == "running"  # the run goes on
    view = window.host_loads  # redrawn with the run's next tick (at most a quarter second later)
    qtbot.waitUntil(lambda: view.title.text() == "Ollama hosts (1 set aside):", timeout=5000)
    assert said in view.title.toolTip()
    aside_row = next(row for row in view.rows if row.text().startswith(second.host))
    assert aside_row.text().endswith("set aside") and "Not answering" in aside_row.toolTip()
    for width, height in LAPTOPS.values():  # the sentence wraps inside a laptop window
        window.resize(width, height)
        qtbot.waitUntil(lambda w=width: window.width() == w, timeout=5000)
        assert on_screen(aside_row, window) and on_screen(stage, window)
    wait_idle(qtbot, window, 60_000)
    assert window.workspace.store.counts()["chunks_pending"] == 0  # the other host did all of it
    assert not any(p == "/api/chat" for p in second.paths())


def test_the_sentence_for_hosts_set_aside():
    def load(name: str, state: str = "ok") -> HostLoad:
        return HostLoad(host=f"http://{name}:11434", remote=True, slots=2, state=state)

    assert hosts_aside_text([load("a"), load("b")]) == ""
    assert hosts_aside_text([load("a", "set aside"), load("b"), load("c")]) == (
        "a:11434 is not answering; its calls moved to the other hosts")
    assert hosts_aside_text([load("a", "set aside"), load("b", "set aside"), load("c")]) == (
        "a:11434 and b:11434 are not answering; their calls moved to the other host")
    assert hosts_aside_text([load("a", "set aside"), load("b", "set aside")]) == (
        "No Ollama host is answering (a:11434, b:11434); trying them again")
