"""The installed app's entry point: `docatlas` with no arguments opens the window, with
arguments it is the command line (`docatlas --version`, `docatlas ingest ...`)."""

from __future__ import annotations

import os
import sys


def restore_child_environment() -> None:
    """Give the programs DocAtlas starts (xdg-open, the browser, a text editor for the log)
    their own environment back.

    In the bundle, PyInstaller's bootloader points LD_LIBRARY_PATH at the bundled libraries and
    its Qt hook sets QT_PLUGIN_PATH; both are inherited by child processes, which would then
    load DocAtlas's libraries and Qt plugins instead of their own. This process no longer needs
    them: the dynamic loader read LD_LIBRARY_PATH at start, and Qt gets the plugin folder here.
    """
    if not getattr(sys, "frozen", False):
        return
    for key in ("LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH"):
        original = os.environ.pop(f"{key}_ORIG", None)
        if original is not None:
            os.environ[key] = original
        else:
            os.environ.pop(key, None)
    os.environ.pop("QML2_IMPORT_PATH", None)
    plugins = os.environ.pop("QT_PLUGIN_PATH", None)
    if plugins:
        from PySide6.QtCore import QCoreApplication

        QCoreApplication.addLibraryPath(plugins)


def main() -> int:
    if sys.stdout is None or sys.stderr is None:  # a windowed executable (Windows, macOS) has no console
        devnull = open(os.devnull, "w", encoding="utf-8")  # kept open for the life of the process
        sys.stdout = sys.stdout or devnull
        sys.stderr = sys.stderr or devnull
    # Finder on old macOS passes a process serial number; it is not an argument for DocAtlas.
    sys.argv = [sys.argv[0], *(a for a in sys.argv[1:] if not a.startswith("-psn_"))]
    restore_child_environment()
    from docatlas.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    from docatlas.cli.finish import finish

    finish(main())
