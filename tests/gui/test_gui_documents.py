"""The documents panel against the fake Ollama: add, watch progress, drop, fail, retry, delete."""

from __future__ import annotations

from pathlib import Path

from core.helpers import DOCUMENTS
from docatlas.core.base.progress import Progress
from docatlas.core.storage.read_models import DocumentSummary
from docatlas.gui.models.documents_model import CHUNKS, ENTITIES, NAME, STATUS, DocumentTableModel, RunView
from gui_helpers import statuses, wait_idle
from PySide6.QtCore import QMimeData, QPoint, Qt, QUrl
from PySide6.QtGui import QDropEvent


def test_added_documents_are_extracted_with_progress(qtbot, make_window, corpus, server):
    window = make_window()
    panel = window.documents_panel
    seen: list[object] = []
    window.ingestion.progressed.connect(seen.append)
    window.interaction.choose_files = lambda: sorted(corpus.iterdir())
    qtbot.mouseClick(panel.add_files_button, Qt.MouseButton.LeftButton)
    assert window.ingestion.busy
    wait_idle(qtbot, window)

    assert statuses(window) == {name: "done" for name in DOCUMENTS}
    model = panel.model
    for row in range(model.rowCount()):
        assert int(model.index(row, CHUNKS).data()) >= 1
        assert int(model.index(row, ENTITIES).data()) >= 2
    stages = [p.stage for p in seen if isinstance(p, Progress)]
    assert stages[0] == "load" and "extract" in stages and stages[-1] == "done"
    extract = [p for p in seen if isinstance(p, Progress) and p.stage == "extract"]
    assert extract[-1].chunks_done == extract[-1].chunks_total > 0
    assert panel.overall_bar.value() == panel.overall_bar.maximum()
    assert "Done: 3 documents" in panel.notice.text()
    assert "3 documents" in window.work_label.text()
    window.tabs.setCurrentWidget(window.graph_tab)  # the graph tab shows what the run found
    entities = window.workspace.store.counts()["entities"]
    qtbot.waitUntil(lambda: getattr(window.graph_tab, "model", None) is not None
                    and len(window.graph_tab.model.index) == entities > 0, timeout=15000)
    assert any(r["path"] == "/api/embed" for r in server.requests)  # embedded for search afterwards


def test_unchanged_documents_are_skipped_on_the_next_add(qtbot, make_window, corpus):
    window = make_window()
    window.documents_panel.add_paths([corpus])
    wait_idle(qtbot, window)
    window.documents_panel.add_paths([corpus])
    wait_idle(qtbot, window)
    assert set(statuses(window).values()) == {"skipped (unchanged)"}


