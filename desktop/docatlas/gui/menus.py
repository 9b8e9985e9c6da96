"""The main window's menus and keyboard shortcuts.

The menus know the window only as a `MenuHost` (defined here), so the import goes one way:
main_window -> menus.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMenu, QMenuBar, QTabWidget

from docatlas.gui.dialogs.about import show_about
from docatlas.gui.gui_state import THEMES, GuiState
from docatlas.gui.ingestion import IngestionController
from docatlas.gui.views.chat_panel import ChatPanel
from docatlas.gui.views.documents_panel import DocumentsPanel
from docatlas.gui.views.ungrounded import show_ungrounded_review
from docatlas.gui.workspace import Workspace


class MenuHost(Protocol):
    """What the menus need of the main window (a QMainWindow): its panels and its commands."""

    state: GuiState
    workspace: Workspace
    tabs: QTabWidget
    chat_dock: QDockWidget
    documents_panel: DocumentsPanel
    ingestion: IngestionController
    chat_panel: ChatPanel
    recent_menu: QMenu
    tasks: object  # the window's TaskRunner
    edit_menu: QMenu

    def menuBar(self) -> QMenuBar:
        """The window's menu bar."""

    def close(self) -> bool:
        """Close the window."""

    def new_workspace(self) -> None:
        """Create a workspace."""

    def choose_workspace(self) -> None:
        """Open another workspace."""

    def refresh(self) -> None:
        """Read the workspace again."""

    def focus_question(self) -> None:
        """Go to the question box."""

    def find_in_tab(self) -> None:
        """Put the cursor in the current tab's search box."""

    def set_theme(self, theme: str) -> None:
        """Use another theme."""

    def open_ollama_setup(self, reason: str = "") -> object:
        """Show the Ollama set-up dialog."""

    def check_ollama(self) -> None:
        """Probe Ollama again."""

    def open_log_file(self) -> None:
        """Open the log."""

    def open_log_folder(self) -> None:
        """Open the log's folder."""




def _action(menu: QMenu, text: str, slot, shortcut: QKeySequence | str | None = None, tip: str = "") -> QAction:
    action = menu.addAction(text)
    action.triggered.connect(lambda _checked=False: slot())
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    if tip:
        action.setStatusTip(tip)
    return action


