"""Tables inside PDFs read as header-labelled rows ("Name: Acme Ltd; City: Porto; Revenue: 12."),
the way .docx and .xlsx rows read, from PDFs the tests write: a ruled table, one aligned by its
text alone, a table that runs on to page 2 (with and without its header repeated), and pages
that only look like columns (prose in two columns, a form) which keep their text as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from docatlas.core.ingest.chunking import chunk_document
from docatlas.core.ingest.loaders import load_document, load_steps
from docatlas.core.storage.database import Store
from fixtures.make_docs import make_pdf
from fixtures.make_pdf_tables import make_continued_pdf, make_plain_pdf, make_table_pdf
from fixtures.make_scans import make_scan_pdf
from fixtures.scripted_model import lightrag_responder
from helpers import docatlas

ROWS = ("Name: Acme Ltd; City: Porto; Revenue: 12.\n"
        "Name: Globex; City: Lisbon; Revenue: 40.\n"
        "Name: Initech; City: Braga; Revenue: 7.")


@pytest.mark.parametrize("ruled", [True, False], ids=["ruled", "aligned"])
def test_a_table_reads_as_labelled_rows_in_its_place(tmp_path: Path, ruled: bool, monkeypatch) -> None:
    if ruled:  # the borders alone find it: the finder of text-aligned tables is turned off
        from docatlas.core.ingest import pdf_layer

        monkeypatch.setattr(pdf_layer, "aligned_tables", lambda *args: [])
    document = load_document(make_table_pdf(tmp_path / "report.pdf", ruled=ruled))
    (page,) = document.pages
    assert page.number == 1
    assert page.text == ("Quarterly report of the northern region.\nThe table below lists the suppliers.\n\n"
                         f"{ROWS}\n\nAfter the table, the report goes on.\nAcme Ltd was the largest supplier.")
    (chunk,) = chunk_document(document, 200, 20)  # what the model is sent
    assert ROWS in chunk.text and "Name\nCity" not in chunk.text and chunk.page_start == 1


def test_a_ruled_table_of_one_row(tmp_path: Path) -> None:
    rows = [["Vessel", "Note", "Port"], ["Aurora", "Late in May", "Lisbon"]]
    (page,) = load_document(make_table_pdf(tmp_path / "one.pdf", ruled=True, rows=rows)).pages
    assert "\n\nVessel: Aurora; Note: Late in May; Port: Lisbon.\n\n" in page.text


@pytest.mark.parametrize("ruled", [True, False], ids=["ruled", "aligned"])
@pytest.mark.parametrize("repeat_header", [False, True], ids=["header-once", "header-repeated"])
def test_a_table_continued_on_the_next_page_keeps_its_header(tmp_path: Path, ruled: bool,
                                                            repeat_header: bool) -> None:
    path = make_continued_pdf(tmp_path / "suppliers.pdf", ruled=ruled, repeat_header=repeat_header)
    first, second = load_document(path).pages
    assert (first.number, second.number) == (1, 2)
    assert "Name: Acme Ltd; City: Porto; Revenue: 12.\nName: Globex; City: Lisbon; Revenue: 40." in first.text
    assert second.text == ("Name: Umbrella; City: Faro; Revenue: 3.\nName: Initech; City: Braga; Revenue: 7.\n\n"
                           "That was every supplier.")


def test_pages_without_a_table_keep_the_text_layer_as_it_was(tmp_path: Path) -> None:
    from pypdf import PdfReader

    path = make_plain_pdf(tmp_path / "columns.pdf")
    pages = load_document(path).pages
    assert [page.text for page in pages] == [page.extract_text().strip() for page in PdfReader(path).pages]
    assert pages[1].text == "Invoice: 2026-114\nCustomer: Harbor Analytics\nDue: 30 April 2026"
    assert pages[2].text.startswith("Introduction")
    plain = make_pdf(tmp_path / "plain.pdf", ["Ada met Charles in Lisbon.", "Mary wrote from Paris."])
    assert [p.text for p in load_document(plain).pages] == ["Ada met Charles in Lisbon.", "Mary wrote from Paris."]


def test_a_scanned_page_beside_a_table_page_is_still_ocrd(tmp_path: Path) -> None:
    from pypdf import PdfReader, PdfWriter

    table = make_table_pdf(tmp_path / "table.pdf", ruled=True)
    scan = make_scan_pdf(tmp_path / "scan.pdf", [["Harbor Analytics opened in Porto."]])
    writer = PdfWriter()
    for source in (table, scan):
        writer.append(PdfReader(source))
    both = tmp_path / "both.pdf"
    with open(both, "wb") as out:
        writer.write(out)
    steps = load_steps(both)
    seen = []
    try:
        while True:
            seen.append(next(steps))
    except StopIteration as done:
        document = done.value
    assert seen == [(1, 2), (2, 2)]  # progress page by page, as before
    first, second = document.pages
    assert ROWS in first.text and first.confidence is None
    assert "Harbor Analytics opened in Porto" in second.text and second.confidence is not None


def test_a_page_the_table_finder_cannot_read_keeps_its_text(tmp_path: Path, monkeypatch) -> None:
    from docatlas.core.ingest import pdf_layer

    def broken(*args, **kwargs):
        raise ValueError("a page pdfium reads oddly")

    monkeypatch.setattr(pdf_layer, "aligned_tables", broken)
    (page,) = load_document(make_table_pdf(tmp_path / "report.pdf", ruled=False)).pages
    assert "Quarterly report of the northern region." in page.text and "Acme Ltd" in page.text


def test_a_table_of_other_columns_opening_the_next_page_has_its_own_header(tmp_path: Path) -> None:
    from fixtures.make_pdf_tables import SUPPLIERS, draw_table
    from reportlab.pdfgen.canvas import Canvas

    path = tmp_path / "two.pdf"
    canvas = Canvas(str(path), pagesize=(612, 792))
    draw_table(canvas, 72, 160, SUPPLIERS, ruled=False)
    canvas.showPage()
    draw_table(canvas, 72, 760, [["Vessel", "Port"], ["Aurora", "Lisbon"], ["Nautilus", "Faro"]], ruled=False)
    canvas.showPage()
    canvas.save()
    first, second = load_document(path).pages
    assert first.text == ROWS
    assert second.text == "Vessel: Aurora; Port: Lisbon.\nVessel: Nautilus; Port: Faro."


def test_table_rows_reach_the_chunks_through_ingest(fake_ollama, monkeypatch, capsys, tmp_path: Path) -> None:
    fake_ollama.responder = lightrag_responder
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    docs = tmp_path / "docs"
    docs.mkdir()
    make_table_pdf(docs / "report.pdf", ruled=True)
    ws = tmp_path / "ws"
    code, _, err = docatlas(capsys, "--data-dir", str(ws), "ingest", str(docs))
    assert code == 0, err
    with Store(ws / "docatlas.sqlite") as store:
        chunks = store.query("SELECT text, page_start FROM chunks")
    assert [row["page_start"] for row in chunks] == [1]
    assert ROWS in chunks[0]["text"]


def test_a_pdf_encrypted_without_a_user_password_keeps_its_table(tmp_path: Path) -> None:
    from fixtures.make_pdf_tables import SUPPLIERS, draw_table
    from reportlab.lib.pdfencrypt import StandardEncryption
    from reportlab.pdfgen.canvas import Canvas

    path = tmp_path / "locked-for-editing.pdf"
    canvas = Canvas(str(path), pagesize=(612, 792), encrypt=StandardEncryption("", ownerPassword="owner"))
    draw_table(canvas, 72, 700, SUPPLIERS, ruled=True)
    canvas.showPage()
    canvas.save()
    assert load_document(path).text == ROWS
