"""The questions the explorer asks (names, types, confirmations, file names), replaceable in tests.

`Prompter` asks with Qt's dialogs; tests give the explorer an object with the same
methods that answers at once, so no modal dialog ever blocks a test. Every label shows
its text as plain text: entity names are untrusted and must never render as markup.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QStringListModel, Qt
from PySide6.QtWidgets import (
    QCompleter,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QVBoxLayout,
    QWidget,
)

from docatlas.gui.graph.plain import plain_labels


class EntityPicker(QDialog):
    """A name box that completes existing entity names and says which entity the text means."""

    def __init__(self, parent: QWidget, title: str, label: str, names: list[str], describe: Callable[[str], str]):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.describe = describe
        prompt = QLabel(label, wordWrap=True)
        self.edit = QLineEdit()
        completer = QCompleter(QStringListModel(names, self), self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.edit.setCompleter(completer)
        self.preview = QLabel(wordWrap=True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.edit.textChanged.connect(lambda text: self.preview.setText(describe(text)))
        layout = QVBoxLayout(self)
        for widget in (prompt, self.edit, self.preview, self.buttons):
            layout.addWidget(widget)
        plain_labels(self)
        self.preview.setText(describe(""))


class Prompter:
    """Modal questions to the user; each returns None (or False) when the user cancels."""

    def _input(self, parent: QWidget, title: str, label: str) -> QInputDialog:
        dialog = QInputDialog(parent)
        dialog.setWindowTitle(title)
        dialog.setLabelText(label)
        plain_labels(dialog)
        return dialog

    def text(self, parent: QWidget, title: str, label: str, value: str = "") -> str | None:
        """One line of text."""
        dialog = self._input(parent, title, label)
        dialog.setTextValue(value)
        return dialog.textValue() if dialog.exec() == QDialog.DialogCode.Accepted else None

    def long_text(self, parent: QWidget, title: str, label: str, value: str = "") -> str | None:
        """Several lines of text."""
        dialog = self._input(parent, title, label)
        dialog.setOption(QInputDialog.InputDialogOption.UsePlainTextEditForTextInput)
        dialog.setTextValue(value)
        return dialog.textValue() if dialog.exec() == QDialog.DialogCode.Accepted else None

    def choose(self, parent: QWidget, title: str, label: str, items: list[str], editable: bool = False,
               current: int = 0) -> str | None:
        """One of `items` (or, when editable, any text)."""
        dialog = self._input(parent, title, label)
        dialog.setComboBoxItems(items)
        dialog.setComboBoxEditable(editable)
        if items:
            dialog.setTextValue(items[max(0, min(current, len(items) - 1))])
        return dialog.textValue() if dialog.exec() == QDialog.DialogCode.Accepted else None

    def entity(self, parent: QWidget, title: str, label: str, names: list[str],
               describe: Callable[[str], str]) -> str | None:
        """An entity's name, completed from `names`; `describe` says which entity the text means."""
        dialog = EntityPicker(parent, title, label, names, describe)
        return dialog.edit.text() if dialog.exec() == QDialog.DialogCode.Accepted else None

    def confirm(self, parent: QWidget, title: str, text: str) -> bool:
        """Yes or no."""
        box = QMessageBox(QMessageBox.Icon.Question, title, text,
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, parent)
        box.setTextFormat(Qt.TextFormat.PlainText)
        return box.exec() == QMessageBox.StandardButton.Yes

    def inform(self, parent: QWidget, title: str, text: str) -> None:
        """A message to acknowledge."""
        box = QMessageBox(QMessageBox.Icon.Information, title, text, QMessageBox.StandardButton.Ok, parent)
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.exec()

    def save_path(self, parent: QWidget, title: str, name: str, filters: str) -> str | None:
        """Where to write a file (or folder, for CSV)."""
        path, _ = QFileDialog.getSaveFileName(parent, title, name, filters)
        return path or None
