"""Syntax highlighting for prompts (placeholders, problems) and for diffs between versions."""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument

from docatlas.core.prompts.catalog import PLACEHOLDER_LIKE, Problem

KNOWN_COLOR = QColor("#1f6feb")
UNKNOWN_COLOR = QColor("#d1242f")
ADDED_COLOR = QColor("#1a7f37")


def _format(color: QColor, *, bold: bool = False, wavy: bool = False) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(color)
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    if wavy:
        fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
        fmt.setUnderlineColor(UNKNOWN_COLOR)
    return fmt


class PlaceholderHighlighter(QSyntaxHighlighter):
    """Placeholders the prompt may use in bold blue; unknown ones, and the places of problems
    (a brace that never closes, say), in red with a wavy underline."""

    def __init__(self, document: QTextDocument, allowed: frozenset[str] = frozenset()):
        super().__init__(document)
        self.allowed = allowed
        self.known_format = _format(KNOWN_COLOR, bold=True)
        self.problem_format = _format(UNKNOWN_COLOR, wavy=True)
        self._marks: dict[int, list[tuple[int, int]]] = {}  # block number -> [(start, length)]

    def set_allowed(self, allowed: frozenset[str]) -> None:
        """The placeholders of the prompt shown."""
        self.allowed = allowed
        self.rehighlight()

    def set_problems(self, problems: list[Problem]) -> None:
        """Mark where each problem is (those without a place are not marked)."""
        marks: dict[int, list[tuple[int, int]]] = {}
        for p in problems:
            if p.line is not None and p.column is not None:
                marks.setdefault(p.line - 1, []).append((p.column - 1, p.length))
        if marks != self._marks:
            self._marks = marks
            self.rehighlight()

    def highlightBlock(self, text: str) -> None:
        """Colour one line (Qt calls this for every changed block)."""
        for match in PLACEHOLDER_LIKE.finditer(text):
            fmt = self.known_format if match.group(1) in self.allowed else self.problem_format
            self.setFormat(match.start(), match.end() - match.start(), fmt)
        for start, length in self._marks.get(self.currentBlock().blockNumber(), ()):
            self.setFormat(start, length, self.problem_format)


class DiffHighlighter(QSyntaxHighlighter):
    """A unified diff: added lines green, removed lines red, hunk headers blue."""

    def __init__(self, document: QTextDocument):
        super().__init__(document)
        self.added = _format(ADDED_COLOR)
        self.removed = _format(UNKNOWN_COLOR)
        self.header = _format(KNOWN_COLOR, bold=True)

    def highlightBlock(self, text: str) -> None:
        """Colour one line of the diff."""
        if text.startswith(("+++", "---", "@@")):
            self.setFormat(0, len(text), self.header)
        elif text.startswith("+"):
            self.setFormat(0, len(text), self.added)
        elif text.startswith("-"):
            self.setFormat(0, len(text), self.removed)
