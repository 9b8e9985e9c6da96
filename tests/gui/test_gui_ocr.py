"""A scanned PDF added from the window: OCR's page progress in the stage label, Cancel between
pages, then the Type column with OCR's confidence and the per-page summary as its tooltip."""

from __future__ import annotations

import re

from docatlas.gui.models.documents_model import KIND, NAME
from fixtures.make_scans import make_scan_pdf
from gui_helpers import statuses, wait_idle
from PySide6.QtCore import Qt

PAGES = [["Meridian Shipping signed the contract with Harbor Authority."],
         ["Anna Kovacs approved the payment to Meridian Shipping."],
         ["Harbor Authority met Anna Kovacs in Rotterdam."]]


def row_of(window, name: str) -> int:
    model = window.documents_panel.model
    return next(r for r in range(model.rowCount()) if model.index(r, NAME).data() == name)


def test_a_scan_is_ocrd_page_by_page_can_be_cancelled_and_shows_its_confidence(qtbot, make_window, tmp_path):
    scan = make_scan_pdf(tmp_path / "scan.pdf", PAGES)
    window = make_window()
    panel = window.documents_panel
    window.interaction.choose_files = lambda: [scan]
    qtbot.mouseClick(panel.add_files_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.stage_label.text().startswith("OCR scan.pdf: page 1 of 3"), timeout=60_000)
    assert panel.overall_bar.maximum() == 3
    qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window, timeout=60_000)
    assert "scan.pdf" not in statuses(window)  # nothing half-read was stored

    qtbot.mouseClick(panel.add_files_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window, timeout=120_000)
    assert statuses(window)["scan.pdf"] == "done"
    cell = panel.model.index(row_of(window, "scan.pdf"), KIND)
    assert cell.data().startswith("PDF · OCR ")
    assert int(cell.data().removeprefix("PDF · OCR ").rstrip("%")) >= 80
    assert re.search(r"OCR: 3 pages, confidence (0\.\d\d|1\.00) \(lowest", cell.data(Qt.ItemDataRole.ToolTipRole))
    names = {r["name"] for r in window.workspace.store.query("SELECT name FROM entities")}
    assert {"Meridian Shipping", "Anna Kovacs"} <= names
