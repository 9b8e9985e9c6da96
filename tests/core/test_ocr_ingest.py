"""Scans through the whole pipeline: the CLI ingests a scanned PDF and an image, the graph
holds the names OCR read, `status` shows the confidence per page; OCR reports each page and
stops between pages."""

from __future__ import annotations

import json
import re
import threading

import pytest
from docatlas.core.jobs.ingest import index
from docatlas.core.storage import scan_pages
from docatlas.core.storage.database import Store
from fixtures.make_scans import make_scan_pdf, render_page
from fixtures.scripted_model import lightrag_responder
from helpers import docatlas, settings_for

PAGE_ONE = ["Meridian Shipping signed the contract with Harbor Authority."]
PAGE_TWO = ["Anna Kovacs approved the payment to Meridian Shipping."]


@pytest.fixture
def model(fake_ollama, monkeypatch):
    fake_ollama.responder = lightrag_responder
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    return fake_ollama



def test_cli_ingests_a_scan_and_an_image_into_the_graph(model, capsys, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    make_scan_pdf(docs / "contract.pdf", [PAGE_ONE, PAGE_TWO])
    render_page(["Harbor Authority met Anna Kovacs in Rotterdam."]).save(docs / "note.jpg", quality=92)
    ws = str(tmp_path / "ws")
    code, out, err = docatlas(capsys, "--data-dir", ws, "ingest", str(docs))
    assert code == 0, err
    assert "2 documents" in out

    code, out, _ = docatlas(capsys, "--data-dir", ws, "export", "--format", "json", "-")
    names = {e["name"] for e in json.loads(out)["entities"]}
    assert {"Meridian Shipping", "Harbor Authority", "Anna Kovacs"} <= names

    code, out, _ = docatlas(capsys, "--data-dir", ws, "status", "--json")
    documents = {d["title"]: d for d in json.loads(out)["documents"]}
    pdf_pages = documents["contract"]["ocr"]["pages"]
    assert [p["page"] for p in pdf_pages] == [1, 2] and all(p["confidence"] > 0.8 for p in pdf_pages)
    assert documents["note"]["ocr"]["pages"][0]["page"] is None

    code, out, _ = docatlas(capsys, "--data-dir", ws, "status")
    # a clean render reads at 0.99 or more, which status rounds to 1.00
    assert re.search(r"OCR: 2 pages, confidence (0\.[89]\d|1\.00)\b", out), out
    assert re.search(r"OCR: 1 page, confidence (0\.[89]\d|1\.00)\b", out), out


def test_each_page_is_reported_and_a_cancel_stops_between_pages(model, tmp_path):
    path = make_scan_pdf(tmp_path / "scan.pdf", [["Page one"], PAGE_ONE, PAGE_TWO])
    settings = settings_for(model)
    cancel = threading.Event()
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        seen = []
        for step in index(store, [path], settings, cancel=cancel):
            if step.stage == "load" and step.step_total:
                seen.append((step.step_done, step.step_total, step.message))
                cancel.set()
        assert seen == [(1, 3, "OCR scan.pdf: page 1 of 3")]
        assert step.stage == "cancelled" and store.documents() == []  # nothing half-read is kept
        assert not [r for r in model.requests if r["path"] == "/api/chat"]

        steps = list(index(store, [path], settings))
        assert [s.step_done for s in steps if s.stage == "load" and s.step_total] == [1, 2, 3]
        assert steps[-1].stage == "done"
        (document,) = store.documents()
        assert [page for page, _ in scan_pages.pages(store, document.id)] == [1, 2, 3]
        store.delete_document(document.id)
        assert scan_pages.pages(store, document.id) == []
