"""The Prompts tab's actions on whole sets of prompts: import, export, the extraction profile
in use, and extracting again the chunks built with other extraction prompts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QObject, Signal, SignalInstance

from docatlas.core.base import paths
from docatlas.core.base.settings import Settings, save_settings
from docatlas.core.jobs.auto_profile import AUTO
from docatlas.core.prompts import store as prompt_store
from docatlas.core.prompts.importer import ImportReport, read_prompt_file
from docatlas.core.storage.database import Store
from docatlas.gui.dialogs.interaction import Interaction
from docatlas.gui.ingestion import IngestionController
from docatlas.gui.jobs.prompts import import_prompts_job, requeue_job
from docatlas.gui.prompts.dialogs import PromptFiles
from docatlas.gui.prompts.reads import read_staleness
from docatlas.gui.tasks import Job
from docatlas.gui.workspace import Workspace


class PromptsHost(Protocol):
    """What the set actions need of the Prompts tab (a QWidget); the import goes panel -> sets only."""

    workspace: Workspace
    settings: Callable[[], Settings]
    interaction: Interaction
    ingestion: IngestionController
    files: PromptFiles
    message: SignalInstance

    def write(self, what: str, job: Job, done: Callable[[object], None]) -> None:
        """Run a job that writes the workspace; the tab is read again when it ends."""

    def refresh(self) -> None:
        """Read the tab again."""

    def read(self, what: str, read: Callable[[Store], Any], shown: Callable[[Any], None]) -> None:
        """Run `read` on the runner (latest-only per `what`) and hand its result to `shown` in the GUI thread."""

    def show_profile(self) -> None:
        """Show the extraction profile in use."""


class PromptSets(QObject):
    """Import, export, profile choice and extract-again for one Prompts tab."""

    settings_saved = Signal(object)  # Settings: another extraction profile was chosen (and saved)
    wrote = Signal(object)  # Path: an export was written there (the window offers to show it)

    def __init__(self, panel: PromptsHost, parent: QObject | None = None):
        super().__init__(parent)
        self.panel = panel
        self.last_import: ImportReport | None = None

    def import_prompts(self) -> None:
        """Read a prompt file the user picks, show what it holds, and save it when they agree."""
        panel = self.panel
        path = panel.files.choose_import()
        if path is None:
            return
        try:
            report = read_prompt_file(path)
            if len(report.sources) > 1:
                source = panel.files.choose_source(path.name, report.sources)
                if source is None:
                    return
                report = read_prompt_file(path, source=source)
        except ValueError as exc:
            panel.interaction.inform("Cannot Import Prompts", str(exc))
            return
        self.last_import = report
        if not report.prompts:
            panel.interaction.inform("Nothing to Import", f"Nothing in {path.name} can be used as a DocAtlas prompt.",
                                     warning=False)
            return
        count = len(report.prompts)
        text = f"{path.name} holds {count} prompt{'s' if count != 1 else ''} DocAtlas can use; import " \
               f"{'them' if count != 1 else 'it'}?"
        active = panel.profile_shown()
        if report.profile and report.profile != active:
            text += (f" Its extraction prompts are for the {report.profile} profile; choose that profile to "
                     "extract with them.")
        if not panel.interaction.confirm("Import Prompts", text, "Import", report.text()):
            return
        note = f"Imported from {path.name}"

        def done(result: object) -> None:
            saved, refused = result  # type: ignore[misc]
            panel.message.emit(f"Imported {len(saved)} prompts from {path.name}" +
                               (f"; {len(refused)} could not be used." if refused else "."))
        panel.write("Importing prompts", import_prompts_job(panel.workspace.db_path, report.prompts, note), done)

    def export_prompts(self) -> None:
        """Write the workspace's prompts to a JSON file the user picks."""
        panel = self.panel
        path = panel.files.choose_export(f"{panel.workspace.name}-prompts.json")
        if path is None:
            return
        panel.read("export", prompt_store.export_set, lambda data: self._write_export(Path(path), data))

    def _write_export(self, path: Path, data: dict) -> None:
        panel = self.panel
        try:
            Path(path).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        except OSError as exc:
            panel.interaction.inform("Cannot Export Prompts", f"{path} could not be written ({exc.strerror}); "
                                     "choose another place.")
            return
        panel.message.emit(f"Wrote {len(data['prompts'])} prompts to {path}.")
        self.wrote.emit(Path(path))

    def use_profile(self, name: str) -> None:
        """Extract with profile `name` from now on (saved in the settings)."""
        panel = self.panel
        current = panel.settings()
        if name == current.extraction.profile:
            return
        settings = current.with_overrides(extraction__profile=name)
        try:
            save_settings(settings, paths.settings_path())
        except OSError as exc:
            panel.message.emit(f"The settings could not be saved ({exc.strerror}); check that the folder "
                               f"{paths.config_dir()} is writable.")
            panel.show_profile()
            return
        self.settings_saved.emit(settings)
        panel.refresh()
        chosen = "the profile that works best for the model (tried on the first chunks)" if name == AUTO \
            else f"the {name} profile"
        panel.message.emit(f"New chunks are extracted with {chosen}.")

    def extract_again(self) -> None:
        """Send the chunks built with other extraction prompts back for extraction, then run."""
        panel = self.panel
        if panel.ingestion.busy:
            panel.message.emit("Wait for the current run to finish (or cancel it), then extract again.")
            return
        settings = panel.settings()
        panel.read("extract again", lambda store: read_staleness(store, settings),
                   lambda found: self._confirm_extract_again(*found))

    def _confirm_extract_again(self, profile: str, stale: int) -> None:
        panel = self.panel
        if not stale or panel.ingestion.busy or not panel.interaction.confirm(
                "Extract Again", f"Extract {stale} chunks again with the {profile} prompts in use?", "Extract Again",
                "Their records are replaced when the run reaches them; until then the graph leaves them out. "
                "Replies to prompts that did not change come from the cache."):
            return

        def done(count: object) -> None:
            panel.message.emit(f"{count} chunks are waiting to be extracted again.")
            panel.ingestion.resume()
        panel.write("Preparing to extract again", requeue_job(panel.workspace.db_path, panel.settings()), done)
