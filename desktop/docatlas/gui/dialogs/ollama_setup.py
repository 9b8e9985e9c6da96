"""Setting up Ollama: what to install and run, the host, the models, pulling one, limits.

Shown on the first run and whenever Ollama cannot be reached. It checks the host in the
background (never blocking the window), lists the installed models for chat and for
embeddings, and pulls a model only when the person presses Pull.

The host field takes several hosts separated by commas, each with its calls in flight after
`*` (`gpu1:11434*3, 127.0.0.1:11434`); the check then lists each host, names every one that
is not this computer, and offers the models all of them have. A host text of settings.json
with a bad entry is shown as the user wrote it, with the sentence naming that entry, and is
neither checked nor saved until it is fixed.
"""

from __future__ import annotations

import os
from dataclasses import replace

from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from docatlas.core.base import paths
from docatlas.core.base.settings import Settings, save_settings
from docatlas.core.base.settings_hosts import host_problem
from docatlas.core.llm.admin import ModelInfo, OllamaProbe, PullStatus, full_name
from docatlas.gui.dialogs.interaction import Interaction
from docatlas.gui.dialogs.ollama_texts import (
    HOSTS_HINT,
    INSTRUCTIONS,
    PULL_NOTICE,
    REMOTE_WARNING,
    host_line,
    model_label,
    remote_warning,
)
from docatlas.gui.formatting import human_size
from docatlas.gui.jobs import probe_job, pull_job
from docatlas.gui.tasks import BackgroundTask, TaskFailure, TaskRunner
from docatlas.gui.theme import error_style

RECHECK_MS = 5000  # while Ollama is unreachable and the dialog is open


