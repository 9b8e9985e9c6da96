"""Where DocAtlas keeps things: data dir (one workspace), config dir, log dir, cache dir.

The data dir comes from `--data-dir`, else `DOCATLAS_DATA_DIR`, else platformdirs.
Directories DocAtlas creates are private (0o700): they hold the user's documents' text; a
folder that already exists keeps its permissions (a shared 1777 folder stays shared).
File names that are not valid UTF-8 are shown with `\\xNN` escapes (`shown_path`).
The log handler never prints "--- Logging error ---": when the log cannot be written (a
full disk, a folder gone read-only) the record is dropped quietly.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
from pathlib import Path

import platformdirs

APP_NAME = "DocAtlas"
DB_FILENAME = "docatlas.sqlite"


def _private_dir(path: Path) -> Path:
    """The folder, created 0o700 (with any missing parents) when it does not exist yet."""
    if path.is_dir():
        return path
    missing = [path, *(p for p in path.parents if not p.exists())]
    path.mkdir(parents=True, exist_ok=True)
    for created in missing:
        try:
            os.chmod(created, 0o700)
        except OSError:
            pass
    return path


def shown_path(path: str | os.PathLike[str]) -> str:
    """A path as text that can be printed and stored: bytes that are not UTF-8 become `\\xNN`."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def shown_name(path: str | os.PathLike[str]) -> str:
    """The file name of `path`, printable (see `shown_path`)."""
    return shown_path(Path(path).name)


class QuietRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating log file that drops a record it cannot write instead of printing a traceback."""

    def handleError(self, record: logging.LogRecord) -> None:
        """Drop the record: the log must never be the reason the user sees a traceback."""


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The workspace directory, created if needed."""
    chosen = explicit or os.environ.get("DOCATLAS_DATA_DIR")
    path = Path(chosen).expanduser() if chosen else Path(platformdirs.user_data_dir(APP_NAME, False))
    return _private_dir(path)


def database_path(workspace: Path) -> Path:
    """The SQLite file of a workspace."""
    return workspace / DB_FILENAME


def config_dir() -> Path:
    """Per-user configuration (settings.json, recent workspaces); DOCATLAS_CONFIG_DIR overrides."""
    chosen = os.environ.get("DOCATLAS_CONFIG_DIR")
    return _private_dir(Path(chosen) if chosen else Path(platformdirs.user_config_dir(APP_NAME, False)))


def settings_path() -> Path:
    """The settings file."""
    return config_dir() / "settings.json"


def cache_dir() -> Path:
    """Files DocAtlas can always rebuild (the parsed tokenizer); DOCATLAS_CACHE_DIR overrides."""
    chosen = os.environ.get("DOCATLAS_CACHE_DIR")
    return _private_dir(Path(chosen) if chosen else Path(platformdirs.user_cache_dir(APP_NAME, False)))


def log_dir() -> Path:
    """Where logs go; DOCATLAS_LOG_DIR overrides."""
    chosen = os.environ.get("DOCATLAS_LOG_DIR")
    return _private_dir(Path(chosen) if chosen else Path(platformdirs.user_log_dir(APP_NAME, False)))


def setup_logging(level: int = logging.INFO) -> Path:
    """Send DocAtlas's logs to a rotating file in the log dir; return the file's path."""
    path = log_dir() / "docatlas.log"
    root = logging.getLogger("docatlas")
    if not any(isinstance(h, logging.handlers.RotatingFileHandler) for h in root.handlers):
        handler = QuietRotatingFileHandler(path, maxBytes=2_000_000, backupCount=3, encoding="utf-8",
                                           delay=True)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    root.setLevel(level)
    return path
