"""Markdown from a model, shown safely: no HTML, no images or other resources, inert links.

Model output is untrusted. The view renders Markdown without raw HTML and without images (each
becomes its alt text before Qt parses it: Qt's reader would open a local image's file); every resource
(images, style sheets) is refused, so nothing is fetched from the network or read from
disk; links do nothing until clicked, and then only ask (the owner decides what to do
with `link_requested`).
"""

from __future__ import annotations

import re

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QFrame, QSizePolicy, QTextBrowser, QWidget

# Qt's Markdown reader looks at an image's file while it parses (a FIFO or a device there blocks the
# GUI thread for ever), so images never reach it: each becomes its alt text before parsing.
IMAGE = re.compile(r"!\[((?:[^\]\\]|\\.)*)\]\s*(?:\((?:[^()]|\([^()]*\))*\)|\[[^\]]*\])")


def without_images(text: str) -> str:
    """`text` with every Markdown image replaced by "[image: alt]" (nothing is loaded or opened)."""
    return IMAGE.sub(lambda m: f"[image: {m.group(1)}]" if m.group(1) else "[image]", text)


MARKDOWN_FEATURES = (QTextDocument.MarkdownFeature.MarkdownDialectGitHub
                     | QTextDocument.MarkdownFeature.MarkdownNoHTML)


class InertDocument(QTextDocument):
    """A text document that loads no resource at all."""

    def loadResource(self, type: int, name: QUrl) -> object:
        """Refuse every resource: images from the net or the disk stay blank."""
        return None


class SafeMarkdownView(QTextBrowser):
    """A read-only view of untrusted Markdown that grows with its text (no inner scrolling)."""

    link_requested = Signal(QUrl)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setDocument(InertDocument(self))
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.anchorClicked.connect(self.link_requested)
        self.document().documentLayout().documentSizeChanged.connect(self._fit_height)
        self.markdown_source = ""

    def show_markdown(self, text: str) -> None:
        """Render `text` as Markdown (without HTML)."""
        self.markdown_source = text
        self.document().setMarkdown(without_images(text), MARKDOWN_FEATURES)
        self._fit_height()

    def loadResource(self, type: int, name: QUrl) -> object:
        """Refuse every resource (Qt override)."""
        return None

    def _fit_height(self, *_: object) -> None:
        height = int(self.document().size().height()) + 2 * self.frameWidth() + 4
        if self.height() != height:
            self.setFixedHeight(max(24, height))

    def resizeEvent(self, event) -> None:
        """Re-fit the height after the width changed (Qt override)."""
        super().resizeEvent(event)
        self._fit_height()
