"""The questions the explorer asks (names, types, confirmations, file names), replaceable in tests.

`Prompter` asks with Qt's standard dialogs; tests give the explorer an object with the
same methods that answers at once, so no modal dialog ever blocks a test.
"""

from __future__ import annotations

from PySide6.QtWidgets import QFileDialog, QInputDialog, QLineEdit, QMessageBox, QWidget


class Prompter:
    """Modal questions to the user; each returns None (or False) when the user cancels."""

    def text(self, parent: QWidget, title: str, label: str, value: str = "") -> str | None:
        """One line of text."""
        answer, ok = QInputDialog.getText(parent, title, label, QLineEdit.EchoMode.Normal, value)
        return answer if ok else None

    def long_text(self, parent: QWidget, title: str, label: str, value: str = "") -> str | None:
        """Several lines of text."""
        answer, ok = QInputDialog.getMultiLineText(parent, title, label, value)
        return answer if ok else None

    def choose(self, parent: QWidget, title: str, label: str, items: list[str], editable: bool = False,
               current: int = 0) -> str | None:
        """One of `items` (or, when editable, any text)."""
        answer, ok = QInputDialog.getItem(parent, title, label, items, current, editable)
        return answer if ok else None

    def confirm(self, parent: QWidget, title: str, text: str) -> bool:
        """Yes or no."""
        buttons = QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No
        return QMessageBox.question(parent, title, text, buttons) == QMessageBox.StandardButton.Yes

    def inform(self, parent: QWidget, title: str, text: str) -> None:
        """A message to acknowledge."""
        QMessageBox.information(parent, title, text)

    def save_path(self, parent: QWidget, title: str, name: str, filters: str) -> str | None:
        """Where to write a file (or folder, for CSV)."""
        path, _ = QFileDialog.getSaveFileName(parent, title, name, filters)
        return path or None
