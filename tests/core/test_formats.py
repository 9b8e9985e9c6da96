"""The formats analysts have, loaded from files the tests make: email with an attachment, a
mailbox, a deck, a workbook, a CSV, an EPUB, an ODT and an RTF; and each loader's bad files
(encrypted, damaged, empty, huge), each refused with one sentence naming the file."""

from __future__ import annotations

import zipfile
from email.message import EmailMessage
from pathlib import Path

import pytest
from docatlas.core.base.errors import DocumentError
from docatlas.core.ingest import archive_guard, books, email_loader, sheets
from docatlas.core.ingest.loaded import OLE_MAGIC
from docatlas.core.ingest.loaders import Document, load_document
from fixtures.make_docs import make_docx
from fixtures.make_formats import (
    make_eml,
    make_epub,
    make_mbox,
    make_odt,
    make_pptx,
    make_rtf,
    make_xlsx,
    message,
)


def refused(path: Path) -> str:
    with pytest.raises(DocumentError) as info:
        load_document(path)
    sentence = info.value.message
    assert path.name in sentence and sentence.endswith(".") and "Traceback" not in sentence
    return sentence


def parts(document: Document) -> list:
    return list(document.parts)


# --- email ------------------------------------------------------------------------------


def test_eml_headers_are_metadata_and_text_and_the_attachment_is_a_document(tmp_path: Path) -> None:
    document = load_document(make_eml(tmp_path / "figures.eml", tmp_path, with_image=True))
    meta = dict(document.metadata)
    assert document.kind == "eml" and document.title == "Quarterly figures"
    assert meta["from"] == "Ada Lovelace <ada@analytical.example>"
    assert meta["to"] == "Charles Babbage <charles@engines.example>"
    assert meta["cc"] == "Mary Somerville <mary@royal.example>"
    assert meta["date"] == "2026-03-02T10:15:00+00:00" and meta["subject"] == "Quarterly figures"
    text = document.text
    assert text.startswith("From: Ada Lovelace <ada@analytical.example>\nTo: Charles Babbage")
    assert "Ada met Charles at the Harbor Analytics office in Lisbon." in text
    (report, found), (logo, refusal) = parts(document)
    assert report.name == "report.docx" and isinstance(found, Document)
    assert found.path == Path(f"{tmp_path / 'figures.eml'}#{report.key}")
    assert "Harbor Analytics audited the Lisbon depot" in found.text
    assert ("attached to", "figures.eml") in found.metadata
    assert logo.name == "logo.png" and isinstance(refusal, DocumentError)  # a type DocAtlas does not read


def test_mbox_is_an_index_and_one_document_per_message(tmp_path: Path) -> None:
    document = load_document(make_mbox(tmp_path / "box.mbox", ["Budget", "Ships", "From the harbour"]))
    assert dict(document.metadata)["messages"] == "3"
    assert document.text.splitlines()[1].startswith("Message 2: Ships — from Ada Lovelace")
    messages = parts(document)
    assert [p.key for p, _ in messages] == ["message-1", "message-2", "message-3"]
    third = messages[2][1]
    assert third.title == "From the harbour" and dict(third.metadata)["mailbox"] == "box.mbox"
    assert "Message 3: the From the harbour meeting was held in Porto." in third.text
    assert len({d.content_hash for _, d in messages}) == 3


def test_html_only_message_is_read_as_text(tmp_path: Path) -> None:
    msg = EmailMessage()
    msg["From"], msg["Subject"] = "Grace Hopper <grace@navy.example>", "Compiler"
    msg.set_content("<html><body><p>The <b>compiler</b> works.</p><script>x()</script></body></html>",
                    subtype="html")
    path = tmp_path / "html.eml"
    path.write_bytes(msg.as_bytes())
    document = load_document(path)
    assert "The compiler works." in document.text and "x()" not in document.text


