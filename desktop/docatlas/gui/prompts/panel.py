"""The Prompts tab: every prompt DocAtlas sends, grouped, with the editor beside the list.

The panel reads the workspace on the runner (latest-only reads in `prompts.reads`, shown when
they land; the GUI thread runs no SQL; while the tab is hidden they wait until it is shown) and
writes (saves, resets, imports, sending chunks back for extraction) through background jobs
with their own connection. When the
extraction prompts in use differ from those the graph was built with, a banner says so and
offers to extract those chunks again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QFont, QShowEvent
from PySide6.QtWidgets import QTreeWidgetItem, QWidget

from docatlas.core.base.settings import Settings
from docatlas.core.jobs.auto_profile import AUTO, trial_profiles
from docatlas.core.prompts import store as prompt_store
from docatlas.core.prompts.catalog import available_profiles, spec
from docatlas.core.storage.database import Store
from docatlas.gui.dialogs.interaction import Interaction
from docatlas.gui.ingestion import IngestionController
from docatlas.gui.jobs.prompts import TrialRun, context_job, reset_prompt_job, save_prompt_job, trial_job
from docatlas.gui.prompts.dialogs import PromptFiles
from docatlas.gui.prompts.editor import Budget, PromptState
from docatlas.gui.prompts.layout import KEY_ROLE, build_panel, group_title
from docatlas.gui.prompts.reading import LatestReads
from docatlas.gui.prompts.reads import SampleRead, TabRead, read_prompt, read_sample, read_tab
from docatlas.gui.prompts.sets import PromptSets
from docatlas.gui.tasks import BackgroundTask, Job, TaskFailure, TaskRunner
from docatlas.gui.workspace import Workspace

MAX_CHUNKS = 2000  # chunks offered for trying (in document order)
REPLY_ROOM = {"same_entity": 8, "keywords": 256, "community_report": 1024, "community_map": 1024}


class PromptsPanel(QWidget):
    """The prompt editor tab of one workspace."""

    message = Signal(str)  # a sentence for the status bar
    changed = Signal()  # a save, reset or import reached the store, and the tab shows it
    trial_finished = Signal()  # a try on a chunk ended (done, stopped or failed)

    def __init__(self, tasks: TaskRunner, workspace: Workspace, settings: Callable[[], Settings],
                 interaction: Interaction, ingestion: IngestionController, parent: QWidget | None = None):
        super().__init__(parent)
        self.tasks = tasks
        self.workspace = workspace
        self.settings = settings
        self.interaction = interaction
        self.ingestion = ingestion
        self.files = PromptFiles(self)
        self.sets = PromptSets(self, self)
        self.write_task: BackgroundTask | None = None
        self.trial_task: BackgroundTask | None = None
        self.context_task: BackgroundTask | None = None
        self.trial_runs: list[TrialRun] = []
        self.context_length: int | None = None
        self._context_model = ""
        # reads wait while the tab is hidden: it is read (and its 2,000-chunk list built) when shown
        self.reads = LatestReads(tasks, workspace, lambda failure: self.message.emit(failure.message),
                                 held=lambda: not self.isVisible())
        self._overrides: dict[str, str] = {}  # as last read
        self._profile_read = ""  # the profile in use as last read ("auto" resolved for the model)
        build_panel(self)
        self.editor.save_requested.connect(self.save)
        self.editor.reset_requested.connect(self.reset)
        self.editor.draft_changed.connect(lambda _key: self._label_items())
        self.editor.trial.run_button.clicked.connect(self.start_trial)
        self.editor.trial.stop_button.clicked.connect(self.stop_trial)
        self.editor.trial.chunk_changed.connect(self._update_budget)
        ingestion.documents_changed.connect(self.refresh_workspace)
        self.show_profile()
        self._label_items()
        self.refresh_workspace()
        self.select(f"{self.profile_shown()}/extract")

    # -- reading the store (on the runner) -------------------------------------------------
    @property
    def reading(self) -> bool:
        """A background read of the tab has not landed yet."""
        return self.reads.reading

    def read(self, what: str, read: Callable[[Store], Any], shown: Callable[[Any], None]) -> None:
        """Run `read` on the runner, latest-only per `what`, and hand its result to `shown` here."""
        self.reads.read(what, read, shown)

    def select(self, key: str) -> None:
        """Show one prompt (read in the background)."""
        self.tree.setCurrentItem(self._items[key])

    def refresh(self, then: Callable[[], None] | None = None) -> None:
        """Read the prompts again (after a write) and show the current one anew; `then` runs once shown."""
        self.show_profile()
        self._label_items()
        self.refresh_workspace()
        if self.editor.key:
            self._read_prompt(self.editor.key)
        if then is not None:
            self.reads.when_read(then)

    def refresh_workspace(self) -> None:
        """Documents changed: the chunks to try on, and whether the graph is older than the prompts."""
        settings = self.settings()
        self.read("tab", lambda store: read_tab(store, settings, MAX_CHUNKS), self._show_tab)

    def profile_shown(self) -> str:
        """The extraction profile in use: the settings' own, or for "auto" the one chosen for the model."""
        profile = self.settings().extraction.profile
        if profile != AUTO:
            return profile
        return self._profile_read or trial_profiles()[0]

    def _show_tab(self, found: TabRead) -> None:
        self._overrides = found.overrides
        self._profile_read = found.profile
        self._label_items()
        rows = found.chunks
        self.editor.trial.set_chunks([(r["id"], f"{r['title']} · chunk {r['idx'] + 1} ({r['tokens']} tokens)")
                                      for r in rows])
        if self.editor.state is not None:
            self.editor.trial.set_usable(self.editor.state.spec.extraction, bool(rows))
        self._label_items()
        self._show_stale(found.stale, found.finished)
        self._update_budget()

    def show_profile(self) -> None:
        """Show the extraction profile the settings name."""
        self.profile_combo.setCurrentIndex(self.profile_combo.findData(self.settings().extraction.profile))

    def _label_items(self) -> None:
        mine = self._overrides  # as last read
        active = self.profile_shown()
        for key, item in self._items.items():
            edited = key in mine
            draft = key in self.editor.drafts
            item.setText(0, spec(key).title + (" — yours" if edited else "") + (" •" if draft else ""))
            font = item.font(0)
            font.setWeight(QFont.Weight.Bold if edited else QFont.Weight.Normal)
            item.setFont(0, font)
        for name, group in self._groups.items():
            group.setText(0, group_title(name) + (" (in use)" if name == active else ""))
            group.setExpanded(name == active or name not in available_profiles())

    def show_item(self, item: QTreeWidgetItem | None) -> None:
        """Show the prompt of a list item (read in the background)."""
        key = item.data(0, KEY_ROLE) if item is not None else None
        if key:
            self._read_prompt(key)

    def _read_prompt(self, key: str) -> None:
        def shown(state: PromptState) -> None:
            current = self.tree.currentItem()
            if current is not None and current.data(0, KEY_ROLE) == key:
                self.editor.show_prompt(state)
                self._update_budget()
        self.read("prompt", lambda store: read_prompt(store, key), shown)

    def _show_stale(self, stale: int, finished: int) -> None:
        profile = self.profile_shown()
        self.stale_banner.setVisible(stale > 0)
        self.stale_label.setText(
            f"{stale} of {finished} extracted chunks were built with other extraction prompts than the "
            f"{profile} prompts in use now. Extract them again to bring the graph up to date; replies to "
            "prompts that did not change come from the cache." if stale else "")

    def _update_budget(self) -> None:
        settings = self.settings()
        chunk_id, key = self.editor.trial.chunk_id(), self.editor.key
        source = self.editor.trial.chunk_combo.currentText().split(" (")[0]

        def shown(found: SampleRead) -> None:
            name = spec(key).name if key else ""
            reply = (settings.ollama.num_predict if not key or spec(key).extraction else
                     settings.query.answer_tokens if name.startswith("answer") else
                     settings.extraction.summary_max_tokens if name == "summarize" else REPLY_ROOM.get(name, 1024))
            values = found.values
            self.editor.set_budget(Budget(
                context=self.context_length, model=settings.ollama.model, reply=reply, sample=found.sample,
                sample_source=source if found.chunk_text is not None
                else f"a made-up passage of {settings.chunking.chunk_tokens} tokens (a full chunk)",
                values=lambda k, sample: values if (k, sample) == (key, found.sample)
                else prompt_store.sample_values(None, k, sample, settings)))
        self.read("budget", lambda store: read_sample(store, chunk_id, key, settings), shown)

    # -- writing -------------------------------------------------------------------------
    def save(self, key: str, text: str, note: str) -> None:
        """Save the editor's text as a new version of `key` (in the background)."""
        def done(version: object) -> None:
            self.editor.saved(key, text)
            self.message.emit(f"Saved {spec(key).title} ({key})." if version else f"{key} did not change.")
        self.write("Saving the prompt", save_prompt_job(self.workspace.db_path, key, text, note), done)

    def reset(self, key: str) -> None:
        """Go back to the default of `key` (the reset is kept as a version)."""
        def done(_result: object) -> None:
            self.editor.drafts.pop(key, None)
            self.message.emit(f"{spec(key).title} is back to its default.")
        self.write("Resetting the prompt", reset_prompt_job(self.workspace.db_path, key), done)

    def write(self, what: str, job: Job, done: Callable[[object], None]) -> None:
        """Run a job that writes (one at a time); the tab is read again when it ends."""
        if self.write_task is not None:
            self.message.emit("Wait a moment: the last change is still being saved.")
            return
        self.editor.save_button.setEnabled(False)

        def finished() -> None:
            self.write_task = None
            self.refresh(then=self.changed.emit)

        self.write_task = self.tasks.run(what, job, on_success=done,
                                         on_failure=self._failed, on_finished=finished)

    def _failed(self, failure: TaskFailure) -> None:
        self.message.emit(failure.message)
        if isinstance(failure.error, prompt_store.PromptError):
            self.editor.problems_label.setText(failure.message)
            self.editor.problems_label.show()

    # -- trying on a chunk -----------------------------------------------------------------
    def start_trial(self) -> None:
        """Try the editor's text (and the comparison chosen) on the chunk chosen."""
        trial, state = self.editor.trial, self.editor.state
        chunk_id = trial.chunk_id()
        if state is None or chunk_id is None or self.trial_task is not None:
            return
        if self.editor.problems:
            self.message.emit("Fix the problems of the prompt before trying it: " + self.editor.problems[0].message)
            return
        variants = [("This text", self.editor.text())]
        if trial.comparison() is not None:
            variants.append(trial.comparison())  # type: ignore[arg-type]
        self.trial_runs = []
        trial.set_running(True, comparing=len(variants) > 1)
        job = trial_job(self.workspace.db_path, self.settings(), state.spec.key, variants, chunk_id,
                        use_cache=not trial.fresh_check.isChecked())
        self.trial_task = self.tasks.run("Trying the prompt", job, on_progress=self._on_trial_run,
                                         on_failure=self._on_trial_failed, on_finished=self._trial_done)

    def stop_trial(self) -> None:
        """Stop the try in progress."""
        if self.trial_task is not None:
            self.trial_task.cancel()

    def _on_trial_run(self, run: object) -> None:
        if isinstance(run, TrialRun):
            self.editor.trial.show_run(len(self.trial_runs), run)
            self.trial_runs.append(run)

    def _on_trial_failed(self, failure: TaskFailure) -> None:
        self.editor.trial.status_label.setText(failure.message)
        if not failure.cancelled:
            self.message.emit(failure.message)

    def _trial_done(self) -> None:
        self.trial_task = None
        trial = self.editor.trial
        trial.set_running(False)
        if self.trial_runs and not trial.status_label.text().startswith("The run"):
            trial.status_label.setText("Done; nothing was added to the graph.")
        self.trial_finished.emit()

    # -- the model's context length ---------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        """Read what changed while the tab was hidden; ask the model for its context length when the
        tab is first shown (or the model changed)."""
        super().showEvent(event)
        self.reads.release()
        self.check_context()

    def check_context(self) -> None:
        """Find out in the background how many tokens the current model reads."""
        settings = self.settings()
        if self.context_task is not None or self._context_model == settings.ollama.model:
            return
        self._context_model = settings.ollama.model

        def known(length: object) -> None:
            self.context_length = int(length)  # type: ignore[call-overload]
            self._update_budget()

        def unknown(failure: TaskFailure) -> None:
            self._context_model = ""  # ask again next time
            self.editor.tokens_label.setToolTip(failure.message)

        def ended() -> None:
            self.context_task = None
        self.context_task = self.tasks.run("Reading the model's context length", context_job(settings),
                                           on_success=known, on_failure=unknown, on_finished=ended)

    def shutdown(self) -> None:
        """Stop a try in progress and show no read landing later (the window is closing or switching)."""
        self.reads.close()
        self.stop_trial()

