"""What a format loader hands back: a title, numbered pages, metadata and warnings.

`Loaded` is shared by the loaders added for email, slides, sheets and books; the helpers
here give every format the same sentences for the same faults (an OLE file where a zip was
expected means a password or an old format; damage; a size past the limit).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from docatlas.core.base.errors import DocumentError
from docatlas.core.base.paths import shown_name

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
METADATA_KEYS = ("author", "title", "created", "modified", "from", "to", "cc", "date", "subject",
                 "attachments")


@dataclass(frozen=True)
class Part:
    """A document inside another: an attached file (`data`, loaded by its name's suffix) or a
    message of a mailbox (`loaded`). `key` names it within its parent, `name` is shown."""

    key: str
    name: str
    data: bytes | None = None
    loaded: Loaded | None = None


@dataclass
class Loaded:
    """A loaded file before it becomes a `Document`: pages are (number or None, text)."""

    title: str = ""
    pages: list[tuple[int | None, str]] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    parts: Iterable[Part] = ()

    def meta(self, key: str, value: object) -> None:
        """Keep `value` under `key` when it says something (whitespace collapsed)."""
        text = " ".join(str(value).split()) if value is not None else ""
        if text:
            self.metadata[key] = text[:1000]


def refuse_ole(path: Path, kind: str, suffix: str) -> None:
    """An Office file that is an OLE container, not a zip, is encrypted or in the old format."""
    with open(path, "rb") as handle:
        head = handle.read(8)
    if head == OLE_MAGIC:
        raise DocumentError(f"{shown_name(path)} is password-protected or saved in the old {kind} "
                            f"format; remove the password or save it again as {suffix} and add it again.")


def damaged(path: Path, kind: str, suffix: str) -> DocumentError:
    """The sentence for a file of a known type that cannot be parsed."""
    return DocumentError(f"{shown_name(path)} is not a valid {kind} or is damaged; open and re-save "
                         f"it as {suffix} and add it again.")


def too_large(path: Path, limit_mb: int, what: str) -> DocumentError:
    """The sentence for a file past the size a loader reads whole."""
    return DocumentError(f"{shown_name(path)} is larger than {limit_mb} MB, the most DocAtlas reads of "
                         f"{what}; split it into smaller files and add those.")


def iso_date(value: object) -> str:
    """A datetime as ISO 8601 (seconds), anything else as its text; '' for nothing."""
    if value is None:
        return ""
    isoformat = getattr(value, "isoformat", None)
    if callable(isoformat):
        try:
            return str(isoformat(timespec="seconds"))
        except TypeError:
            return str(isoformat())
    return str(value)
