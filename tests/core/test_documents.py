"""Loaders for every supported type, bad files, and discover()."""

from __future__ import annotations

import hashlib
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docatlas.core.base.errors import DocumentError
from docatlas.core.ingest.loaders import (
    SUPPORTED_SUFFIXES,
    Document,
    Page,
    discover,
    file_hash,
    load_document,
)
from fixtures.make_docs import make_docx, make_pdf
from unprivileged import run_unprivileged

ACCENTED = "café naïve Zürich"


def expect_error(path: Path, *words: str) -> str:
    """Load path, expect a DocumentError naming the file in one sentence; return the message."""
    with pytest.raises(DocumentError) as info:
        load_document(path)
    message = str(info.value)
    assert path.name in message
    assert message.endswith(".") and message.count(". ") == 0
    for word in words:
        assert word in message
    return message


# --- plain text and markdown ------------------------------------------------------------


@pytest.mark.parametrize("encoding, prefix", [
    ("utf-8", b""),
    ("utf-8", b"\xef\xbb\xbf"),
    ("utf-16-le", b"\xff\xfe"),
    ("utf-16-be", b"\xfe\xff"),
    ("utf-16-le", b""),
    ("utf-16-be", b""),
    ("latin-1", b""),
    ("cp1252", b""),
])
def test_txt_encodings(tmp_path: Path, encoding: str, prefix: str) -> None:
    body = f"{ACCENTED}\r\nsecond line\rthird line\n"
    path = tmp_path / "notes.txt"
    path.write_bytes(prefix + body.encode(encoding))
    document = load_document(path)
    assert document.text == f"{ACCENTED}\nsecond line\nthird line\n"
    assert document.kind == "txt" and document.title == "notes"
    assert document.pages == (Page(None, document.text),)


def test_cp1252_specials_and_hash(tmp_path: Path) -> None:
    text = "Crème brûlée costs 5 € — “quoted”, naïve Zürich café."
    path = tmp_path / "menu.txt"
    path.write_bytes(text.encode("cp1252"))
    document = load_document(path)
    assert document.text == text
    assert document.content_hash == hashlib.sha256(path.read_bytes()).hexdigest()
    assert file_hash(path) == document.content_hash


def test_markdown_title_from_first_heading(tmp_path: Path) -> None:
    path = tmp_path / "readme.md"
    path.write_text("```\n# not a title\n```\nIntro\n\n## Sub\n# The Real Title #\nBody\n",
                    encoding="utf-8")
    document = load_document(path)
    assert document.kind == "md" and document.title == "The Real Title"
    assert "Body" in document.text


def test_markdown_without_heading_uses_stem(tmp_path: Path) -> None:
    path = tmp_path / "plain.markdown"
    path.write_text("just text\n", encoding="utf-8")
    document = load_document(path)
    assert (document.kind, document.title) == ("md", "plain")