def build_menus(window: MenuHost) -> dict[str, QAction]:
    """Create the menu bar; return the actions by name (tests and state updates use them)."""
    bar = window.menuBar()
    actions: dict[str, QAction] = {}
    Std = QKeySequence.StandardKey

    file = bar.addMenu("&File")
    actions["new_workspace"] = _action(file, "&New Workspace…", window.new_workspace, "Ctrl+Shift+N",
                                       "Create a workspace (a folder holding one graph)")
    actions["open_workspace"] = _action(file, "&Open Workspace…", window.choose_workspace, "Ctrl+Shift+O")
    window.recent_menu = file.addMenu("Open &Recent")
    file.addSeparator()
    actions["add_files"] = _action(file, "&Add Files…", lambda: window.documents_panel.add_files(), Std.Open)
    actions["add_folder"] = _action(file, "Add &Folder…", lambda: window.documents_panel.add_folder(),
                                    "Ctrl+Shift+A")
    file.addSeparator()
    actions["quit"] = _action(file, "&Quit", window.close, Std.Quit)

    window.edit_menu = bar.addMenu("&Edit")
    fill_edit_menu(window)

    documents = bar.addMenu("&Documents")
    actions["pause"] = _action(documents, "&Pause", lambda: window.ingestion.pause(), "Ctrl+Shift+P")
    actions["resume"] = _action(documents, "&Resume", lambda: window.ingestion.resume(), "Ctrl+Shift+R")
    actions["cancel"] = _action(documents, "&Cancel Run", lambda: window.ingestion.cancel(), "Ctrl+.")
    actions["retry"] = _action(documents, "Retry &Failed", lambda: window.ingestion.retry_failed())
    actions["review_ungrounded"] = _action(
        documents, "Review &Ungrounded Records…",
        lambda: show_ungrounded_review(window.tasks, window.workspace.db_path, window),  # type: ignore[arg-type]
        tip="Records the model gave that their text does not contain; add one to the graph")
    actions["delete"] = _action(documents, "&Delete…", lambda: window.documents_panel.delete_selected(), Std.Delete)
    documents.addSeparator()
    actions["refresh"] = _action(documents, "Re&fresh", lambda: window.refresh(), Std.Refresh)
    actions["find"] = _action(documents, "&Find in This Tab", window.find_in_tab, Std.Find,
                              "Search the current tab: documents by name, the graph by entity, prompts by text")

    chat = bar.addMenu("&Chat")
    actions["new_chat"] = _action(chat, "&New Chat", lambda: window.chat_panel.new_chat(), Std.New)
    actions["focus_question"] = _action(chat, "&Ask a Question", window.focus_question, "Ctrl+L")
    actions["stop_answer"] = _action(chat, "&Stop Answer", lambda: window.chat_panel.stop())

    view = bar.addMenu("&View")
    for number, name in enumerate(("Documents", "Graph", "Prompts")):
        actions[f"tab_{name.lower()}"] = _action(view, name, lambda n=number: window.tabs.setCurrentIndex(n),
                                                 f"Ctrl+{number + 1}")
    actions["toggle_chat"] = window.chat_dock.toggleViewAction()
    actions["toggle_chat"].setShortcut(QKeySequence("Ctrl+4"))
    view.addAction(actions["toggle_chat"])
    view.addSeparator()
    theme_menu = view.addMenu("&Theme")
    group = QActionGroup(window)  # the host is a QMainWindow
    for theme in THEMES:
        action = _action(theme_menu, theme.capitalize(), lambda t=theme: window.set_theme(t))
        action.setCheckable(True)
        action.setChecked(window.state.theme == theme)
        group.addAction(action)
        actions[f"theme_{theme}"] = action

    settings = bar.addMenu("&Settings")
    actions["ollama_setup"] = _action(settings, "&Ollama Set-up…", lambda: window.open_ollama_setup(),
                                      Std.Preferences)
    if actions["ollama_setup"].shortcut().isEmpty():  # no standard Preferences key on this desktop
        actions["ollama_setup"].setShortcut(QKeySequence("Ctrl+,"))
    actions["check_ollama"] = _action(settings, "&Check Ollama Again", lambda: window.check_ollama())

    help_menu = bar.addMenu("&Help")
    actions["open_log"] = _action(help_menu, "Open &Log File", window.open_log_file,
                                  tip="Open the log with the full detail of every error")
    actions["open_log_folder"] = _action(help_menu, "Open Log &Folder", window.open_log_folder)
    help_menu.addSeparator()
    actions["about"] = _action(help_menu, "&About DocAtlas", lambda: show_about(window, window.workspace.folder),
                               tip="Version, folders, and the licences of the bundled components")
    return actions


def fill_edit_menu(window: MenuHost) -> None:
    """Edit > Undo and Redo: the graph explorer's own undo actions (Ctrl+Z, Ctrl+Shift+Z), so an
    edit made in the graph can be taken back from any tab. Called again for each workspace."""
    menu = window.edit_menu
    menu.clear()
    graph = getattr(window, "graph_tab", None)
    editor = getattr(graph, "editor", None)
    undo, redo = getattr(editor, "undo_action", None), getattr(editor, "redo_action", None)
    redo_keys = [QKeySequence("Ctrl+Shift+Z")]
    redo_keys += [k for k in QKeySequence.keyBindings(QKeySequence.StandardKey.Redo) if k not in redo_keys]
    for action, keys in ((undo, QKeySequence.keyBindings(QKeySequence.StandardKey.Undo)), (redo, redo_keys)):
        if action is None:
            continue
        action.setShortcuts(keys)
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        menu.addAction(action)
    menu.setEnabled(undo is not None)
