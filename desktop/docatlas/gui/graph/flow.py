"""A row of controls that wraps onto more lines instead of hiding controls in an overflow menu.

`FlowBar` offers the part of QToolBar's interface the explorer uses (`addWidget`, `addAction`
with a QAction or with text and a callable, `addSeparator`, `actions`, `widgetForAction`), but
lays its items out with `FlowLayout`: when the Graph tab is narrow (a laptop screen with the
chat beside it) the controls take a second or third line, and every one stays visible.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFrame, QLayout, QLayoutItem, QSizePolicy, QToolButton, QWidget


class FlowLayout(QLayout):
    """Items left to right, wrapping to the next line when the width runs out (Qt's flow layout)."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 4, min_width: int = 0):
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing = spacing
        self._min_width = min_width  # the layout's height at its minimum width is what a window must allow

    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._arrange(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._arrange(rect, move=True)

    def sizeHint(self) -> QSize:
        return self.minimumSize()

    def minimumSize(self) -> QSize:
        size = QSize(self._min_width, 0)
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        margins = self.contentsMargins()
        return size + QSize(margins.left() + margins.right(), margins.top() + margins.bottom())

    def _arrange(self, rect: QRect, move: bool) -> int:
        margins = self.contentsMargins()
        area = rect.adjusted(margins.left(), margins.top(), -margins.right(), -margins.bottom())
        x, y, line_height = area.x(), area.y(), 0
        for item in self._items:
            if item.isEmpty():
                continue
            hint = item.sizeHint()
            if x + hint.width() > area.right() + 1 and line_height > 0:
                x, y, line_height = area.x(), y + line_height + self._spacing, 0
            if move:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + self._spacing
            line_height = max(line_height, hint.height())
        return y + line_height - rect.y() + margins.bottom()


class FlowBar(QWidget):
    """A wrapping bar of widgets and actions; nothing in it is ever hidden for lack of room."""

    def __init__(self, title: str, parent: QWidget | None = None, min_width: int = 0):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.flow = FlowLayout(self, min_width=min_width)
        self.flow.setContentsMargins(4, 2, 4, 2)
        self._buttons: dict[QAction, QToolButton] = {}

    def addWidget(self, widget: QWidget) -> QWidget:
        """Add a control at the end."""
        self.flow.addWidget(widget)
        return widget

    def addAction(self, action: QAction | str, slot: Callable[[], object] | None = None) -> QAction:
        """Add an action (or make one from text and a callable) with a button that triggers it."""
        if isinstance(action, str):
            action = QAction(action, self)
            if slot is not None:
                action.triggered.connect(lambda _checked=False: slot())
        super().addAction(action)
        button = QToolButton(self)
        button.setDefaultAction(action)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self._buttons[action] = button
        self.flow.addWidget(button)
        return action

    def addSeparator(self) -> None:
        """A thin upright line between groups of controls."""
        line = QFrame(self, frameShape=QFrame.Shape.VLine, frameShadow=QFrame.Shadow.Sunken)
        line.setFixedHeight(20)
        self.flow.addWidget(line)

    def widgetForAction(self, action: QAction) -> QToolButton | None:
        """The button that shows `action`."""
        return self._buttons.get(action)
