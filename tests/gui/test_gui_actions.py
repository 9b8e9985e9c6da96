"""Every control works, the way a person uses it.

The action walk triggers every QAction the window offers (menus, toolbars, the documents
table's context menu) with a real workspace open and checks that none raises, none opens an
unexpected modal dialog, and the status bar never reports an unexpected error. The tests after
it each use one control and check what a person would see."""

from __future__ import annotations

import os
from pathlib import Path

from docatlas.gui.graph.flow import FlowBar
from gui_helpers import wait_idle, wait_read
from PySide6.QtCore import Qt, QTimer, QUrl
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QMenu, QToolBar

HOSTILE = "<img src=file:///tmp/red.png width=64>Acme &amp; <b>Co</b>"


class Declines:
    """Answers every question of the graph explorer and the Prompts tab with "cancel"."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def stub_questions(window) -> list[str]:
    """Make every dialog of the window answer at once (cancel), recording what was asked."""
    asked: list[str] = []
    i = window.interaction
    i.confirm = lambda title, *a, **k: asked.append(title) or False
    i.inform = lambda title, *a, **k: asked.append(title)
    i.choose_files = lambda: []
    i.choose_folder = lambda *a, **k: None
    i.choose_new_folder = lambda *a, **k: None
    i.open_url = lambda url: asked.append(url.toString()) or True
    window.graph_tab.prompter = Declines()
    window.prompts_tab.files = Declines()
    return asked


def every_action(window) -> list[tuple[str, QAction]]:
    """(where, action) for the menu bar's menus (with submenus), the toolbars and the table's context menu."""
    found: list[tuple[str, QAction]] = []

    def walk(menu: QMenu, where: str) -> None:
        for action in menu.actions():
            if action.menu() is not None:
                if action.menu() is not window.recent_menu:  # switching workspaces: its own test
                    walk(action.menu(), f"{where} > {action.text()}")
            elif not action.isSeparator():
                found.append((f"{where} > {action.text()}", action))

    for top in window.menuBar().actions():
        if top.menu() is not None:
            walk(top.menu(), top.text())
    for bar in [*window.findChildren(QToolBar), *window.findChildren(FlowBar)]:
        for action in bar.actions():
            if not action.isSeparator() and action.isVisible() and action.text():
                found.append((f"toolbar {bar.windowTitle() or bar.objectName()} > {action.text()}", action))
    panel = window.documents_panel
    panel.table.selectRow(0)
    menu = panel.actions.context_menu(panel.table, panel.table.visualRect(panel.model.index(0, 0)).center(),
                                      popup=False)
    found += [(f"document row > {a.text()}", a) for a in menu.actions() if not a.isSeparator()]
    return found


def test_every_action_of_the_window_can_be_triggered(qtbot, make_window, corpus):
    window = make_window()
    window.documents_panel.add_paths([corpus])
    wait_idle(qtbot, window)
    asked = stub_questions(window)
    modals: list[str] = []

    def close_modals() -> None:
        modal = QApplication.activeModalWidget()
        if modal is not None:
            modals.append(modal.windowTitle())
            modal.close()

    guard = QTimer(interval=50, timeout=close_modals)
    guard.start()
    walked = []
    for where, action in every_action(window):
        if action is window.actions_by_name["quit"]:
            continue  # closing the window has its own tests
        action.trigger()
        qtbot.waitUntil(lambda: not window.ingestion.busy and not window.tasks.active, timeout=20_000)
        QApplication.processEvents()
        message = window.statusBar().currentMessage().lower()
        assert "unexpected" not in message, f"{where}: {message}"
        walked.append(where)
    guard.stop()
    assert modals == [], f"modal dialogs opened: {modals}"
    assert len(walked) >= 30 and any(w.startswith("&Edit") for w in walked)
    assert any(w.startswith("document row") for w in walked)
    assert window.workspace.is_open
    del asked


def test_edit_menu_undo_and_redo_take_back_a_graph_edit(qtbot, make_window, corpus):
    window = make_window()
    window.documents_panel.add_paths([corpus])
    wait_idle(qtbot, window)
    edit = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Edit")
    undo, redo = (next(a for a in edit.actions() if a.text().startswith(word)) for word in ("Undo", "Redo"))
    assert undo.shortcut().toString() == "Ctrl+Z" and "Ctrl+Shift+Z" in [k.toString() for k in redo.shortcuts()]
    assert undo is window.graph_tab.editor.undo_action  # the explorer's own action, not a copy
    assert not undo.isEnabled()


def test_ctrl_f_goes_to_the_filter_box_and_the_filter_narrows_the_table(qtbot, make_window, corpus):
    window = make_window()
    window.documents_panel.add_paths([corpus])
    wait_idle(qtbot, window)
    panel = window.documents_panel
    window.tabs.setCurrentIndex(0)
    window.actions_by_name["find"].trigger()
    assert window.focusWidget() is panel.search_box
    qtbot.keyClicks(panel.search_box, "ALPHA")
    wait_read(qtbot, window)  # the filter runs in SQL, off the GUI thread
    shown = [panel.model.index(r, 0).data() for r in range(panel.model.rowCount())]
    assert shown == ["alpha.txt"]


def test_a_document_row_offers_its_actions_and_double_click_shows_its_passages(qtbot, make_window, corpus):
    window = make_window()
    window.documents_panel.add_paths([corpus])
    wait_idle(qtbot, window)
    panel = window.documents_panel
    asked = stub_questions(window)
    panel.table.selectRow(0)
    qtbot.waitUntil(lambda: panel.preview.toPlainText() != "", timeout=10_000)
    name = panel.model.index(0, 0).data()
    assert (corpus / name).read_text(encoding="utf-8")[:20].strip() in panel.preview.toPlainText()
    menu = panel.actions.context_menu(panel.table, panel.table.visualRect(panel.model.index(0, 0)).center(),
                                      popup=False)
    texts = [a.text() for a in menu.actions() if not a.isSeparator()]
    assert texts == ["Open File", "Show Passages", "Preview Text", "Retry", "Delete…"]
    opened = next(a for a in menu.actions() if a.text() == "Open File")
    opened.trigger()
    assert asked[-1].endswith(name)
    window.interaction.open_url = lambda url: False  # no application for it
    opened.trigger()
    assert window.statusBar().currentMessage().startswith(f"No application on this computer opens {name}")
    index = panel.table.visualRect(panel.model.index(0, 0)).center()
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=index)
    qtbot.mouseDClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=index)
    viewer = window.chat_panel
    qtbot.waitUntil(lambda: viewer.viewer is not None and viewer.viewer.isVisible(), timeout=10_000)
    assert viewer.viewer.title_label.text()


def test_the_workspace_switcher_is_visible_and_switches(qtbot, make_window, tmp_path):
    window = make_window()
    first = window.workspace.folder
    assert window.open_workspace(tmp_path / "second")
    switcher = window.workspace_bar.switcher
    assert switcher.isVisible() and switcher.currentText() == "second"
    position = switcher.findData(str(first.resolve()))
    assert position > 0
    switcher.activated.emit(position)
    assert window.workspace.folder == first.resolve()
    assert switcher.currentText() == first.name


def test_hostile_names_and_answers_stay_text(qtbot, make_window, tmp_path):
    window = make_window()
    red = tmp_path / "red.png"
    red.write_bytes(b"\x89PNG\r\n\x1a\n")
    fifo = tmp_path / "pipe.png"
    os.mkfifo(fifo)  # reading it would block the GUI thread for ever
    chat = window.chat_panel
    from docatlas.gui.conversations import Turn
    turn = Turn(question=HOSTILE, answer=f"![x](file://{red}) ![y](file://{fifo}) <img src='file://{red}'> "
                                         f"![z](data:image/png;base64,{'A' * 200_000}) done",
                references=[{"chunk": 1, "title": HOSTILE, "document": HOSTILE, "label": "C1"}])
    widget = chat._add_turn_widget(turn)
    QApplication.processEvents()
    assert widget.question_label.textFormat() == Qt.TextFormat.PlainText and widget.question_label.text() == HOSTILE
    document = widget.answer_view.document()
    assert "done" in document.toPlainText() and "[image: x]" in document.toPlainText()  # no image, no freeze
    assert widget.answer_view.loadResource(2, QUrl(f"file://{red}")) is None
    button = widget.reference_buttons[0]
    assert HOSTILE in button.text().replace("&&", "&")
    assert "&lt;img" in button.toolTip() and "<img" not in button.toolTip()
    window.workspace_bar.show_workspaces(Path(tmp_path / HOSTILE.replace("/", "_")), [])
    tip = window.workspace_bar.switcher.itemData(0, Qt.ItemDataRole.ToolTipRole)
    assert "<img" not in tip and "&lt;img" in tip
    panel = window.documents_panel  # "Reading documents NAME" while a run reads a file
    assert all(label.textFormat() == Qt.TextFormat.PlainText for label in (panel.stage_label, panel.eta_label))



def test_an_export_says_where_it_wrote_and_shows_the_file(qtbot, make_window, tmp_path):
    window = make_window()
    asked = stub_questions(window)
    target = tmp_path / "out" / "prompts.json"
    target.parent.mkdir()
    window.prompts_tab.files.choose_export = lambda suggested: target
    window.tabs.setCurrentIndex(2)
    qtbot.mouseClick(window.prompts_tab.export_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: target.exists() and window.show_file_button.isVisible(), timeout=10_000)
    assert window.statusBar().currentMessage().startswith("Wrote ")
    assert str(target) in window.statusBar().currentMessage()
    qtbot.mouseClick(window.show_file_button, Qt.MouseButton.LeftButton)
    assert asked[-1] == QUrl.fromLocalFile(str(target.parent)).toString()


def test_ctrl_f_on_the_prompts_tab_finds_a_prompt(qtbot, make_window):
    window = make_window()
    window.tabs.setCurrentIndex(2)
    window.actions_by_name["find"].trigger()
    panel = window.prompts_tab
    assert window.focusWidget() is panel.search_box
    qtbot.keyClicks(panel.search_box, "keywords")
    visible = [panel.tree.topLevelItem(g).child(c).text(0) for g in range(panel.tree.topLevelItemCount())
               for c in range(panel.tree.topLevelItem(g).childCount())
               if not panel.tree.topLevelItem(g).child(c).isHidden()]
    total = sum(panel.tree.topLevelItem(g).childCount() for g in range(panel.tree.topLevelItemCount()))
    assert 0 < len(visible) < total