def test_document_is_frozen(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("x", encoding="utf-8")
    document = load_document(path)
    assert isinstance(document, Document)
    with pytest.raises(AttributeError):
        document.title = "changed"  # type: ignore[misc]


# --- HTML -------------------------------------------------------------------------------

HTML = """<!DOCTYPE html>
<html><head><meta charset="{charset}"><title>Caf&eacute; &amp; Co</title>
<style>body {{ color: red }}</style><script>var hidden = "nope";</script></head>
<body><h1>Welcome</h1><p>Fish &amp; chips,   {accented}.</p>
<div>One<br>Two</div><ul><li>first</li><li>second</li></ul>
<table><tr><th>Name</th><th>Role</th></tr><tr><td>Ada</td><td>Engineer</td></tr></table>
<script>alert("hidden too")</script><p>&lt;done&gt;&nbsp;now</p></body></html>"""


@pytest.mark.parametrize("charset", ["utf-8", "iso-8859-1", "windows-1252"])
def test_html_text_title_and_charset(tmp_path: Path, charset: str) -> None:
    path = tmp_path / "page.html"
    path.write_bytes(HTML.format(charset=charset, accented=ACCENTED)
                     .encode("utf-8" if charset == "utf-8" else "cp1252"))
    document = load_document(path)
    assert document.kind == "html" and document.title == "Café & Co"
    text = document.text
    for hidden in ("color", "nope", "hidden", "Café & Co"):
        assert hidden not in text
    assert f"Welcome\n\nFish & chips, {ACCENTED}." in text
    assert "One\nTwo" in text and "first\nsecond" in text
    assert "Name | Role\nAda | Engineer" in text
    assert text.endswith("<done> now")
    assert "\n\n\n" not in text


def test_html_without_title_uses_stem(tmp_path: Path) -> None:
    path = tmp_path / "bare.htm"
    path.write_text("<p>Hello <b>there</b></p>", encoding="utf-8")
    document = load_document(path)
    assert (document.title, document.text, document.kind) == ("bare", "Hello there", "html")


def test_html_with_only_script_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "app.html"
    path.write_text("<html><head><title>App</title></head><body><script>x()</script></body>",
                    encoding="utf-8")
    expect_error(path, "empty")


# --- PDF --------------------------------------------------------------------------------


def test_pdf_pages_keep_numbers(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "report.pdf", ["Alpha page.", "", "Gamma (third) page."])
    document = load_document(path)
    assert document.kind == "pdf" and document.title == "report"
    assert [page.number for page in document.pages] == [1, 3]
    assert "Alpha page." in document.pages[0].text
    assert "Gamma (third) page." in document.pages[1].text
    assert document.text == document.pages[0].text + "\n\n" + document.pages[1].text


def test_pdf_title_from_metadata(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "r.pdf", ["Body."], title="Annual Report")
    assert load_document(path).title == "Annual Report"


def test_pdf_encrypted_with_empty_password_opens(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "open.pdf", ["Readable text."], encrypt_password="")
    assert "Readable text." in load_document(path).text


def test_pdf_with_password_is_refused(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "secret.pdf", ["Hidden."], encrypt_password="hunter2")
    expect_error(path, "password-protected", "remove the password")


def test_pdf_without_text_looks_scanned(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "scan.pdf", ["", ""])
    expect_error(path, "scanned", "OCR")


@pytest.mark.parametrize("content", [b"%PDF-1.4\nthis is not a pdf at all", b"\x00\x01garbage"])
def test_corrupt_pdf(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(content)
    expect_error(path, "damaged")


# --- DOCX -------------------------------------------------------------------------------


def test_docx_paragraphs_headings_and_table(tmp_path: Path) -> None:
    path = make_docx(tmp_path / "memo.docx", title="Memo Title")
    document = load_document(path)
    assert document.kind == "docx" and document.title == "Memo Title"
    assert document.text == ("Overview\n\nFirst paragraph.\n\nSecond paragraph.\n\n"
                             "Name: Ada; Role: Engineer.\n\nAfter the table.")  # a row reads as a sentence
    assert document.pages[0].number is None


def test_docx_without_title_uses_stem(tmp_path: Path) -> None:
    assert load_document(make_docx(tmp_path / "untitled.docx")).title == "untitled"


def test_corrupt_docx(tmp_path: Path) -> None:
    path = tmp_path / "broken.docx"
    path.write_bytes(b"PK but not really a zip file")
    expect_error(path, "damaged")


def test_empty_docx(tmp_path: Path) -> None:
    path = make_docx(tmp_path / "blank.docx", heading="", paragraphs=(), table=(), closing="")
    expect_error(path, "empty")


# --- bad files --------------------------------------------------------------------------


@pytest.mark.parametrize("content", [
    bytes(range(256)) * 20,
    b"\x00\x00\x00\x01\x02\x03\x00\x00" * 100,
    bytes((i * 37) % 32 for i in range(2000)),
    random.Random(7).randbytes(4000),
])
def test_binary_with_txt_suffix(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "data.txt"
    path.write_bytes(content)
    expect_error(path, "does not look like text")


@pytest.mark.parametrize("name, content", [
    ("empty.txt", b""), ("spaces.md", b"  \n\t\n "), ("empty.pdf", b""), ("empty.docx", b""),
    ("empty.html", b""), ("bom.txt", b"\xef\xbb\xbf \n"), ("utf16.txt", "  \n".encode("utf-16")),
])
def test_empty_files(tmp_path: Path, name: str, content: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    expect_error(path, "is empty")


def test_unknown_type(tmp_path: Path) -> None:
    path = tmp_path / "photo.bmp"
    path.write_bytes(b"BM")
    message = expect_error(path, ".bmp")
    assert ".txt" in message and ".pdf" in message and ".docx" in message


def test_missing_file(tmp_path: Path) -> None:
    expect_error(tmp_path / "gone.txt", "could not be found")


def test_unreadable_file(tmp_path: Path) -> None:
    folder = tmp_path
    path = folder / "locked.txt"
    path.write_text("secret", encoding="utf-8")
    path.chmod(0o000)
    message = run_unprivileged(
        "import json, sys\n"
        "from pathlib import Path\n"
        "from docatlas.core.base.errors import DocumentError\n"
        "from docatlas.core.ingest.loaders import load_document\n"
        "try:\n    load_document(Path(sys.argv[1]))\n"
        "except DocumentError as e:\n    print(json.dumps(e.message))\n", str(path))
    assert "locked.txt could not be read (Permission denied)" in message
    assert message.endswith(".") and message.count(". ") == 0


# --- discover ---------------------------------------------------------------------------


def test_discover(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / ".hidden").mkdir()
    for name in ("b.txt", "a.MD", "image.bmp", ".secret.txt", "sub/c.pdf", "sub/d.docx",
                 ".hidden/e.txt", "sub/page.htm"):
        (folder / name).write_text("x", encoding="utf-8")
    loose = tmp_path / "loose.html"
    loose.write_text("x", encoding="utf-8")
    bad = tmp_path / "deck.key"
    bad.write_text("x", encoding="utf-8")
    missing = tmp_path / "nowhere.txt"

    files, skipped = discover([folder, loose, bad, missing, folder / "b.txt"])

    assert files == [folder / "a.MD", folder / "b.txt", folder / "sub" / "c.pdf",
                     folder / "sub" / "d.docx", folder / "sub" / "page.htm", loose]
    assert [path for path, _ in skipped] == [bad, missing]
    for path, reason in skipped:
        assert path.name in reason and reason.endswith(".")
    assert ".key" in skipped[0][1]


def test_supported_suffixes() -> None:
    assert SUPPORTED_SUFFIXES >= {".txt", ".md", ".markdown", ".html", ".htm", ".pdf", ".docx",
                                  ".eml", ".mbox", ".msg", ".pptx", ".xlsx", ".csv", ".epub", ".odt", ".rtf",
                                  ".png", ".jpg", ".jpeg", ".tif", ".tiff"}
