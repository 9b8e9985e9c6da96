"""Light and dark themes: follow the system's colour scheme, or a fixed choice.

The Fusion style with an explicit palette looks the same on every platform; when the theme
is "system", the palette follows `QStyleHints.colorScheme` and its changes.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QWidget

_DARK = {
    QPalette.ColorRole.Window: "#2b2b2b",
    QPalette.ColorRole.WindowText: "#e6e6e6",
    QPalette.ColorRole.Base: "#1f1f1f",
    QPalette.ColorRole.AlternateBase: "#2a2a2a",
    QPalette.ColorRole.ToolTipBase: "#3a3a3a",
    QPalette.ColorRole.ToolTipText: "#f0f0f0",
    QPalette.ColorRole.Text: "#e6e6e6",
    QPalette.ColorRole.Button: "#353535",
    QPalette.ColorRole.ButtonText: "#e6e6e6",
    QPalette.ColorRole.BrightText: "#ff6b6b",
    QPalette.ColorRole.Link: "#6ab0ff",
    QPalette.ColorRole.Highlight: "#2f65ca",
    QPalette.ColorRole.HighlightedText: "#ffffff",
    QPalette.ColorRole.PlaceholderText: "#9a9a9a",
}


def dark_palette() -> QPalette:
    """A dark palette for Fusion."""
    palette = QPalette()
    for role, color in _DARK.items():
        palette.setColor(role, QColor(color))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#7a7a7a"))
    return palette


def system_is_dark() -> bool:
    """True when the system asks for a dark colour scheme."""
    return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


def apply_theme(app: QApplication, theme: str) -> None:
    """Apply "light", "dark" or "system" (the system's scheme, now and when it changes)."""
    app.setStyle("Fusion")
    dark = theme == "dark" or (theme == "system" and system_is_dark())
    app.setPalette(dark_palette() if dark else app.style().standardPalette())
    app.setProperty("docatlas_theme", theme)
    _restyle(app)


def _restyle(app: QApplication) -> None:
    """Make widgets that resolved the old palette once take the new one: style sheets that name
    `palette(...)` and rich-text labels with links keep the colours of the theme they were made in."""
    for widget in app.allWidgets():
        sheet = widget.styleSheet()
        if "palette(" in sheet:
            widget.setStyleSheet("")
            widget.setStyleSheet(sheet)
        if isinstance(widget, QLabel) and widget.textFormat() != Qt.TextFormat.PlainText and "<a " in widget.text():
            text = widget.text()
            widget.clear()
            widget.setText(text)


def follow_system(app: QApplication) -> None:
    """Re-apply the "system" theme whenever the system's scheme changes."""
    def changed(_scheme: object) -> None:
        if app.property("docatlas_theme") == "system":
            apply_theme(app, "system")
    QGuiApplication.styleHints().colorSchemeChanged.connect(changed)


def error_color() -> QColor:
    """Red that reads well on the current palette."""
    dark = QGuiApplication.palette().color(QPalette.ColorRole.Base).lightness() < 128
    return QColor("#ef5350" if dark else "#c62828")


def error_style() -> str:
    """A style sheet colouring a label's text as an error."""
    return f"color: {error_color().name()};"


def restyle(widget: QWidget, sheet: str) -> None:
    """Set `widget`'s style sheet only when it changes: setting one, even the same, polishes the
    widget again, and views that redraw on every progress tick would pay for it on every tick."""
    if widget.styleSheet() != sheet:
        widget.setStyleSheet(sheet)