class OllamaSetupDialog(QDialog):
    """Explains, checks and configures the Ollama connection."""

    settings_saved = Signal(object)  # Settings
    probed = Signal(object)  # OllamaProbe

    def __init__(self, settings: Settings, tasks: TaskRunner, interaction: Interaction,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Set Up Ollama")
        self.setMinimumWidth(600)
        self.settings = settings
        self.tasks = tasks
        self.interaction = interaction
        self.last_probe: OllamaProbe | None = None
        self.probe_task: BackgroundTask | None = None
        self.pull_task: BackgroundTask | None = None
        self._pulled = ""
        self._build()
        self._load(settings)
        self._recheck = QTimer(self, interval=RECHECK_MS, timeout=self._auto_recheck)

    # -- layout ------------------------------------------------------------------------
    def _build(self) -> None:
        intro = QLabel(INSTRUCTIONS, wordWrap=True, textFormat=Qt.TextFormat.RichText)
        intro.linkActivated.connect(lambda link: self.interaction.open_url(QUrl(link)))
        self.status_label = QLabel(wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        font = self.status_label.font()
        font.setBold(True)
        self.status_label.setFont(font)

        self.host_edit = QLineEdit()
        self.host_edit.setPlaceholderText(HOSTS_HINT)
        self.host_edit.setToolTip("The Ollama host; several separated by commas, each with its calls at once "
                                  "after *, e.g. gpu1:11434*3, 127.0.0.1:11434")
        self.host_edit.textChanged.connect(self._host_changed)
        self.check_button = QPushButton("Check Again", clicked=self.check)
        host_row = QHBoxLayout()
        host_row.addWidget(self.host_edit, 1)
        host_row.addWidget(self.check_button)
        self.remote_label = QLabel(REMOTE_WARNING, wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.remote_label.setStyleSheet("color: #ef6c00;")
        self.hosts_label = QLabel(wordWrap=True, textFormat=Qt.TextFormat.PlainText)  # several hosts: each one
        self.hosts_label.hide()
        env = os.environ.get("OLLAMA_HOST")
        self.env_label = QLabel(f"OLLAMA_HOST is set to {env} in the environment; it wins over this setting "
                                "when DocAtlas starts." if env else "", wordWrap=True)
        self.env_label.setVisible(bool(env))
        self.chat_box = QComboBox()
        self.embed_box = QComboBox()
        self.context_spin = QSpinBox(minimum=2048, maximum=1_048_576, singleStep=1024)
        self.context_spin.setToolTip("The most context DocAtlas asks for, whatever the model allows; "
                                     "more needs more memory")
        self.parallel_spin = QSpinBox(minimum=1, maximum=16)
        self.parallel_spin.setToolTip("Model calls in flight at once on a host without *N; match "
                                      "OLLAMA_NUM_PARALLEL")
        form = QFormLayout()
        form.addRow("Ollama host:", host_row)
        form.addRow("", self.remote_label)
        form.addRow("", self.hosts_label)
        form.addRow("", self.env_label)
        form.addRow("Chat model:", self.chat_box)
        form.addRow("Embedding model:", self.embed_box)
        form.addRow("Context length (tokens):", self.context_spin)
        form.addRow("Parallel calls:", self.parallel_spin)

        pull_group = QGroupBox("Pull a model")
        self.pull_edit = QLineEdit()
        self.pull_edit.setPlaceholderText("e.g. qwen2.5:7b or nomic-embed-text")
        self.pull_button = QPushButton("Pull", clicked=self.pull)
        self.stop_pull_button = QPushButton("Stop", clicked=self.stop_pull)
        self.pull_bar = QProgressBar(textVisible=True)
        self.pull_bar.setRange(0, 1)
        self.pull_bar.setValue(0)
        self.pull_status = QLabel(wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        notice = QLabel(PULL_NOTICE, wordWrap=True)
        notice.setEnabled(False)
        pull_row = QHBoxLayout()
        pull_row.addWidget(self.pull_edit, 1)
        pull_row.addWidget(self.pull_button)
        pull_row.addWidget(self.stop_pull_button)
        pull_layout = QVBoxLayout(pull_group)
        pull_layout.addWidget(notice)
        pull_layout.addLayout(pull_row)
        pull_layout.addWidget(self.pull_bar)
        pull_layout.addWidget(self.pull_status)

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Close)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.status_label)
        layout.addLayout(form)
        layout.addWidget(pull_group)
        layout.addWidget(self.buttons)
        self._update_pull_buttons()

    def _load(self, settings: Settings) -> None:
        o = settings.ollama
        unusable = settings.unusable_host
        self.host_edit.setText(unusable.text if unusable is not None else o.host)  # the user's text, kept
        if unusable is not None:
            self._say_error(unusable.sentence())
        self.context_spin.setValue(o.max_context)
        self.parallel_spin.setValue(o.parallel)
        self._fill_models((), o.model, o.embed_model)

    # -- checking ----------------------------------------------------------------------
    def edited_settings(self) -> Settings:
        """The settings as the dialog's fields say."""
        return self.settings.with_overrides(
            ollama__host=self.host_edit.text().strip() or self.settings.ollama.host,
            ollama__model=self.chat_box.currentData() or self.settings.ollama.model,
            ollama__embed_model=self.embed_box.currentData() or self.settings.ollama.embed_model,
            ollama__max_context=self.context_spin.value(),
            ollama__parallel=self.parallel_spin.value(),
        )

    def check(self) -> None:
        """Check the host in the background (a host text with a bad entry is named, not checked)."""
        if self.probe_task is not None:
            return
        problem = self._host_problem()
        if problem:
            self._say_error(problem)
            return
        if self.last_probe is None:
            self.status_label.setText(f"Checking {self.host_edit.text().strip()}…")
        self.check_button.setEnabled(False)
        self.check_button.setText("Checking…")
        self.probe_task = self.tasks.run("Checking Ollama", probe_job(self.edited_settings()),
                                         on_success=self.show_probe, on_finished=self._probe_finished)

    def _probe_finished(self) -> None:
        self.probe_task = None
        self.check_button.setEnabled(True)
        self.check_button.setText("Check Again")

    def _auto_recheck(self) -> None:
        if self.isVisible() and (self.last_probe is None or not self.last_probe.reachable):
            self.check()

    def show_probe(self, probe: OllamaProbe) -> None:
        """Show what a check found."""
        self.last_probe = probe
        self.hosts_label.setText("\n".join(host_line(p) for p in probe.hosts))
        self.hosts_label.setVisible(bool(probe.hosts))
        if not probe.reachable:
            self.status_label.setText(probe.error)
            self.status_label.setStyleSheet(error_style())
            self._recheck.start()
        else:
            self._recheck.stop()
            count = len(probe.models)
            text = f"Connected to Ollama at {probe.host}; {count} model{'s' if count != 1 else ''} installed."
            if probe.hosts:
                answering = sum(p.reachable for p in probe.hosts)
                text = (f"Connected to {answering} of {len(probe.hosts)} Ollama hosts; {count} "
                        f"model{'s are' if count != 1 else ' is'} on every one that answers.")
            if probe.missing:
                text += " Not installed yet: " + ", ".join(probe.missing) + " (pull them below or choose others)."
            self.status_label.setText(text)
            self.status_label.setStyleSheet("color: #ef6c00;" if probe.missing else "color: #2e7d32;")
            self._fill_models(probe.models, self.chat_box.currentData() or self.settings.ollama.model,
                              self.embed_box.currentData() or self.settings.ollama.embed_model)
        self.probed.emit(probe)

    def _host_problem(self) -> str | None:
        """The sentence naming the host field's bad entry (with the host used meanwhile, for the file's text)."""
        text = self.host_edit.text().strip() or self.settings.ollama.host
        unusable = self.settings.unusable_host
        if unusable is not None and text == unusable.text:
            return unusable.sentence()
        return host_problem(text)

    def _say_error(self, sentence: str) -> None:
        self.status_label.setText(sentence)
        self.status_label.setStyleSheet(error_style())

    def _fill_models(self, models: tuple[ModelInfo, ...], chat: str, embed: str) -> None:
        if self._pulled:
            pulled = next((m for m in models if full_name(m.name) == full_name(self._pulled)), None)
            if pulled is not None:
                chat, embed = (chat, pulled.name) if pulled.embedding else (pulled.name, embed)
            self._pulled = ""
        for box, wanted, embedding in ((self.chat_box, chat, False), (self.embed_box, embed, True)):
            box.clear()
            for model in models:
                if model.embedding == embedding:
                    box.addItem(model_label(model), model.name)
            found = next((i for i in range(box.count()) if full_name(box.itemData(i)) == full_name(wanted)), -1)
            if found < 0 and wanted:
                box.insertItem(0, f"{wanted} (not installed)", wanted)
                found = 0
            box.setCurrentIndex(max(0, found))

    def _host_changed(self, text: str) -> None:
        warning = remote_warning(text or self.settings.ollama.host)
        self.remote_label.setText(warning)
        self.remote_label.setVisible(bool(warning))

    # -- pulling -----------------------------------------------------------------------
    def pull(self) -> None:
        """Pull the named model through Ollama, with a progress bar."""
        name = self.pull_edit.text().strip()
        if not name or self.pull_task is not None:
            return
        problem = self._host_problem()
        if problem:
            self.pull_status.setText(problem)
            return
        self.pull_status.setText(f"Pulling {name}…")
        self.pull_bar.setRange(0, 0)
        self.pull_task = self.tasks.run(
            "Pulling a model", pull_job(self.edited_settings(), name), on_progress=self._pull_progress,
            on_success=self._pull_done, on_failure=self._pull_failed, on_finished=self._pull_finished)
        self._update_pull_buttons()

    def stop_pull(self) -> None:
        """Stop the download (Ollama keeps what it has; pulling again continues)."""
        if self.pull_task is not None:
            self.pull_task.cancel()

    def _pull_progress(self, status: PullStatus) -> None:
        if status.total:
            self.pull_bar.setRange(0, 1000)
            self.pull_bar.setValue(int(1000 * status.completed / status.total))
            self.pull_bar.setFormat(f"{human_size(status.completed)} of {human_size(status.total)}")
        self.pull_status.setText(status.status)

    def _pull_done(self, name: str) -> None:
        self.pull_bar.setRange(0, 1)
        self.pull_bar.setValue(1)
        self.pull_bar.setFormat("Done")
        self.pull_status.setText(f"{name} is installed.")
        self._pulled = name
        self.check()

    def _pull_failed(self, failure: TaskFailure) -> None:
        self.pull_bar.setRange(0, 1)
        self.pull_bar.setValue(0)
        self.pull_status.setText(failure.message)

    def _pull_finished(self) -> None:
        self.pull_task = None
        self._update_pull_buttons()

    def _update_pull_buttons(self) -> None:
        self.pull_button.setEnabled(self.pull_task is None)
        self.stop_pull_button.setEnabled(self.pull_task is not None)

    # -- saving ------------------------------------------------------------------------
    def save(self) -> None:
        """Save the settings (settings.json in the config dir) and close."""
        problem = self._host_problem()
        if problem:  # e.g. "gpu1:11434*x": say which entry, keep the dialog open, save nothing
            self._say_error(problem)
            return
        settings = replace(self.edited_settings(), unusable_host=None)  # the field showed it: what it says now wins
        try:
            save_settings(settings, paths.settings_path())
        except OSError as exc:
            self.status_label.setText(f"The settings could not be saved ({exc.strerror}); check that the "
                                      f"folder {paths.config_dir()} is writable.")
            return
        self.settings = settings
        self.settings_saved.emit(settings)
        self.close()

    def closeEvent(self, event) -> None:
        """Stop re-checking when closed (Qt override)."""
        self._recheck.stop()
        super().closeEvent(event)

    def showEvent(self, event) -> None:
        """Check as soon as the dialog appears (Qt override)."""
        super().showEvent(event)
        if self.last_probe is None:
            QTimer.singleShot(0, self.check)
        elif not self.last_probe.reachable:
            self._recheck.start()
