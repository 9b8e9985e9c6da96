"""The chat header's model picker: the installed chat models, the one in use marked.

Filled from the window's one Ollama status (`OllamaWatch`); embedding models are left out (they
cannot chat). Choosing a model uses it for this window's answers; the extraction model in
the settings does not change.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QWidget

from docatlas.core.base.settings import Settings
from docatlas.core.llm.admin import OllamaProbe
from docatlas.gui.formatting import plain_tip

MARK = "● "  # before the model answers are asked of


class ChatModelBox(QComboBox):
    """Installed chat models; the current one is marked and selected."""

    message = Signal(str)

    def __init__(self, settings: Callable[[], Settings], parent: QWidget | None = None):
        super().__init__(parent)
        self.settings = settings
        self.chosen = ""  # a model picked here (""): the settings' chat model
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(12)
        self.setToolTip("The model that answers in this chat (the installed chat models; ● marks the one in use)")
        self.activated.connect(self._picked)
        self.show_models(None)

    @property
    def current_model(self) -> str:
        """The model answers are asked of."""
        return self.chosen or self.settings().ollama.model

    def show_models(self, probe: OllamaProbe | None) -> None:
        """List the chat models `probe` found (only the current one while unknown)."""
        names = [m.name for m in probe.models if not m.embedding] if probe is not None and probe.reachable else []
        current = self.current_model
        if current not in names:
            names.insert(0, current)
        self.blockSignals(True)
        self.clear()
        for name in names:
            self.addItem((MARK if name == current else "") + name, name)
            self.setItemData(self.count() - 1, plain_tip(name + (" (in use)" if name == current else "")),
                             Qt.ItemDataRole.ToolTipRole)
        self.setCurrentIndex(names.index(current))
        self.blockSignals(False)
        self._probe = probe

    def _picked(self, position: int) -> None:
        name = self.itemData(position)
        if not name:
            return
        self.chosen = "" if name == self.settings().ollama.model else name
        self.show_models(self._probe)
        self.message.emit(f"Answers now come from {name}.")
