"""Hostile files in the window: a document with very many chunks says so when the run ends."""

from __future__ import annotations

from core.helpers import long_document
from docatlas.core.jobs import feed
from gui_helpers import wait_idle


def test_a_document_with_many_chunks_is_named_in_the_run_summary(qtbot, make_window, tmp_path, monkeypatch):
    monkeypatch.setattr(feed, "LARGE_DOCUMENT_CHUNKS", 5)
    folder = tmp_path / "long"
    folder.mkdir()
    (folder / "letters.txt").write_text(long_document(120), encoding="utf-8")
    window = make_window(chunking__chunk_tokens=80, chunking__overlap_tokens=8)
    panel = window.documents_panel
    panel.add_paths([folder])
    wait_idle(qtbot, window)
    chunks = window.workspace.store.counts()["chunks"]
    assert chunks > 5
    shown = panel.notice.text()
    assert shown.startswith("Done: 1 document,")
    assert f"letters.txt makes {chunks:,} chunks, about {chunks * 2:,} model calls" in shown
