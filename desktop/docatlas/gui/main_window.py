"""The main window: documents, graph and prompts tabs, the chat dock, menus, status bar.

It wires the panels to one workspace and one `TaskRunner`, keeps the Ollama indicator
current, shows what was wrong in settings.json, remembers its size and layout, and shuts
down cleanly: closing during a run stops the run first and closes when the runner reports
`idle` (finished work is kept; the next start offers to resume). The status
bar's counts come from the run's `Progress` while it runs and from the background read of
the workspace otherwise: the GUI thread runs no SQL for them.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QByteArray, Qt, QTimer, QUrl
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QLabel,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QTabWidget,
)

from docatlas.core.base import paths
from docatlas.core.base.errors import DocAtlasError
from docatlas.core.base.settings import Settings, load_settings
from docatlas.core.jobs.auto_profile import AUTO
from docatlas.core.llm.admin import OllamaProbe
from docatlas.gui.dialogs.interaction import Interaction
from docatlas.gui.dialogs.ollama_setup import OllamaSetupDialog
from docatlas.gui.folder_sync import FolderSync
from docatlas.gui.formatting import button_text, duration, plain_tip
from docatlas.gui.graph import GraphExplorer
from docatlas.gui.gui_state import GuiState, load_state, save_state
from docatlas.gui.ingestion import IngestionController
from docatlas.gui.menus import build_menus, fill_edit_menu
from docatlas.gui.ollama_watch import OllamaWatch
from docatlas.gui.prompts.panel import PromptsPanel
from docatlas.gui.tasks import TaskFailure, TaskRunner
from docatlas.gui.theme import apply_theme, error_style
from docatlas.gui.views.chat_panel import ChatPanel
from docatlas.gui.views.documents_panel import DocumentsPanel
from docatlas.gui.views.gone_files_bar import GoneFilesBar
from docatlas.gui.views.host_loads import HostLoadsView
from docatlas.gui.views.ollama_status import OllamaStatusButton
from docatlas.gui.views.workspace_bar import WorkspaceBar
from docatlas.gui.window_fit import fit_to_screen, keep_on_screen
from docatlas.gui.workspace import READS, Workspace

log = logging.getLogger("docatlas.gui.window")

ERROR_SHOWN_MS = 30_000
WORK_TEXT_CHARS = 64


class MainWindow(QMainWindow):
    """DocAtlas's one window."""

    def __init__(self, workspace: Path, settings: Settings | None = None, state: GuiState | None = None,
                 check_ollama: bool = True):
        super().__init__()
        self.first_run = not paths.settings_path().exists()
        self.settings = settings or load_settings(paths.settings_path(), profile_default=AUTO)
        self.state = state or load_state()
        self.interaction = Interaction(self)
        self.tasks = TaskRunner(self)
        self.ollama_watch = OllamaWatch(self.tasks, lambda: self.settings, self)
        self.ollama_watch.changed.connect(self._on_probe)
        self._first_check_done = False
        self.ollama_dialog: OllamaSetupDialog | None = None
        self._closing = False
        self.setAcceptDrops(True)
        fit_to_screen(self)
        self.workspace_bar = WorkspaceBar(self.open_workspace, self.new_workspace, self.choose_workspace, self)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.workspace_bar)

        self.tabs = QTabWidget()
        self.graph_tab: GraphExplorer | None = None  # one per workspace, made with it
        self.prompts_tab: PromptsPanel | None = None  # one per workspace, made with it
        self.setCentralWidget(self.tabs)
        self.chat_dock = QDockWidget("Chat", self)
        self.chat_dock.setObjectName("chat_dock")
        self.chat_dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                                   | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                                   | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.chat_dock)
        self._build_status_bar()

        self.workspace = Workspace(workspace)
        self._install_workspace()
        self.actions_by_name = build_menus(self)
        self.update_recent_menu()
        self._restore_layout()
        self.show_ollama_status()
        self.show_settings_warnings()
        if check_ollama:
            QTimer.singleShot(0, self.ollama_watch.start)

    # -- building ----------------------------------------------------------------------
    def _build_status_bar(self) -> None:
        self.work_label = QLabel("Ready", textFormat=Qt.TextFormat.PlainText)
        self.work_label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.work_bar = QProgressBar(maximumWidth=160, textVisible=False)
        self.work_bar.setRange(0, 1)
        self.work_bar.hide()
        self.settings_label = QLabel(textFormat=Qt.TextFormat.PlainText, wordWrap=False)
        self.settings_label.hide()
        self.ollama_button = OllamaStatusButton()
        self.ollama_button.clicked.connect(lambda: self.open_ollama_setup())
        self.show_file_button = QPushButton("Show File", clicked=lambda: self._show_written_file())
        self.show_file_button.setToolTip("Open the folder that holds the file just written")
        self.show_file_button.hide()
        self.written: Path | None = None
        bar = self.statusBar()
        bar.addPermanentWidget(self.show_file_button)
        bar.addPermanentWidget(self.settings_label)
        bar.addPermanentWidget(self.work_label)
        bar.addPermanentWidget(self.work_bar)
        bar.addPermanentWidget(self.ollama_button)

    def _install_workspace(self) -> None:
        """Create the panels for `self.workspace` (replacing those of an earlier one)."""
        self.ingestion = IngestionController(self.tasks, self.workspace, lambda: self.settings, self)
        self.documents_panel = DocumentsPanel(self.ingestion, self.interaction)
        self.folder_sync = FolderSync(self.tasks, self.workspace, self.ingestion, lambda: self.settings, self)
        self.documents_panel.layout().insertWidget(2, GoneFilesBar(self.folder_sync))  # under the resume banner
        self.host_loads = HostLoadsView(self.ingestion)  # each Ollama host's load, under the run's progress
        self.documents_panel.layout().insertWidget(self.documents_panel.layout().indexOf(self.documents_panel.notice),
                                                   self.host_loads)
        self.chat_panel = ChatPanel(self.tasks, self.workspace, lambda: self.settings, self.interaction)
        old_prompts, old_graph = self.prompts_tab, self.graph_tab
        self.graph_tab = GraphExplorer(self.workspace.store, tasks=self.tasks)
        self.graph_tab.open_passage.connect(lambda _document, chunk, marks: self.show_passage(chunk, marks))
        self.graph_tab.failed.connect(self.show_error)
        self.prompts_tab = PromptsPanel(self.tasks, self.workspace, lambda: self.settings, self.interaction,
                                        self.ingestion)
        self.prompts_tab.message.connect(lambda text: self.statusBar().showMessage(text, ERROR_SHOWN_MS))
        self.prompts_tab.sets.settings_saved.connect(self._profile_chosen)
        self.prompts_tab.sets.wrote.connect(self.show_written)
        if self.state.chat_mode:
            self.chat_panel.set_mode(self.state.chat_mode)
        current = self.tabs.currentIndex()
        self.tabs.clear()
        self.tabs.addTab(self.documents_panel, "Documents")
        self.tabs.addTab(self.graph_tab, "Graph")
        self.tabs.addTab(self.prompts_tab, "Prompts")
        self.tabs.setCurrentIndex(max(0, current))
        for old_tab in (old_prompts, old_graph):
            if old_tab is not None:
                old_tab.shutdown()
                old_tab.deleteLater()
        old = self.chat_dock.widget()
        self.chat_dock.setWidget(self.chat_panel)
        if old is not None:
            old.deleteLater()
        self.ingestion.redraw_due.connect(self._show_work)
        self.ingestion.reader.counts_read.connect(lambda _counts: self._show_idle())
        self.ingestion.state_changed.connect(self._show_idle)
        self.ingestion.documents_changed.connect(self.graph_tab.reload)
        self.ingestion.failed.connect(self._on_run_failed)
        self.ingestion.finished.connect(lambda text: self.statusBar().showMessage(text, ERROR_SHOWN_MS))
        self.ingestion.ollama_needed.connect(self.open_ollama_setup)
        self.documents_panel.passage_requested.connect(self.show_passage)
        self.documents_panel.message.connect(lambda text: self.statusBar().showMessage(text, ERROR_SHOWN_MS))
        self.folder_sync.message.connect(lambda text: self.statusBar().showMessage(text, ERROR_SHOWN_MS))
        self.chat_panel.message.connect(lambda text: self.statusBar().showMessage(text, ERROR_SHOWN_MS))
        self.chat_panel.ollama_needed.connect(self.open_ollama_setup)
        self.chat_panel.model_box.show_models(self.last_probe)
        self.ingestion.documents_changed.connect(self.chat_panel.check_reports)
        self.chat_panel.check_reports()
        self.setWindowTitle(f"{self.workspace.name} — DocAtlas")
        self.state.remember_workspace(self.workspace.folder)
        if getattr(self, "edit_menu", None) is not None:
            fill_edit_menu(self)
        self.graph_tab.reload()
        self._show_idle()
        self.folder_sync.start()  # catches up with the linked folders, then follows them

    def _restore_layout(self) -> None:
        if self.state.geometry:
            self.restoreGeometry(QByteArray.fromBase64(self.state.geometry.encode()))
        if self.state.window_state:
            self.restoreState(QByteArray.fromBase64(self.state.window_state.encode()))
        else:
            self.resizeDocks([self.chat_dock], [520], Qt.Orientation.Horizontal)
        self.tabs.setCurrentIndex(min(max(0, self.state.tab), self.tabs.count() - 1))
        keep_on_screen(self)

    # -- workspaces --------------------------------------------------------------------
    def open_workspace(self, folder: Path) -> bool:
        """Switch to the workspace in `folder` (created if new); False if it cannot be opened."""
        if self.tasks.active and (self.ingestion.busy or self.chat_panel.task is not None):
            self.show_error("Wait for the current run or answer to finish (or cancel it), then switch workspaces.")
            return False
        try:
            workspace = Workspace(folder)
        except (DocAtlasError, OSError) as exc:
            message = exc.message if isinstance(exc, DocAtlasError) else \
                f"The folder {folder} cannot be used as a workspace ({exc.strerror}); choose another."
            log.warning("cannot open workspace %s: %s", folder, message)
            self.state.forget_workspace(str(folder))
            self.update_recent_menu()
            self.interaction.inform("Cannot Open Workspace", message)
            return False
        self.folder_sync.shutdown()
        self.folder_sync.deleteLater()
        self.documents_panel.shutdown()
        self.chat_panel.shutdown()
        self.workspace.close()
        self.workspace = workspace
        self._install_workspace()
        self.update_recent_menu()
        save_state(self.state)
        self.statusBar().showMessage(f"Opened workspace {workspace.folder}.", ERROR_SHOWN_MS)
        return True

    def new_workspace(self) -> None:
        """Create a workspace in a new folder the person names (the folder is made for them)."""
        folder = self.interaction.choose_new_folder("New Workspace: Name Its Folder")
        if folder is None:
            return
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.interaction.inform("Cannot Create Workspace",
                                    f"The folder {folder} could not be created ({exc.strerror}); choose another place.")
            return
        self.open_workspace(folder)

    def choose_workspace(self) -> None:
        """Open a workspace folder the person chooses."""
        folder = self.interaction.choose_folder("Open Workspace")
        if folder is None:
            return
        if not paths.database_path(folder).exists() and not self.interaction.confirm(
                "Create Workspace", f"{folder} is not a DocAtlas workspace yet.", "Make It a Workspace",
                "DocAtlas keeps its database (the graph and the text of your documents) in this folder."):
            return
        self.open_workspace(folder)

    def update_recent_menu(self) -> None:
        """List the recent workspaces in File > Open Recent."""
        menu = getattr(self, "recent_menu", None)
        if menu is None:
            return
        menu.clear()
        for text in self.state.recent:
            action = menu.addAction(button_text(text))
            action.triggered.connect(lambda _c=False, p=text: self.open_workspace(Path(p)))
        menu.setEnabled(bool(self.state.recent))
        self.workspace_bar.show_workspaces(self.workspace.folder, self.state.recent)

    # -- Ollama ------------------------------------------------------------------------
    @property
    def last_probe(self) -> OllamaProbe | None:
        """What the last check of the configured host found (None: not checked yet)."""
        return self.ollama_watch.probe

    def check_ollama(self) -> None:
        """Check the Ollama host in the background; the status bar and the dialog show the result."""
        if not self._closing:
            self.ollama_watch.check()

    def _on_probe(self, probe: OllamaProbe | None) -> None:
        self.show_ollama_status()
        self.chat_panel.model_box.show_models(probe)
        if probe is None:
            return
        first_check, self._first_check_done = not self._first_check_done, True
        if first_check and (self.first_run or not probe.reachable):
            self.open_ollama_setup(probe.error)
        elif self.ollama_dialog is not None and self.ollama_dialog.isVisible() and \
                self.ollama_dialog.edited_settings().ollama.host == self.settings.ollama.host:
            self.ollama_dialog.show_probe(probe)

    def show_settings_warnings(self) -> None:
        """Say which values of settings.json were wrong and what is used instead (until settings are saved)."""
        warnings = self.settings.warnings
        self.settings_label.setVisible(bool(warnings))
        if not warnings:
            self.settings_label.clear()
            return
        more = f" (and {len(warnings) - 1} more: see the tooltip)" if len(warnings) > 1 else ""
        self.settings_label.setText(warnings[0] + more)
        self.settings_label.setToolTip("\n".join(warnings) + "\nFix settings.json, or save the settings "
                                       "(Ollama set-up) to write correct values.")
        self.statusBar().showMessage(" ".join(warnings), ERROR_SHOWN_MS)

    def show_ollama_status(self) -> None:
        """Update the status bar's Ollama indicator."""
        self.ollama_button.show_status(self.settings, self.last_probe)

    def open_ollama_setup(self, reason: str = "") -> OllamaSetupDialog:
        """Show the Ollama set-up dialog (not modal); `reason` says why it opened."""
        if self.ollama_dialog is None:
            self.ollama_dialog = OllamaSetupDialog(self.settings, self.tasks, self.interaction, self)
            self.ollama_dialog.settings_saved.connect(self.apply_settings)
            self.ollama_dialog.probed.connect(self._on_dialog_probe)
        dialog = self.ollama_dialog
        if self.last_probe is not None:
            dialog.show_probe(self.last_probe)
        if reason:
            dialog.status_label.setText(reason)
            dialog.status_label.setStyleSheet(error_style())
        dialog.show()
        dialog.raise_()
        return dialog

    def _on_dialog_probe(self, probe: OllamaProbe) -> None:
        if probe.host and self.ollama_dialog is not None and \
                self.ollama_dialog.edited_settings().ollama.host == self.settings.ollama.host:
            self.ollama_watch.set_probe(probe)

    def apply_settings(self, settings: Settings) -> None:
        """Use new settings (just saved, so settings.json is right again) from now on and check Ollama again."""
        kept = settings.unusable_host  # a save that did not touch a bad host text wrote it back as it was
        self.settings = replace(settings, warnings=(kept.sentence(),) if kept is not None else ())
        self.first_run = False
        self.ollama_watch.forget()
        self.show_settings_warnings()
        self.check_ollama()
        self.statusBar().showMessage("Settings saved.", ERROR_SHOWN_MS)

    def _profile_chosen(self, settings: Settings) -> None:
        """The Prompts tab saved another extraction profile: use it (the Ollama dialog keeps it too)."""
        if self.ollama_dialog is not None:
            self.ollama_dialog.settings = settings
        self.apply_settings(settings)

    # -- status ------------------------------------------------------------------------
    def _show_work(self, _item: object = None) -> None:
        """Show the run as `IngestionController.run_state` describes it: status bar, bar, title."""
        if not self.workspace.is_open:
            return
        state = self.ingestion.run_state()
        self.setWindowTitle(state.window_title(self.workspace.name))
        if state.active:
            counted = f" {state.done}/{state.total}" if state.total and state.phase != "retrying" else ""
            eta = f" · ETA {duration(state.eta)}" if state.eta and state.phase == "running" else ""
            failed = f" · {len(state.failures)} failed" if state.failures else ""
            if state.phase in ("pausing", "paused", "cancelling"):
                counted = ""
            self._set_work_text(f"{state.text}{counted}{eta}{failed}")
            self.work_bar.setRange(0, max(1, state.total))
            self.work_bar.setValue(min(state.done, max(1, state.total)))
            self.work_bar.show()
            return
        counts = self.workspace.counts
        failed = f" ({counts.failed} failed)" if counts.failed else ""
        ready = state.text if state.phase == "stopped" else "Ready"
        self._set_work_text(f"{ready} · {counts.documents} document{'s' if counts.documents != 1 else ''}"
                                f"{failed} · {counts.chunks} chunks · {counts.entities} entities")
        self.work_bar.hide()

    def _show_idle(self) -> None:
        self._show_work()

    def _set_work_text(self, text: str) -> None:
        """Long texts are shortened here (the status bar must fit a laptop); the tooltip has them whole."""
        self.work_label.setText(text if len(text) <= WORK_TEXT_CHARS else text[:WORK_TEXT_CHARS - 1] + "…")
        self.work_label.setToolTip(plain_tip(text))

    def _on_run_failed(self, failure: TaskFailure) -> None:
        self.show_error(failure.message)

    def show_error(self, sentence: str) -> None:
        """Show one sentence in the status bar (the detail is already in the log)."""
        log.info("shown to the user: %s", sentence)
        self.statusBar().showMessage(sentence, ERROR_SHOWN_MS)

    def show_written(self, path: Path) -> None:
        """An export was written: say where, and offer a button that shows the file."""
        self.written = Path(path)
        if str(self.written) not in self.statusBar().currentMessage():  # the exporter may have said it already
            self.statusBar().showMessage(f"Wrote {self.written.name} to {self.written.parent}.", ERROR_SHOWN_MS)
        self.show_file_button.show()
        QTimer.singleShot(ERROR_SHOWN_MS, self.show_file_button.hide)

    def _show_written_file(self) -> None:
        if self.written is None:
            return
        folder = self.written if self.written.is_dir() else self.written.parent
        if not self.interaction.open_url(QUrl.fromLocalFile(str(folder))):
            self.show_error(f"No file manager could be opened; the file is at {self.written}.")

    def refresh(self) -> None:
        """Read the workspace again."""
        self.documents_panel.refresh()
        self.graph_tab.reload()
        self._show_idle()
        self.folder_sync.check()  # and look at the linked folders

    def show_passage(self, chunk_id: int, marks: dict | None = None) -> None:
        """Open the passage viewer on a chunk (for any view that points at a source); `marks` may name
        the entities to mark ("names") and the sentence to highlight ("quote")."""
        self.chat_panel.open_reference({"chunk": int(chunk_id), **(marks or {})})

    def find_in_tab(self) -> None:
        """Ctrl+F: the search box of the current tab (documents by name, entities, prompts)."""
        current = self.tabs.currentWidget()
        box = getattr(current, "search_box", None) or getattr(getattr(current, "toolbar", None), "search", None)
        if box is None:
            self.show_error("This tab has nothing to search.")
            return
        box.setFocus()
        box.selectAll()

    def focus_question(self) -> None:
        """Show the chat and put the cursor in the question box."""
        self.chat_dock.show()
        self.chat_panel.question_edit.setFocus()

    def set_theme(self, theme: str) -> None:
        """Use the light, dark or system theme (remembered)."""
        self.state.theme = theme
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, theme)

    # -- help --------------------------------------------------------------------------
    def open_log_file(self) -> None:
        """Open the log file with the system's text viewer."""
        path = paths.setup_logging()
        if not path.exists():
            path.touch()
        if not self.interaction.open_url(QUrl.fromLocalFile(str(path))):
            self.show_error(f"The log could not be opened; it is at {path}.")

    def open_log_folder(self) -> None:
        """Open the folder holding the logs."""
        self.interaction.open_url(QUrl.fromLocalFile(str(paths.log_dir())))

    # -- drag and drop, closing (Qt overrides) ------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        """Accept files and folders dropped anywhere on the window."""
        self.documents_panel.dragEnterEvent(event)

    def dragMoveEvent(self, event) -> None:
        """Keep accepting while the drag moves."""
        self.documents_panel.dragMoveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:
        """Add dropped files and folders to the workspace."""
        self.documents_panel.dropEvent(event)

    def showEvent(self, event) -> None:
        """On the first show the window frame is known: keep the whole frame on the screen (Qt override)."""
        super().showEvent(event)
        if not getattr(self, "_fitted", False):
            self._fitted = True
            keep_on_screen(self)

    def closeEvent(self, event: QCloseEvent) -> None:
        """Stop work in progress first (the window closes when it has stopped), then save the layout."""
        self.folder_sync.shutdown()  # no sync starts while closing
        if self.work_running() and not self._quit_now():
            if not self._closing:
                self._closing = True
                self.ingestion.cancel()
                self.chat_panel.stop()
                self.tasks.shutdown(timeout_ms=0)  # cancel everything, do not wait here
                self.statusBar().showMessage("Stopping the work in progress; the window closes when it has "
                                             "stopped (finished work is kept).")
                self.tasks.idle.connect(self._close_when_idle)
            event.ignore()
            return
        self._closing = True
        self.ollama_watch.stop()
        self._save_layout()
        if self.ollama_dialog is not None:
            self.ollama_dialog.close()
        self.documents_panel.shutdown()
        self.chat_panel.shutdown()
        self.workspace.close()
        event.accept()

    def work_running(self) -> bool:
        """Background work other than reads runs (a read has nothing to lose: its result is dropped)."""
        return any(task.name not in READS for task in self.tasks.active)

    def _quit_now(self) -> bool:
        """Asked to close again while still stopping: offer to quit without waiting."""
        if not self._closing:
            return False
        return self.interaction.confirm(
            "Quit Now?", "DocAtlas is still waiting for a model call to end before it closes.", "Quit Now",
            "Everything finished so far is saved; the calls in flight are asked again on the next start.")

    def _close_when_idle(self) -> None:
        """The runner went idle (the run stopped, and the reads its end started are done): close now."""
        if not self.tasks.active and self.isVisible():
            self.close()

    def _save_layout(self) -> None:
        self.state.geometry = bytes(self.saveGeometry().toBase64().data()).decode()
        self.state.window_state = bytes(self.saveState().toBase64().data()).decode()
        self.state.tab = self.tabs.currentIndex()
        self.state.chat_mode = self.chat_panel.mode
        save_state(self.state)

    def shutdown(self, timeout_ms: int = 15000) -> bool:
        """Stop all background work and wait for it (tests, and the app's last resort)."""
        self.folder_sync.shutdown()
        if self.graph_tab is not None:
            self.graph_tab.shutdown(timeout_ms)  # finishes queued edits too
        done = self.tasks.shutdown(timeout_ms)
        QApplication.processEvents()
        return done
