"""Untrusted text (entity names, descriptions, titles) shown as the characters it is, never as markup."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget


def plain_tooltip(text: str) -> str:
    """A tooltip that shows `text` literally: escaped inside rich text, so Qt renders no tag of it."""
    return f"<p style='white-space:pre-wrap'>{html.escape(text)}</p>" if text else ""


def plain_labels(widget: QWidget) -> None:
    """Make every label in `widget` (a dialog built by Qt) show its text as plain text."""
    for label in widget.findChildren(QLabel):
        label.setTextFormat(Qt.TextFormat.PlainText)
