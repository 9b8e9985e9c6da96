"""Start the window: `docatlas` with no subcommand, `docatlas-gui`, or a double-click.

Logging goes to the log file, Qt's own messages too, and an unexpected error anywhere
becomes one sentence in the window with the detail in the log: nothing is printed to a
console.
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
import sys
import time
from pathlib import Path
from types import TracebackType

from PySide6.QtCore import QEvent, QObject, QTimer, QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QApplication, QMainWindow, QMessageBox

from docatlas import __version__
from docatlas.core.base import paths, tokens
from docatlas.core.base.errors import DocAtlasError
from docatlas.gui.gui_state import GuiState, load_state
from docatlas.gui.icons import ICON_SIZES as ICON_SIZES  # re-exported: tests and packaging read it here
from docatlas.gui.icons import app_icon
from docatlas.gui.theme import apply_theme, follow_system

log = logging.getLogger("docatlas.gui")

# Smoke tests and bench/cold_start.py: close the window by itself this many ms after it opens.
QUIT_AFTER_ENV = "DOCATLAS_QUIT_AFTER_MS"
FIRST_PAINT_MESSAGE = "first window painted at epoch %.3f"

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


class _FirstPaint(QObject):
    """Log the moment the window is first painted (bench/cold_start.py reads it), then go away."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            log.info(FIRST_PAINT_MESSAGE, time.time())
            watched.removeEventFilter(self)
        return False


def quit_after_from_env(window: QMainWindow) -> int | None:
    """Close `window` (which ends the app) after DOCATLAS_QUIT_AFTER_MS ms, when that is set;
    the milliseconds, or None when it is not set or not a number."""
    text = os.environ.get(QUIT_AFTER_ENV, "").strip()
    if not text:
        return None
    try:
        delay = max(0, int(text))
    except ValueError:
        log.warning("ignoring %s=%r: not a whole number of milliseconds", QUIT_AFTER_ENV, text)
        return None
    log.info("closing by itself after %d ms (%s)", delay, QUIT_AFTER_ENV)
    QTimer.singleShot(delay, window, window.close)
    # closing waits for work in progress; do not wait for ever (the timer dies with the window)
    QTimer.singleShot(delay + 20_000, window, QApplication.quit)
    return delay


NO_DISPLAY = ("DocAtlas could not open its window: no usable display was found (DISPLAY or WAYLAND_DISPLAY is "
              "not set, or the display refused the connection); the docatlas ingest, query, status and export "
              "commands work without a window.")


def _log_qt_message(kind: QtMsgType, context: object, message: str) -> None:
    logging.getLogger("docatlas.qt").log(_QT_LEVELS.get(kind, logging.WARNING), "%s", message)
    if kind == QtMsgType.QtFatalMsg:
        # Qt is about to abort (typically: no display). Say what is missing, with Qt's own words.
        sys.stderr.write(f"{message}\n{NO_DISPLAY}\n")
        sys.stderr.flush()
        logging.shutdown()
        os._exit(1)


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
    """Freeze what start-up built (Qt wrappers, modules, settings) out of the garbage collector's
    reach: a full collection then stays short, and a background thread running one does not hold
    the GIL long enough for the window to stutter. No collection first: one over the whole
    start-up heap blocked the window's first paint for 0.1-0.2 s, to free next to nothing."""
    gc.freeze()


GIL_SWITCH_S = 0.001  # CPython's default is 0.005


def favour_the_window() -> None:
    """Make a busy worker thread hand the GIL over after 1 ms instead of 5. Every call Qt's event
    loop makes into Python (each data() of a table being painted, each slot) takes the GIL again;
    while a run's thread computes in Python each of them waited up to 5 ms, so one repaint of the
    Documents table (about a thousand data() calls) could stall the window for a large part of a
    second. With 1 ms the same repaint gets about twice the calls through."""
    sys.setswitchinterval(GIL_SWITCH_S)


def load_tokenizer() -> None:
    """Build the token counter before the window exists. Building it holds the GIL for 0.1-0.2 s
    (tiktoken's CoreBPE), which froze the open window when a reader thread, the Prompts tab or
    the first run's chunking did it later; before the window is built nothing is on screen to freeze."""
    tokens.get_encoding()


# What a run imports on its own threads the first time it needs them (docatlas/core/jobs/ingest.py
# imports its stages inside the job; the Ollama probe's URL parsing loads the idna codec; the
# communities stage's networkx calls load numpy.random). Imported here before the window exists.
RUN_MODULES = (
    "docatlas.core.jobs.slots",
    "docatlas.core.jobs.stream",
    "docatlas.core.retrieval.embed",
    "docatlas.core.retrieval.communities",
    "docatlas.core.llm.ollama",
    "numpy.random",
    "encodings.idna",
)


def load_run_modules() -> None:
    """Import what the first run and the Ollama probe would otherwise import on their threads while
    the window is open (about 35 ms, less with compiled files). At a run's start the writer imported
    the job's stages while the feed, the model calls and the window all wanted the GIL; a module
    compiled from source (no .pyc, PYTHONDONTWRITEBYTECODE) holds the GIL for the whole compile,
    and the window's event loop waited behind it. The format libraries (PDF, Word, Excel: 0.1-0.4 s
    each) are left to the first file that needs them, not added to every start."""
    for name in RUN_MODULES:
        importlib.import_module(name)


def main(data_dir: str | None = None) -> int:
    """Open the window on a workspace; return the exit code when it closes."""
    log_file = paths.setup_logging()
    install_error_hooks(log_file)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("DocAtlas")
    app.setOrganizationName("DocAtlas")
    app.setApplicationDisplayName("DocAtlas")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("docatlas")  # the installed docatlas.desktop: its icon and name on Wayland
    app.setWindowIcon(app_icon())
    state = load_state()
    apply_theme(app, state.theme)
    follow_system(app)
    folder = choose_workspace(data_dir, state)
    load_tokenizer()
    load_run_modules()
    window = _open_window(folder, state)
    if window is None:
        return 1
    first_paint = _FirstPaint(window)
    window.installEventFilter(first_paint)
    window.show()
    quit_after_from_env(window)
    settle_memory()
    favour_the_window()
    log.info("window opened on %s", window.workspace.folder)
    code = app.exec()
    if window.work_running():  # the person chose Quit Now while a model call was still running (a read just ends)
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