def test_bad_email_files(tmp_path: Path, monkeypatch) -> None:
    noise = tmp_path / "noise.eml"
    noise.write_bytes(b"just some words without any header\n")
    assert "does not look like an email" in refused(noise)
    encrypted = tmp_path / "secret.eml"
    msg = message("Secret", "x")
    msg.clear_content()
    msg.set_content(b"\x30\x82garbage", maintype="application", subtype="pkcs7-mime")
    encrypted.write_bytes(msg.as_bytes())
    assert "encrypted (S/MIME or PGP)" in refused(encrypted)
    assert "is empty" in refused(_empty(tmp_path / "empty.eml"))
    not_box = tmp_path / "box.mbox"
    not_box.write_bytes(b"Subject: no envelope line\n\nhello\n")
    assert "not a valid mailbox" in refused(not_box)
    damaged_msg = tmp_path / "outlook.msg"
    damaged_msg.write_bytes(OLE_MAGIC + b"\x00" * 600)
    assert "not a valid Outlook message" in refused(damaged_msg)
    text_msg = tmp_path / "text.msg"
    text_msg.write_text("not an Outlook file", encoding="utf-8")
    assert "not a valid Outlook message" in refused(text_msg)
    monkeypatch.setattr(email_loader, "MAX_MESSAGE_BYTES", 100)
    assert "larger than" in refused(make_eml(tmp_path / "big.eml", tmp_path))
    assert "larger than" in refused(damaged_msg)


# --- slides, sheets -----------------------------------------------------------------------


def test_pptx_slides_are_pages_with_their_numbers(tmp_path: Path) -> None:
    deck = make_pptx(tmp_path / "fleet.pptx", ["Aurora sails. Lisbon harbour.", "Second slide text."],
                     notes="Ask Grace Hopper")
    document = load_document(deck)
    assert document.kind == "pptx" and document.title == "Fleet review"
    assert [p.number for p in document.pages] == [1, 2, 3]
    assert document.pages[0].text == "Aurora sails\nAurora sails. Lisbon harbour."
    assert document.pages[2].text == "Vessel: Aurora; Port: Lisbon.\nNotes: Ask Grace Hopper"
    assert dict(document.metadata)["author"] == "Grace Hopper"


def test_xlsx_rows_read_as_sentences_labelled_by_the_header(tmp_path: Path) -> None:
    book = make_xlsx(tmp_path / "staff.xlsx", [["Name", "City", "Age"], ["Ada", "London", 36], ["Charles", None, 79]])
    document = load_document(book)
    assert document.pages[0].number == 1
    assert document.pages[0].text == "Sheet People\nName: Ada; City: London; Age: 36.\nName: Charles; Age: 79."
    meta = dict(document.metadata)
    assert meta["author"] == "Ada Lovelace" and meta["title"] == "Staff list" and "created" in meta
    assert document.warnings == ()


def test_huge_sheet_is_sampled_with_a_warning(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sheets, "MAX_ROWS", 50)
    document = load_document(make_xlsx(tmp_path / "big.xlsx", [["Name", "City", "Row"]], extra_rows=500))
    lines = document.pages[0].text.splitlines()[1:]
    assert 25 <= len(lines) <= 50 and lines[0] == "Name: Person 0; City: Porto; Row: 0."
    assert int(lines[-1].split("Row: ")[1].rstrip(".")) >= 450  # spread through the sheet, not the first 50
    (warning,) = document.warnings
    assert "big.xlsx" in warning and "500 rows" in warning and f"{len(lines)} rows spread evenly" in warning
    csv_file = tmp_path / "big.csv"
    csv_file.write_text("Name;City\n" + "".join(f"P{i};Porto\n" for i in range(500)), encoding="utf-8")
    document = load_document(csv_file)
    assert 25 <= len(document.text.splitlines()) <= 50 and document.text.startswith("Name: P0; City: Porto.")
    assert len(document.warnings) == 1


