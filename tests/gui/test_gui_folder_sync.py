"""The window follows a linked folder: a file added, one edited and one removed while it is open reach the
graph without a click (the same graph as `docatlas sync`), it catches up when it opens, and with the "ask"
setting gone files wait for the person's answer in the Documents tab."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from core.helpers import write_corpus
from docatlas.cli import main
from docatlas.gui.views.gone_files_bar import GoneFilesBar
from fixtures.folder_changes import AFTER as CHANGED
from fixtures.folder_changes import change_folder
from gui_helpers import wait_idle
from PySide6.QtCore import Qt

NEW_NAMES = {"elena costa", "omar haddad"}  # only in the edited alpha.txt and the added delta.txt


def document_names(window) -> set[str]:
    """The file names in the Documents table, as the person reads them."""
    from docatlas.gui.models.documents_model import NAME

    model = window.documents_panel.model
    return {model.index(r, NAME).data() for r in range(model.rowCount())}


def shown_entities(window) -> set[str]:
    """The names in the Graph tab's entity table."""
    table = window.graph_tab.tables.entities
    return {str(table.index(r, 0).data()).lower() for r in range(table.rowCount())}


def open_graph_table(qtbot, window) -> None:
    window.actions_by_name["tab_graph"].trigger()
    qtbot.mouseClick(window.graph_tab.toolbar.table, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.graph_tab.tables.isVisible(), timeout=10_000)


def add_folder_from_the_menu(qtbot, window, folder: Path) -> None:
    window.interaction.choose_folder = lambda *a, **k: folder
    window.actions_by_name["add_folder"].trigger()
    wait_idle(qtbot, window)


def exported(data_dir: Path, out: Path, capsys) -> tuple[set[str], set[str]]:
    assert main(["--data-dir", str(data_dir), "export", "--format", "json", str(out)]) == 0
    capsys.readouterr()
    data = json.loads(out.read_text(encoding="utf-8"))
    return {e["name"].lower() for e in data["entities"]}, {Path(d["path"]).name for d in data["documents"]}


def test_a_folder_changed_while_the_window_is_open_reaches_the_graph_like_docatlas_sync(
        qtbot, make_window, server, workspace_dir, tmp_path, capsys, monkeypatch):
    folder = write_corpus(tmp_path / "watched")
    window = make_window(sync__gone_files="remove", sync__poll_s=1.0)
    add_folder_from_the_menu(qtbot, window, folder)
    open_graph_table(qtbot, window)
    qtbot.waitUntil(lambda: "maria lopez" in shown_entities(window), timeout=20_000)
    assert not NEW_NAMES & shown_entities(window)

    change_folder(folder)  # no click after this
    qtbot.waitUntil(lambda: document_names(window) == set(CHANGED), timeout=30_000)
    qtbot.waitUntil(lambda: NEW_NAMES <= shown_entities(window), timeout=30_000)
    wait_idle(qtbot, window)
    window_graph = exported(workspace_dir, tmp_path / "window.json", capsys)

    # The same start and the same changes, synced headless, give the same graph.
    monkeypatch.setenv("OLLAMA_HOST", server.host)
    other = write_corpus(tmp_path / "headless")
    cli_ws = tmp_path / "cli-ws"
    assert main(["--data-dir", str(cli_ws), "ingest", str(other)]) == 0
    change_folder(other)
    assert main(["--data-dir", str(cli_ws), "sync", "--remove-gone"]) == 0
    capsys.readouterr()
    assert exported(cli_ws, tmp_path / "cli.json", capsys) == window_graph
    assert window_graph[1] == set(CHANGED)


def test_the_window_catches_up_at_start(qtbot, make_window, workspace_dir, tmp_path):
    folder = write_corpus(tmp_path / "watched")
    window = make_window(sync__gone_files="remove")
    add_folder_from_the_menu(qtbot, window, folder)
    assert window.shutdown(10_000)
    window.close()
    change_folder(folder)  # while no window is open

    window = make_window(sync__gone_files="remove")
    qtbot.waitUntil(lambda: document_names(window) == set(CHANGED), timeout=30_000)
    open_graph_table(qtbot, window)
    qtbot.waitUntil(lambda: NEW_NAMES <= shown_entities(window), timeout=30_000)


@pytest.mark.parametrize("size", [(1280, 720), (1366, 768)])
def test_gone_files_wait_for_the_persons_answer(qtbot, make_window, tmp_path, size):
    folder = write_corpus(tmp_path / "watched")
    window = make_window(sync__poll_s=1.0)  # gone_files: "ask", the default
    window.resize(*size)
    add_folder_from_the_menu(qtbot, window, folder)
    bar = window.documents_panel.findChild(GoneFilesBar)
    assert not bar.isVisible()

    (folder / "gamma.txt").unlink()
    qtbot.waitUntil(bar.isVisible, timeout=30_000)
    assert bar.label.text() == "1 file is gone from the linked folders: gamma.txt. Remove it from the graph?"
    assert bar.remove_button.geometry().right() <= bar.width() and bar.keep_button.isVisible()
    assert "gamma.txt" in document_names(window)  # nothing left the graph on its own
    qtbot.mouseClick(bar.keep_button, Qt.MouseButton.LeftButton)
    assert not bar.isVisible()

    (folder / "beta.md").unlink()
    qtbot.waitUntil(bar.isVisible, timeout=30_000)
    assert "1 file is gone" in bar.label.text() and "beta.md" in bar.label.text()  # gamma.txt was kept
    qtbot.mouseClick(bar.remove_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: document_names(window) == {"alpha.txt", "gamma.txt"}, timeout=30_000)
    assert not bar.isVisible()


def test_a_removed_linked_folder_is_not_taken_for_gone_files(qtbot, make_window, tmp_path):
    folder = write_corpus(tmp_path / "watched")
    window = make_window(sync__gone_files="remove", sync__poll_s=1.0)
    add_folder_from_the_menu(qtbot, window, folder)
    shutil.move(str(folder), str(tmp_path / "unplugged"))  # an unplugged drive, say
    qtbot.waitUntil(lambda: "is missing; reconnect it" in window.statusBar().currentMessage(), timeout=30_000)
    wait_idle(qtbot, window)
    assert document_names(window) == {"alpha.txt", "beta.md", "gamma.txt"}
