"""One prompt in the editor: the user's text, checked and counted as it is typed, the
read-only default, the versions, and trying it on a chunk.

Unsaved edits are kept per prompt while the user looks at others (drafts), so switching
prompts never asks a question. Save is possible only while the text passes every check;
the problems are listed with line and column and marked in the text.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from docatlas.core.llm.ollama import MESSAGE_OVERHEAD, SAFETY
from docatlas.core.prompts.catalog import Problem, PromptSpec, check, render, token_count
from docatlas.core.prompts.store import PromptVersion
from docatlas.gui.prompts.highlighter import PlaceholderHighlighter
from docatlas.gui.prompts.trial import TrialView
from docatlas.gui.prompts.versions import VersionsView
from docatlas.gui.theme import error_style

TEXT_TAB, DEFAULT_TAB, VERSIONS_TAB, TRIAL_TAB = range(4)


@dataclass(frozen=True)
class PromptState:
    """What the store says about one prompt."""

    spec: PromptSpec
    text: str  # in use now
    default: str  # what a reset gives
    overridden: bool
    versions: list[PromptVersion] = field(default_factory=list)


@dataclass
class Budget:
    """What the token counts are measured against."""

    context: int | None = None  # tokens the model reads at most (None: not known yet)
    model: str = ""
    reply: int = 2048  # tokens kept for the reply
    sample: str = ""  # the text a real call would put in the prompt
    sample_source: str = "a sample passage"
    values: Callable[[str, str], dict[str, str]] = lambda key, sample: {}


class PromptEditor(QWidget):
    """The editing side of the Prompts tab."""

    save_requested = Signal(str, str, str)  # key, text, note
    reset_requested = Signal(str)  # key
    draft_changed = Signal(str)  # key: its text now differs from the saved one, or no longer does

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.state: PromptState | None = None
        self.budget = Budget()
        self.problems: list[Problem] = []
        self.drafts: dict[str, str] = {}
        self._loading = False
        self._checking = False
        self._build()

    # -- layout ------------------------------------------------------------------------
    def _build(self) -> None:
        self.title_label = QLabel()
        font = self.title_label.font()
        font.setPointSizeF(font.pointSizeF() * 1.2)
        font.setWeight(QFont.Weight.Bold)
        self.title_label.setFont(font)
        self.key_label = QLabel(textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse)
        self.key_label.setEnabled(False)
        self.purpose_label = QLabel(wordWrap=True)
        self.state_label = QLabel()
        fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.text_edit = QPlainTextEdit()
        self.text_edit.setFont(fixed)
        self.text_edit.textChanged.connect(self._on_text_changed)
        self.highlighter = PlaceholderHighlighter(self.text_edit.document())
        self.default_view = QPlainTextEdit(readOnly=True)
        self.default_view.setFont(fixed)
        self.default_highlighter = PlaceholderHighlighter(self.default_view.document())
        self.default_note = QLabel(wordWrap=True)
        self.default_note.setEnabled(False)
        default_page = QWidget()
        default_layout = QVBoxLayout(default_page)
        default_layout.addWidget(self.default_note)
        default_layout.addWidget(self.default_view, 1)
        self.versions = VersionsView()
        self.versions.load_requested.connect(self.load_text)
        self.trial = TrialView()
        self.tabs = QTabWidget()
        self.tabs.addTab(self.text_edit, "Your Prompt")
        self.tabs.addTab(default_page, "Default")
        self.tabs.addTab(self.versions, "Versions")
        trial_scroll = QScrollArea(widgetResizable=True, frameShape=QFrame.Shape.NoFrame)
        trial_scroll.setWidget(self.trial)  # a small window scrolls the trial, never the Save row
        self.tabs.addTab(trial_scroll, "Try on a Chunk")
        self.tabs.currentChanged.connect(self._on_tab)

        self.problems_label = QLabel(wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.problems_label.setStyleSheet(error_style())
        self.problems_label.hide()
        self.tokens_label = QLabel(wordWrap=True)
        self.note_edit = QLineEdit(placeholderText="What changed, and why (kept with the version)")
        self.save_button = QPushButton("Save", enabled=False)
        self.save_button.clicked.connect(self.request_save)
        self.discard_button = QPushButton("Discard Changes", enabled=False)
        self.discard_button.clicked.connect(self.discard)
        self.reset_button = QPushButton("Reset to Default", enabled=False)
        self.reset_button.clicked.connect(lambda: self.state and self.reset_requested.emit(self.state.spec.key))
        QShortcut(QKeySequence.StandardKey.Save, self, self.request_save,
                  context=Qt.ShortcutContext.WidgetWithChildrenShortcut)

        head = QHBoxLayout()
        head.addWidget(self.title_label)
        head.addWidget(self.key_label)
        head.addStretch(1)
        head.addWidget(self.state_label)
        buttons = QHBoxLayout()
        buttons.addWidget(self.note_edit, 1)
        buttons.addWidget(self.save_button)
        buttons.addWidget(self.discard_button)
        buttons.addWidget(self.reset_button)
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(self.purpose_label)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.problems_label)
        layout.addWidget(self.tokens_label)
        layout.addLayout(buttons)

    # -- showing a prompt ----------------------------------------------------------------
    @property
    def key(self) -> str:
        """The key of the prompt shown ("" before one is)."""
        return self.state.spec.key if self.state else ""

    def text(self) -> str:
        """The text in the editor."""
        return self.text_edit.toPlainText()

    def is_dirty(self) -> bool:
        """The editor holds text that is not saved."""
        return self.state is not None and self.text() != self.state.text

    def show_prompt(self, state: PromptState) -> None:
        """Show a prompt (its unsaved draft, if the user left one)."""
        item = state.spec
        self._loading = True  # what happens while it loads is not the user's edit
        self.state = state
        self.title_label.setText(item.title)
        self.key_label.setText(item.key)
        self.purpose_label.setText(item.purpose + " Placeholders: " +
                                   ", ".join(f"{{{n}}}" for n in sorted(item.allowed)) +
                                   (f"; it must hold {', '.join(f'{{{n}}}' for n in sorted(item.required))}."
                                    if item.required else "."))
        self.state_label.setText(_state_text(state))
        self.highlighter.set_allowed(item.allowed)
        self.default_highlighter.set_allowed(item.allowed)
        self.default_view.setPlainText(state.default)
        self.default_note.setText(
            "Read-only. Without a version of its own this prompt uses the all-modes answer prompt, shown here."
            if item.falls_back_to else "Read-only: the prompt as DocAtlas ships it. Reset to Default goes back to it.")
        self.text_edit.setPlainText(self.drafts.get(item.key, state.text))
        self.versions.show_versions(state.versions, state.default, self.text)
        comparisons = [("The default", state.default)]
        if state.overridden:
            comparisons.append(("The saved prompt", state.text))
        comparisons += [(v.label, v.text) for v in state.versions if v.text is not None and v.text != state.text]
        self.trial.set_comparisons(comparisons)
        self.trial.set_usable(item.extraction, self.trial.chunk_combo.count() > 0)
        self._loading = False
        self._on_text_changed()

    def load_text(self, text: str) -> None:
        """Put a text in the editor (e.g. an older version) as an unsaved change."""
        self.text_edit.setPlainText(text)
        self.tabs.setCurrentIndex(TEXT_TAB)

    def discard(self) -> None:
        """Go back to the saved text."""
        if self.state is not None:
            self.text_edit.setPlainText(self.state.text)  # no longer a draft

    def request_save(self) -> None:
        """Ask for the text to be saved (only when it passes every check and differs)."""
        if self.state is not None and self.save_button.isEnabled():
            self.save_requested.emit(self.state.spec.key, self.text(), self.note_edit.text().strip())

    def saved(self, key: str, text: str) -> None:
        """A save of `text` for `key` reached the store: it is no longer a draft."""
        if self.drafts.get(key) == text:
            del self.drafts[key]
        if key == self.key and self.text() == text:
            self.note_edit.clear()

    def set_budget(self, budget: Budget) -> None:
        """What to count tokens against (context length, reply room, sample text)."""
        self.budget = budget
        self.update_tokens()

    # -- live checks -------------------------------------------------------------------
    def _on_text_changed(self) -> None:
        if self.state is None or self._checking:
            return
        self._checking = True  # re-highlighting below emits textChanged again
        try:
            self._check_text()
        finally:
            self._checking = False

    def _check_text(self) -> None:
        assert self.state is not None
        key, text = self.state.spec.key, self.text()
        self.problems = check(key, text)
        self.highlighter.set_problems(self.problems)
        self.problems_label.setText("\n".join(p.message for p in self.problems))
        self.problems_label.setVisible(bool(self.problems))
        dirty = text != self.state.text
        self.save_button.setEnabled(dirty and not self.problems)
        self.save_button.setToolTip("Fix the problems listed below first" if self.problems else "")
        self.discard_button.setEnabled(dirty)
        self.reset_button.setEnabled(self.state.overridden)
        if not self._loading:
            had = key in self.drafts
            if dirty:
                self.drafts[key] = text
            else:
                self.drafts.pop(key, None)
            if had != dirty:
                self.draft_changed.emit(key)
        self.update_tokens()
        if self.tabs.currentIndex() == VERSIONS_TAB:
            self.versions.refresh_diff()

    def update_tokens(self) -> None:
        """Count the prompt's tokens, and those of the prompt filled in for a real call."""
        if self.state is None:
            return
        b = self.budget
        text = self.text()
        alone = token_count(text)
        filled = token_count(render(text, b.values(self.state.spec.key, b.sample)))
        line = f"Prompt: {alone:,} tokens · filled in with {b.sample_source}: {filled:,} tokens"
        if b.context is None:
            self.tokens_label.setText(line + " (the model's context length is not known yet).")
            self.tokens_label.setStyleSheet("")
            return
        needed = math.ceil((filled + MESSAGE_OVERHEAD) * SAFETY) + b.reply
        line += f" of the {b.context:,} {b.model or 'the model'} reads, with {b.reply:,} kept for the reply"
        if needed > b.context:
            line += f": too long, it needs about {needed:,}; shorten it or use a model with a longer context."
        self.tokens_label.setText(line + ("." if needed <= b.context else ""))
        self.tokens_label.setStyleSheet(error_style() if needed > b.context else "")

    def _on_tab(self, index: int) -> None:
        if index == VERSIONS_TAB:
            self.versions.refresh_diff()


def _state_text(state: PromptState) -> str:
    if not state.overridden:
        return "Default" if not state.spec.falls_back_to else "Uses the all-modes answer prompt"
    latest = next((v for v in state.versions if not v.is_reset), None)
    return f"Yours, {latest.label}" if latest else "Yours"