def test_csv_sniffs_the_delimiter_and_keeps_quoted_commas(tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    path.write_bytes("\ufeffName,City\nAda,London\nCharles,\"London, UK\"\nZoë,\n".encode())
    assert load_document(path).text == "Name: Ada; City: London.\nName: Charles; City: London, UK.\nName: Zoë."


def test_bad_office_files(tmp_path: Path, monkeypatch) -> None:
    for suffix, kind in ((".pptx", "PowerPoint"), (".xlsx", "Excel")):
        locked = tmp_path / f"locked{suffix}"
        locked.write_bytes(OLE_MAGIC + b"\x00" * 600)
        assert f"password-protected or saved in the old {kind} format" in refused(locked)
        broken = tmp_path / f"broken{suffix}"
        broken.write_bytes(b"PK\x03\x04 not really a zip")
        assert "is not a valid" in refused(broken)
        assert "is empty" in refused(_empty(tmp_path / f"empty{suffix}"))
    blank = tmp_path / "blank.pptx"
    from pptx import Presentation

    Presentation().save(blank)
    assert "is empty" in refused(blank)
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"a,b\n\x00\x01,\x00\n")
    assert "does not look like a CSV" in refused(binary)


@pytest.mark.parametrize("suffix", [".pptx", ".xlsx", ".epub", ".odt"])
def test_every_zip_format_passes_the_bomb_guard(tmp_path: Path, suffix: str, monkeypatch) -> None:
    monkeypatch.setattr(archive_guard, "MAX_UNCOMPRESSED_BYTES", 1 << 20)
    bomb = tmp_path / f"bomb{suffix}"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("content.xml", b"\x00" * (2 << 20))
    assert "zip bomb" in refused(bomb)


# --- books and documents ------------------------------------------------------------------


def test_epub_chapters_are_pages_in_reading_order(tmp_path: Path) -> None:
    document = load_document(make_epub(tmp_path / "book.epub", ["Victor went to Geneva.", "The creature fled."]))
    assert document.title == "The Harbor" and [p.number for p in document.pages] == [1, 2]
    assert document.pages[1].text == "Chapter 2\nThe creature fled."
    assert "color" not in document.text
    meta = dict(document.metadata)
    assert meta["author"] == "Mary Shelley" and meta["created"] == "1818-01-01"


def test_odt_and_rtf_text_tables_and_metadata(tmp_path: Path) -> None:
    odt = load_document(make_odt(tmp_path / "notes.odt", ["Franklin measured the  spacing."]))
    assert odt.text == "Lab notes\nFranklin measured the spacing.\nSample: B-51; Site: King's College."
    assert dict(odt.metadata) == {"title": "Photo 51", "author": "Rosalind Franklin",
                                  "created": "1952-05-06T10:00:00"}
    rtf = load_document(make_rtf(tmp_path / "engine.rtf", "Ada wrote notes.\nThe engine computes."))
    assert rtf.text == "Ada wrote notes.\nThe engine computes." and rtf.title == "Notes on the engine"
    assert dict(rtf.metadata)["created"] == "1843-09-01T09:30:00"


def test_bad_books(tmp_path: Path, monkeypatch) -> None:
    drm = make_epub(tmp_path / "drm.epub", ["Locked chapter."])
    with zipfile.ZipFile(drm, "a") as archive:
        archive.writestr("META-INF/encryption.xml", "<encryption><EncryptedData/></encryption>")
    assert "protected by DRM" in refused(drm)
    no_container = tmp_path / "bare.epub"
    with zipfile.ZipFile(no_container, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip")
    assert "not a valid EPUB" in refused(no_container)
    assert "password-protected" in refused(make_odt(tmp_path / "locked.odt", ["x"], encrypted=True))
    not_rtf = tmp_path / "plain.rtf"
    not_rtf.write_text("plain words", encoding="utf-8")
    assert "not a valid RTF" in refused(not_rtf)
    for suffix in (".epub", ".odt", ".rtf"):
        assert "is empty" in refused(_empty(tmp_path / f"empty{suffix}"))
    monkeypatch.setattr(books, "MAX_RTF_BYTES", 10)
    assert "larger than" in refused(make_rtf(tmp_path / "big.rtf", "Long text."))


def test_docx_tables_read_as_header_labelled_rows(tmp_path: Path) -> None:
    path = make_docx(tmp_path / "t.docx", table=(("Vessel", "Port"), ("Aurora", "Lisbon"), ("Nautilus", "")))
    assert "Vessel: Aurora; Port: Lisbon.\nVessel: Nautilus." in load_document(path).text
    assert dict(load_document(path).metadata)["author"]  # Word's core properties are kept


def _empty(path: Path) -> Path:
    path.write_bytes(b"")
    return path
