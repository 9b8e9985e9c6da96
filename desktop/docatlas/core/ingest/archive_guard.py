"""The one guard for zip-based documents: .docx, .pptx, .xlsx, .epub and .odt.

Before any part is inflated, the archive's directory is read and the file refused when
its parts would inflate past `MAX_UNCOMPRESSED_BYTES`, when a large part inflates more than
`MAX_RATIO` times its stored size (a zip bomb), or when it holds more than `MAX_MEMBERS`
parts. The directory's sizes are what the parts may inflate to: Python's zipfile stops
reading a part at its declared size, so a lying header cannot inflate more.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from docatlas.core.base.errors import DocumentError
from docatlas.core.base.paths import shown_name

MAX_UNCOMPRESSED_BYTES = 256 << 20
MAX_RATIO = 100
RATIO_CHECKED_FROM = 4 << 20  # small parts may compress very well (repetitive XML) without harm
MAX_MEMBERS = 10_000


def check_archive(path: Path, kind: str = "Word document") -> None:
    """Raise `DocumentError` unless `path` is a zip archive that is safe to inflate."""
    name = shown_name(path)
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise DocumentError(f"{name} is not a valid {kind} or is damaged; open and re-save it "
                            "and add it again.") from exc
    if len(members) > MAX_MEMBERS:
        raise _refused(name, kind, f"it holds {len(members):,} parts")
    total = sum(member.file_size for member in members)
    if total > MAX_UNCOMPRESSED_BYTES:
        raise _refused(name, kind, f"it would inflate to {total / (1 << 20):,.0f} MB")
    for member in members:
        if member.file_size >= RATIO_CHECKED_FROM and member.file_size > MAX_RATIO * max(1, member.compress_size):
            ratio = member.file_size / max(1, member.compress_size)
            raise _refused(name, kind, f"one part would inflate {ratio:,.0f} times its size")


def _refused(name: str, kind: str, why: str) -> DocumentError:
    return DocumentError(f"{name} was not opened because {why}, which is how a zip bomb looks "
                         f"(DocAtlas reads a {kind} of up to {MAX_UNCOMPRESSED_BYTES >> 20} MB "
                         "unpacked); open and re-save it, or split it, and add it again.")
