"""How numbers, durations and places in documents are written in the window."""

from __future__ import annotations

import html


def human_size(size: int) -> str:
    """Bytes as people read them: 4.7 GB, 274 MB, 12 KB."""
    value = float(max(0, size))
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            if unit in ("B", "KB") or value >= 100:
                return f"{value:.0f} {unit}"
            return f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"


def duration(seconds: float | None) -> str:
    """"45 s", "3 min 05 s", "1 h 02 min"."""
    total = round(seconds or 0)
    if total < 60:
        return f"{total} s"
    if total < 3600:
        return f"{total // 60} min {total % 60:02d} s"
    return f"{total // 3600} h {total % 3600 // 60:02d} min"


def page_text(start: int | None, end: int | None) -> str:
    """"p. 3", "pp. 3-4", or "" for text without pages."""
    if start is None:
        return ""
    return f"p. {start}" if end in (None, start) else f"pp. {start}-{end}"


def plain_tip(text: str) -> str:
    """A tooltip that shows `text` as text: Qt renders a tooltip that looks like HTML as HTML, so
    untrusted names and paths are escaped (an `<img src=file:…>` in a name stays those characters)."""
    escaped = html.escape(text, quote=False).replace("\n", "<br>")
    return f"<p style='white-space:pre-wrap'>{escaped}</p>"


def button_text(text: str) -> str:
    """Text for a button or menu item: an "&" in a name is shown, not taken as a keyboard mnemonic."""
    return text.replace("&", "&&")
