"""The dialogs of the Prompts tab (files, a choice), in one replaceable place (tests replace them)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QInputDialog, QWidget

IMPORT_FILTER = "Prompt files (*.json *.py *.txt);;All files (*)"
EXPORT_FILTER = "Prompt set (*.json)"


class PromptFiles:
    """Native open/save dialogs parented to the tab; each method may be replaced."""

    def __init__(self, parent: QWidget):
        self.parent = parent

    def choose_import(self) -> Path | None:
        """A prompt set, or a LightRAG/GraphRAG prompt file, to import; None when cancelled."""
        name, _ = QFileDialog.getOpenFileName(self.parent, "Import Prompts", str(Path.home()), IMPORT_FILTER)
        return Path(name) if name else None

    def choose_export(self, suggested: str) -> Path | None:
        """Where to write the prompt set; None when cancelled."""
        name, _ = QFileDialog.getSaveFileName(self.parent, "Export Prompts", str(Path.home() / suggested),
                                              EXPORT_FILTER)
        if not name:
            return None
        path = Path(name)
        return path if path.suffix else path.with_suffix(".json")

    def choose_source(self, file_name: str, sources: list[str]) -> str | None:
        """Which of several prompt dicts of a file to import; None when cancelled."""
        name, ok = QInputDialog.getItem(self.parent, "Import Prompts",
                                        f"{file_name} holds several sets of prompts; import which one?",
                                        sources, 0, False)
        return name if ok and name else None
