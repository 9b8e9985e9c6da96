"""Draws a progress bar in the Status cell of a document that is being extracted."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionProgressBar, QStyleOptionViewItem

from docatlas.gui.models.documents_model import PROGRESS_ROLE


class ProgressDelegate(QStyledItemDelegate):
    """A per-document progress bar (done/total chunks) with the status text on it."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        """Paint a progress bar when the row is being extracted, else the plain cell."""
        progress = index.data(PROGRESS_ROLE)
        if not progress:
            super().paint(painter, option, index)
            return
        done, total = progress
        bar = QStyleOptionProgressBar()
        bar.rect = option.rect.adjusted(2, 3, -2, -3)  # type: ignore[attr-defined]
        bar.minimum = 0
        bar.maximum = max(1, total)
        bar.progress = min(done, bar.maximum)
        bar.text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        bar.textVisible = True
        bar.state = option.state | QStyle.StateFlag.State_Horizontal  # type: ignore[attr-defined]
        bar.palette = option.palette  # type: ignore[attr-defined]
        style = option.widget.style() if option.widget else QApplication.style()  # type: ignore[attr-defined]
        if option.state & QStyle.StateFlag.State_Selected:  # type: ignore[attr-defined]
            painter.fillRect(option.rect, option.palette.highlight())  # type: ignore[attr-defined]
        style.drawControl(QStyle.ControlElement.CE_ProgressBar, bar, painter)
