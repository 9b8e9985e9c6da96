"""The questions the window asks the person, in one replaceable place.

Every modal question (confirm, inform, native file dialogs, opening a URL outside the app)
goes through an `Interaction`; tests replace its callables so that nothing ever blocks
in `exec()`.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from docatlas.core.ingest.loaders import SUPPORTED_SUFFIXES

DOCUMENT_FILTER = "Documents ({});;All files (*)".format(" ".join(f"*{s}" for s in sorted(SUPPORTED_SUFFIXES)))


class Interaction:
    """Native dialogs parented to the window; each method may be replaced (tests do)."""

    def __init__(self, parent: QWidget):
        self.parent = parent

    def confirm(self, title: str, text: str, action: str = "OK", details: str = "") -> bool:
        """Ask yes or no; True when the person chose `action`."""
        box = QMessageBox(QMessageBox.Icon.Question, title, text, parent=self.parent)
        if details:
            box.setInformativeText(details)
        accept = box.addButton(action, QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return box.clickedButton() is accept

    def inform(self, title: str, text: str, warning: bool = True) -> None:
        """Tell the person something that needs their attention."""
        icon = QMessageBox.Icon.Warning if warning else QMessageBox.Icon.Information
        QMessageBox(icon, title, text, QMessageBox.StandardButton.Ok, self.parent).exec()

    def choose_files(self) -> list[Path]:
        """Documents to add (native dialog)."""
        names, _ = QFileDialog.getOpenFileNames(self.parent, "Add Documents", str(Path.home()), DOCUMENT_FILTER)
        return [Path(n) for n in names]

    def choose_folder(self, title: str = "Add a Folder of Documents") -> Path | None:
        """A folder (native dialog); None when cancelled."""
        name = QFileDialog.getExistingDirectory(self.parent, title, str(Path.home()))
        return Path(name) if name else None

    def choose_new_folder(self, title: str) -> Path | None:
        """A folder to create (it need not exist yet: the person types its name); None when cancelled."""
        name, _ = QFileDialog.getSaveFileName(self.parent, title, str(Path.home() / "DocAtlas workspace"), "",
                                              options=QFileDialog.Option.ShowDirsOnly)
        return Path(name) if name else None

    def open_url(self, url: QUrl) -> bool:
        """Open a URL or local file with the system's application."""
        return QDesktopServices.openUrl(url)
