"""Long runs in the window: pause and resume, cancel and resume, closing mid-run, the next start."""

from __future__ import annotations

from core.helpers import long_document
from docatlas.core.base.progress import Progress
from gui_helpers import statuses, wait_idle, wait_read
from PySide6.QtCore import Qt

SMALL_CHUNKS = {"chunking__chunk_tokens": 80, "chunking__overlap_tokens": 8}


def long_corpus(tmp_path):
    folder = tmp_path / "long"
    folder.mkdir()
    (folder / "letters.txt").write_text(long_document(120), encoding="utf-8")
    return folder


def chunks_done(window) -> int:
    counts = window.workspace.store.counts()
    return counts["chunks_done"]


def extracted_some(window, at_least: int = 3):
    p = window.ingestion.last_progress
    return p is not None and p.stage == "extract" and p.chunks_done >= at_least


def test_cancel_keeps_finished_chunks_and_resume_finishes(qtbot, make_window, server, tmp_path):
    server.latency = 0.02
    window = make_window(**SMALL_CHUNKS)
    panel = window.documents_panel
    panel.add_paths([long_corpus(tmp_path)])
    qtbot.waitUntil(lambda: extracted_some(window), timeout=20_000)
    qtbot.waitUntil(lambda: statuses(window).get("letters.txt", "").startswith("extracting "), timeout=5000)
    qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)

    counts = window.workspace.store.counts()
    assert counts["chunks_pending"] > 0 and counts["chunks_done"] >= 3
    assert statuses(window)["letters.txt"].startswith("pending ")
    assert "still pending" in panel.notice.text()
    left = counts["chunks_pending"]
    assert panel.stage_label.text() == f"Stopped: {left} chunks left — Resume"
    assert window.work_label.text().startswith(f"Stopped: {left} chunks left — Resume")
    assert not panel.overall_bar.isVisibleTo(panel)  # no full "1/1" bar beside a stopped run
    assert window.windowTitle() == f"{window.workspace.name} — DocAtlas"
    assert panel.resume_banner.isVisibleTo(panel) and panel.resume_button.isEnabled()

    server.latency = 0.0
    qtbot.mouseClick(panel.banner_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)
    assert window.workspace.store.counts()["chunks_pending"] == 0
    assert statuses(window)["letters.txt"] == "done"
    assert not panel.resume_banner.isVisibleTo(panel)
    assert panel.notice.text().startswith("Done: 1 document, ")  # this run's document, not 0
    assert f"{left} chunks extracted" in panel.notice.text() and panel.stage_label.text() == "Done"


def test_pause_holds_the_run_and_resume_continues_it(qtbot, make_window, server, tmp_path):
    server.latency = 0.02
    window = make_window(**SMALL_CHUNKS)
    panel = window.documents_panel
    panel.add_paths([long_corpus(tmp_path)])
    qtbot.waitUntil(lambda: extracted_some(window, 2), timeout=20_000)
    qtbot.mouseClick(panel.pause_button, Qt.MouseButton.LeftButton)
    assert window.ingestion.paused and panel.stage_label.text().startswith("Paus")
    assert not panel.pause_button.isEnabled() and panel.resume_button.isEnabled()
    qtbot.waitUntil(lambda: window.ingestion.phase == "paused", timeout=5000)
    panel.refresh()
    wait_read(qtbot, window)
    assert statuses(window)["letters.txt"].startswith("paused ")
    # every place says paused, none shows an ETA, and later ticks do not bring "Extracting" back
    for text in (panel.stage_label.text(), window.work_label.text()):
        assert text.startswith("Paused at ") and "ETA" not in text
    assert panel.eta_label.text() == ""
    assert window.windowTitle().endswith(f"paused — {window.workspace.name} — DocAtlas")

    server.latency = 0.0
    qtbot.mouseClick(panel.resume_button, Qt.MouseButton.LeftButton)
    assert not window.ingestion.paused
    wait_idle(qtbot, window)
    assert statuses(window)["letters.txt"] == "done"
    assert window.ingestion.last_progress.stage == "done"


def test_closing_mid_run_stops_cleanly_and_the_next_start_offers_to_resume(qtbot, make_window, server, tmp_path):
    server.latency = 0.02
    window = make_window(**SMALL_CHUNKS)
    window.documents_panel.add_paths([long_corpus(tmp_path)])
    qtbot.waitUntil(lambda: extracted_some(window), timeout=20_000)
    seen: list[Progress] = []
    window.ingestion.progressed.connect(lambda p: seen.append(p) if isinstance(p, Progress) else None)
    window.close()
    assert window.isVisible()  # it waits for the run to stop
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=20_000)
    assert seen and seen[-1].stage == "cancelled"
    assert window.tasks.active == []

    again = make_window(**SMALL_CHUNKS)
    panel = again.documents_panel
    wait_read(qtbot, again)  # the workspace is read in the background when it opens
    assert again.workspace.pending_chunks() > 0
    assert panel.resume_banner.isVisibleTo(panel)
    assert "not extracted" in panel.resume_label.text()
    server.latency = 0.0
    qtbot.mouseClick(panel.banner_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, again)
    assert again.workspace.pending_chunks() == 0
