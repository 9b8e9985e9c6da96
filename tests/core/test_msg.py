"""Outlook .msg read from real messages the tests write (tests/fixtures/msg_writer.py, an OLE
compound file with MAPI property streams): headers become metadata and the page's first
lines, the body follows, and an attachment is a document of its own linked to its message,
the way .eml messages are read (test_formats.py, test_formats_ingest.py)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import olefile
import pytest
from docatlas.core.ingest.loaders import Document, load_document
from fixtures.make_docs import make_docx
from fixtures.msg_writer import write_cfb, write_msg
from fixtures.scripted_model import lightrag_responder
from helpers import docatlas

SENT = dt.datetime(2026, 3, 2, 10, 15, tzinfo=dt.UTC)


def make_message(path: Path, tmp: Path, **options) -> Path:
    report = make_docx(tmp / "report.docx", title="Harbor report", heading="Findings",
                       paragraphs=["Harbor Analytics audited the Lisbon depot in March."])
    return write_msg(path, "Quarterly figures", ("Ada Lovelace", "ada@analytical.example"),
                     [("Charles Babbage", "charles@engines.example")],
                     "Ada met Charles at the Harbor Analytics office in Lisbon.", SENT,
                     [("report.docx", report.read_bytes())], **options)


def test_the_writer_makes_a_compound_file_olefile_reads_without_defects(tmp_path: Path) -> None:
    big, small = bytes(range(256)) * 40, b"under the mini stream cutoff"
    path = write_cfb(tmp_path / "x.cfb", {"Big": big, "Folder": {"Small": small, "Empty": b""}})
    with olefile.OleFileIO(str(path), raise_defects=olefile.DEFECT_INCORRECT) as ole:
        assert sorted(ole.listdir()) == [["Big"], ["Folder", "Empty"], ["Folder", "Small"]]
        assert ole.openstream("Big").read() == big and ole.openstream("Folder/Small").read() == small
        assert ole.openstream("Folder/Empty").read() == b"" and not ole.parsing_issues


def test_a_message_with_an_attachment_is_a_document_and_its_attachment_another(tmp_path: Path) -> None:
    import extract_msg

    path = make_message(tmp_path / "figures.msg", tmp_path)
    with extract_msg.openMsg(str(path)) as opened:  # the library DocAtlas reads with agrees it is a message
        assert opened.subject == "Quarterly figures" and len(opened.attachments) == 1
    document = load_document(path)
    meta = dict(document.metadata)
    assert document.kind == "msg" and document.title == "Quarterly figures"
    assert meta["from"] == "Ada Lovelace <ada@analytical.example>"
    assert meta["to"] == "Charles Babbage <charles@engines.example>"
    assert meta["date"] == "2026-03-02T10:15:00+00:00" and meta["subject"] == "Quarterly figures"
    assert meta["attachments"] == "report.docx"
    assert document.text == ("From: Ada Lovelace <ada@analytical.example>\n"
                             "To: Charles Babbage <charles@engines.example>\n"
                             "Date: 2026-03-02T10:15:00+00:00\nSubject: Quarterly figures\n"
                             "Attachments: report.docx\n\n"
                             "Ada met Charles at the Harbor Analytics office in Lisbon.")
    ((report, found),) = list(document.parts)
    assert report.name == "report.docx" and isinstance(found, Document)
    assert found.path == Path(f"{path}#attachment-1-report.docx")
    assert "Harbor Analytics audited the Lisbon depot" in found.text
    assert ("attached to", "figures.msg") in found.metadata


def test_recipients_and_sender_address_found_where_outlook_left_them(tmp_path: Path) -> None:
    """A message without a recipient table keeps its display line; a sender whose address is only
    PR_SENDER_EMAIL_ADDRESS keeps it."""
    path = make_message(tmp_path / "exported.msg", tmp_path, recipient_table=False, smtp_sender=False)
    meta = dict(load_document(path).metadata)
    assert meta["to"] == "Charles Babbage"
    assert meta["from"] == "Ada Lovelace <ada@analytical.example>"


@pytest.fixture
def model(fake_ollama, monkeypatch):
    fake_ollama.responder = lightrag_responder
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    return fake_ollama


def test_a_msg_through_ingest_and_status(model, capsys, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    make_message(docs / "figures.msg", tmp_path)
    ws = str(tmp_path / "ws")
    code, _, err = docatlas(capsys, "--data-dir", ws, "ingest", str(docs))
    assert code == 0, err
    code, out, err = docatlas(capsys, "--data-dir", ws, "status", "--json")
    assert code == 0, err
    by_path = {Path(d["path"]).name: d for d in json.loads(out)["documents"]}
    message_doc, attachment = by_path["figures.msg"], by_path["figures.msg#attachment-1-report.docx"]
    assert message_doc["metadata"]["from"] == "Ada Lovelace <ada@analytical.example>"
    assert message_doc["metadata"]["date"] == "2026-03-02T10:15:00+00:00"
    assert attachment["part_of"] == message_doc["id"] and attachment["status"] == "done"
    assert attachment["metadata"]["attached to"] == "figures.msg"