def test_dropping_a_folder_adds_its_documents(qtbot, make_window, corpus):
    window = make_window()
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(corpus))])
    event = QDropEvent(QPoint(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    window.documents_panel.dropEvent(event)
    assert event.isAccepted()
    wait_idle(qtbot, window)
    assert sorted(statuses(window)) == sorted(DOCUMENTS)


def test_failures_are_shown_with_the_reason_and_retry_fixes_them(qtbot, make_window, corpus, server, tmp_path):
    window = make_window()
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    sheet = tmp_path / "budget.numbers"
    sheet.write_bytes(b"PK\x03\x04")
    server.fail_next("http500", times=3, paths=("/api/chat",))  # alpha's one chunk: the call and 2 retries
    window.documents_panel.add_paths([corpus / "alpha.txt", empty, sheet])
    wait_idle(qtbot, window)

    shown = statuses(window)
    assert shown["alpha.txt"].startswith("failed: ") and "Ollama" in shown["alpha.txt"]
    assert shown["empty.txt"].startswith("failed: ")
    panel = window.documents_panel
    assert "budget.numbers has an unsupported type" in panel.failures_label.text()
    assert "unsupported" not in panel.notice.text()  # failures apart from the summary
    assert panel.notice.text().startswith("Done: ")
    assert "(3 failed)" in window.work_label.text() or "failed)" in window.work_label.text()
    assert window.documents_panel.retry_button.isEnabled()

    qtbot.mouseClick(window.documents_panel.retry_button, Qt.MouseButton.LeftButton)
    assert not panel.failures_label.isVisibleTo(panel)  # the last run's failures go when the next starts
    wait_idle(qtbot, window)
    assert statuses(window)["alpha.txt"] == "done"


def test_delete_says_which_entities_go_and_asks_first(qtbot, make_window, corpus):
    window = make_window()
    panel = window.documents_panel
    panel.add_paths([corpus])
    wait_idle(qtbot, window)
    questions: list[tuple] = []
    answer = {"value": False}

    def confirm(title, text, action="OK", details=""):
        questions.append((title, text, details))
        return answer["value"]

    window.interaction.confirm = confirm
    beta_row = next(r for r in range(panel.model.rowCount()) if panel.model.index(r, NAME).data() == "beta.md")
    panel.table.selectRow(beta_row)
    assert panel.delete_button.isEnabled()
    qtbot.mouseClick(panel.delete_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(questions), timeout=5000)  # what goes is read in the background first
    _title, text, details = questions[-1]
    assert "beta.md" in text
    assert "Northwind Labs" in details and "Maria Lopez" not in details  # only beta.md names Northwind Labs
    assert not window.ingestion.busy and "beta.md" in statuses(window)  # declined: nothing happens

    answer["value"] = True
    qtbot.mouseClick(panel.delete_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(questions) == 2, timeout=5000)  # asked again, then deleting
    wait_idle(qtbot, window)
    assert "beta.md" not in statuses(window)
    names = {r["name"] for r in window.workspace.store.query("SELECT name FROM entities")}
    assert "Northwind Labs" not in names and "Maria Lopez" in names


def test_files_added_during_a_run_wait_their_turn(qtbot, make_window, corpus, tmp_path):
    window = make_window()
    extra = tmp_path / "later.txt"
    extra.write_text("Ada Byron met Alan Turing in London.", encoding="utf-8")
    window.documents_panel.add_paths([corpus])
    window.documents_panel.add_paths([extra])
    assert window.ingestion.queue == [Path(extra)]
    qtbot.waitUntil(lambda: not window.ingestion.busy and "later.txt" in statuses(window), timeout=20_000)
    wait_idle(qtbot, window)
    assert set(statuses(window).values()) == {"done"}


def summary(document_id: int, path: str, pending: int = 0, done: int = 0) -> DocumentSummary:
    """A row as the read models return it."""
    return DocumentSummary(document_id, path, Path(path).stem, "txt", 10, "pending" if pending else "done", "",
                           pending + done, done, 0, pending, done)


def test_a_tick_updates_only_the_rows_it_read_and_a_file_read_again_replaces_its_row(qtbot):
    model = DocumentTableModel(lambda: RunView(active=True))
    model.refresh([summary(1, "/a.txt", done=2), summary(2, "/b.txt", pending=3)])
    changed: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda first, last, *_: changed.append((first.row(), last.row())))

    model.update([summary(2, "/b.txt", pending=1, done=2), summary(3, "/c.txt", pending=4)])
    assert [r.id for r in model.rows] == [1, 2, 3] and changed == [(1, 1)]  # row 0 untouched
    assert model.index(1, STATUS).data().startswith("extracting 2/3")
    model.update([summary(4, "/a.txt", pending=5)])  # a.txt changed on disk: stored again under a new id
    assert [(r.id, r.path) for r in model.rows] == [(4, "/a.txt"), (2, "/b.txt"), (3, "/c.txt")]
    assert model.row_by_id(1) is None and model.row_by_id(4).chunks_pending == 5

    model.refresh([summary(2, "/b.txt", done=3)])  # a full read drops the documents that are gone
    assert [r.id for r in model.rows] == [2] and model.row_by_id(2).chunks_pending == 0
