"""A Word file's metadata comes from its core-properties part alone (the text was parsed once already)."""

from __future__ import annotations

import datetime
from pathlib import Path

from docatlas.core.ingest.loaders import load_document
from fixtures.make_docs import make_docx


def test_word_metadata_is_read_from_its_own_part(tmp_path: Path) -> None:
    import docx

    path = make_docx(tmp_path / "letters.docx", title="Letters")
    document = docx.Document(str(path))
    document.core_properties.author = "Grace Hopper"
    document.core_properties.created = datetime.datetime(1952, 5, 1, 9, 30)
    document.save(str(path))

    meta = dict(load_document(path).metadata)
    assert (meta["author"], meta["title"], meta["created"]) == ("Grace Hopper", "Letters", "1952-05-01T09:30:00+00:00")
