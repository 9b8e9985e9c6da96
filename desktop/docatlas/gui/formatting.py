"""How numbers, durations and places in documents are written in the window."""

from __future__ import annotations


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
