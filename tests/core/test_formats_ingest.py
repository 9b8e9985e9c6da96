"""Email, decks and workbooks through `docatlas ingest` and `status` against our Ollama-API server
over real HTTP and a real SQLite workspace: headers become metadata and entities with their
sources, an attachment is a document of its own linked to its message, and it leaves with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from docatlas.core.graph.export import graph_data
from docatlas.core.storage import metadata as stored_metadata
from docatlas.core.storage.database import Store
from fixtures.make_formats import make_eml, make_mbox, make_pptx, make_xlsx, message
from fixtures.scripted_model import lightrag_responder
from helpers import docatlas
from test_retrieval_helpers import Script


@pytest.fixture
def model(fake_ollama, monkeypatch):
    fake_ollama.responder = lightrag_responder
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    return fake_ollama



def status(capsys, ws: str, *extra: str) -> dict:
    code, out, err = docatlas(capsys, "--data-dir", ws, "status", "--json", *extra)
    assert code == 0, err
    return json.loads(out)


def test_mail_deck_and_workbook_through_the_cli(model, capsys, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "parts").mkdir(parents=True)
    mail = make_eml(docs / "figures.eml", docs / "parts", with_image=True)
    make_mbox(docs / "box.mbox", ["Budget Review", "Fleet Plan"])
    make_pptx(docs / "fleet.pptx", ["Grace Hopper presented the Aurora Survey."])
    make_xlsx(docs / "staff.xlsx", [["Name", "Employer"], ["Ada Lovelace", "Harbor Analytics"]])
    (docs / "parts" / "report.docx").unlink()  # only the copy inside the message remains
    ws = str(tmp_path / "ws")

    code, out, err = docatlas(capsys, "--data-dir", ws, "ingest", str(docs))
    # images are read by OCR now: the damaged logo attached to the message is a listed failure
    assert code == 1 and "logo.png is not a valid image or is damaged" in err, err

    report = status(capsys, ws)
    by_path = {Path(d["path"]).name: d for d in report["documents"]}
    message_doc = by_path["figures.eml"]
    attachment = by_path["figures.eml#attachment-1-report.docx"]
    assert message_doc["metadata"]["from"] == "Ada Lovelace <ada@analytical.example>"
    assert message_doc["metadata"]["attachments"] == "report.docx, logo.png"
    assert attachment["part_of"] == message_doc["id"] and attachment["status"] == "done"
    assert attachment["metadata"]["attached to"] == "figures.eml"
    assert by_path["box.mbox#message-2"]["title"] == "Fleet Plan"
    assert by_path["box.mbox#message-2"]["part_of"] == by_path["box.mbox"]["id"]
    assert by_path["fleet.pptx"]["metadata"]["author"] == "Grace Hopper"
    assert all(d["status"] == "done" for d in report["documents"])  # the damaged logo is a failure, not a row

    with Store(Path(ws) / "docatlas.sqlite") as store:
        sources = {e["name"]: {Path(p).name for p in e["sources"]} for e in graph_data(store)["entities"]}
        chunk_pages = store.query("SELECT c.page_start FROM chunks c JOIN documents d ON d.id = c.document_id"
                                  " WHERE d.path LIKE '%fleet.pptx'")
    assert {"figures.eml", "staff.xlsx"} <= sources["Ada Lovelace"]  # a person in the headers, with sources
    assert "figures.eml#attachment-1-report.docx" in sources["Harbor Analytics"]
    assert "Mary Somerville" in sources and "Grace Hopper" in sources
    assert [r["page_start"] for r in chunk_pages] == [1]  # the slide number is the page

    only_ada = status(capsys, ws, "--where", "from=ada@analytical")
    assert {Path(d["path"]).name for d in only_ada["documents"]} == {
        "figures.eml", "box.mbox#message-1", "box.mbox#message-2"}
    assert {Path(d["path"]).name for d in status(capsys, ws, "--where", "Grace")["documents"]} == {"fleet.pptx"}
    code, out, _ = docatlas(capsys, "--data-dir", ws, "status")
    assert "from: Ada Lovelace <ada@analytical.example>" in out

    model.responder = Script()  # answers now: the references say who sent the message and when
    code, out, err = docatlas(capsys, "--data-dir", ws, "query", "Where did Ada Lovelace meet Charles?",
                              "--mode", "naive", "--json")
    assert code == 0, err
    refs = {Path(r["document"]).name: r for r in json.loads(out)["references"]}
    assert refs["figures.eml"]["byline"] == "Ada Lovelace <ada@analytical.example>, 2026-03-02"
    code, out, _ = docatlas(capsys, "--data-dir", ws, "query", "Where did Ada Lovelace meet Charles?",
                            "--mode", "naive")
    assert "figures.eml (chunk" in out and "— Ada Lovelace <ada@analytical.example>, 2026-03-02" in out

    model.responder = lightrag_responder
    mail.write_bytes(message("Quarterly figures", "No attachment this time, says Ada Lovelace.").as_bytes())
    code, _, err = docatlas(capsys, "--data-dir", ws, "ingest", str(mail))
    assert code == 0, err
    names = {Path(d["path"]).name for d in status(capsys, ws)["documents"]}
    assert "figures.eml#attachment-1-report.docx" not in names  # the new version has no attachment

    code, _, err = docatlas(capsys, "--data-dir", ws, "delete", str(Path(docs / "box.mbox").resolve()))
    assert code == 0, err
    names = {Path(d["path"]).name for d in status(capsys, ws)["documents"]}
    assert not any(name.startswith("box.mbox") for name in names)  # its messages went with it


def test_a_damaged_attachment_is_a_failure_with_its_sentence(model, capsys, tmp_path: Path) -> None:
    msg = message("Broken", "See the attached PDF from Harbor Analytics.")
    msg.add_attachment(b"%PDF-1.4 broken", maintype="application", subtype="pdf", filename="scan.pdf")
    path = tmp_path / "broken.eml"
    path.write_bytes(msg.as_bytes())
    ws = str(tmp_path / "ws")
    code, out, err = docatlas(capsys, "--data-dir", ws, "ingest", str(path))
    assert code == 1
    assert "scan.pdf is not a valid PDF or is damaged" in out + err
    with Store(Path(ws) / "docatlas.sqlite") as store:
        (doc,) = store.documents()
        assert stored_metadata.metadata_of(store, [doc.id])[doc.id]["subject"] == "Broken"


def test_a_grown_mailbox_extracts_only_its_new_message(model, capsys, tmp_path: Path) -> None:
    box = make_mbox(tmp_path / "box.mbox", ["Budget Review", "Fleet Plan"])
    ws = str(tmp_path / "ws")
    code, _, err = docatlas(capsys, "--data-dir", ws, "ingest", str(box))
    assert code == 0, err
    first = {Path(d["path"]).name: d["id"] for d in status(capsys, ws)["documents"]}
    make_mbox(tmp_path / "more.mbox", ["Harbor Visit"])
    with open(box, "ab") as out:
        out.write((tmp_path / "more.mbox").read_bytes().replace(b"Message 1:", b"Message 3:"))
    chats_before = len([r for r in model.requests if r["path"] == "/api/chat"])
    code, _, err = docatlas(capsys, "--data-dir", ws, "ingest", str(box))
    assert code == 0, err
    now = {Path(d["path"]).name: d["id"] for d in status(capsys, ws)["documents"]}
    assert now["box.mbox#message-1"] == first["box.mbox#message-1"]  # unchanged messages are kept as they were
    assert now["box.mbox#message-2"] == first["box.mbox#message-2"]
    assert "box.mbox#message-3" in now
    chats = [r for r in model.requests if r["path"] == "/api/chat"][chats_before:]
    sent = " ".join(m["content"] for r in chats for m in r["body"]["messages"])
    assert "Harbor Visit" in sent and "Budget Review meeting was held" not in sent
