"""Start the window: `docatlas` with no subcommand, `docatlas-gui`, or a double-click.

Logging goes to the log file, Qt's own messages too, and an unexpected error anywhere
becomes one sentence in the window with the detail in the log: nothing is printed to a
console.
"""

from __future__ import annotations

import gc
import logging
import os
import sys
from pathlib import Path
from types import TracebackType

from PySide6.QtCore import QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QApplication, QMainWindow, QMessageBox

from docatlas.core import paths
from docatlas.core.errors import DocAtlasError
from docatlas.gui.gui_state import GuiState, load_state
from docatlas.gui.theme import apply_theme, follow_system

log = logging.getLogger("docatlas.gui")

_QT_LEVELS = {
    QtMsgType.QtDebugMsg: logging.DEBUG,
    QtMsgType.QtInfoMsg: logging.INFO,
    QtMsgType.QtWarningMsg: logging.WARNING,
    QtMsgType.QtCriticalMsg: logging.ERROR,
    QtMsgType.QtFatalMsg: logging.CRITICAL,
}


def choose_workspace(data_dir: str | None, state: GuiState) -> Path:
    """--data-dir, else DOCATLAS_DATA_DIR, else the last workspace, else the default data dir."""
    if data_dir:
        return Path(data_dir).expanduser()
    if os.environ.get("DOCATLAS_DATA_DIR"):
        return Path(os.environ["DOCATLAS_DATA_DIR"]).expanduser()
    if state.last_workspace and Path(state.last_workspace).is_dir():
        return Path(state.last_workspace)
    return paths.data_dir()


def _log_qt_message(kind: QtMsgType, context: object, message: str) -> None:
    logging.getLogger("docatlas.qt").log(_QT_LEVELS.get(kind, logging.WARNING), "%s", message)


def install_error_hooks(log_file: Path) -> None:
    """Route Qt messages, other libraries' logs, warnings and uncaught exceptions to the log
    file (never a console); tell the person about errors in the window."""
    qInstallMessageHandler(_log_qt_message)
    root = logging.getLogger()
    for handler in logging.getLogger("docatlas").handlers:
        if handler not in root.handlers:
            root.addHandler(handler)
    logging.getLogger("docatlas").propagate = False  # its records reach the file once
    logging.captureWarnings(True)

    def hook(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            QApplication.quit()
            return
        log.error("unexpected error", exc_info=(kind, error, trace))
        sentence = error.message if isinstance(error, DocAtlasError) else \
            f"DocAtlas hit an unexpected error; the details are in the log ({log_file})."
        window = next((w for w in QApplication.topLevelWidgets() if isinstance(w, QMainWindow)), None)
        if window is not None:
            window.statusBar().showMessage(sentence, 30_000)

    sys.excepthook = hook


def settle_memory() -> None:
    """Collect once, then freeze what start-up built (Qt wrappers, modules, settings) out of
    the garbage collector's reach: a full collection then stays short, and a background
    thread running one does not hold the GIL long enough for the window to stutter."""
    gc.collect()
    gc.freeze()


def main(data_dir: str | None = None) -> int:
    """Open the window on a workspace; return the exit code when it closes."""
    log_file = paths.setup_logging()
    install_error_hooks(log_file)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("DocAtlas")
    app.setOrganizationName("DocAtlas")
    app.setApplicationDisplayName("DocAtlas")
    state = load_state()
    apply_theme(app, state.theme)
    follow_system(app)
    folder = choose_workspace(data_dir, state)
    window = _open_window(folder, state)
    if window is None:
        return 1
    window.show()
    settle_memory()
    log.info("window opened on %s", window.workspace.folder)
    code = app.exec()
    if window.tasks.active:  # the person chose Quit Now while a model call was still running
        log.warning("quitting with background work still running; it resumes on the next start")
        logging.shutdown()
        os._exit(code)  # finished work is committed; threads blocked on the network cannot be joined
    return code


def _open_window(folder: Path, state: GuiState):
    """The window on `folder`, or on the default workspace if that fails; None if both fail."""
    from docatlas.gui.main_window import MainWindow

    for attempt in (folder, paths.data_dir()):
        try:
            return MainWindow(attempt, state=state)
        except (DocAtlasError, OSError) as exc:
            message = exc.message if isinstance(exc, DocAtlasError) else f"{attempt} cannot be used ({exc})."
            log.warning("cannot open workspace %s: %s", attempt, message)
            state.forget_workspace(str(attempt))
            QMessageBox.warning(None, "Cannot Open Workspace", f"{message}\n\nWorkspace: {attempt}")
            if attempt == paths.data_dir():
                break
    return None
