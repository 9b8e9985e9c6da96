"""OCR of scanned pages and images, with the real engine on pages the test renders."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from docatlas.core.base.errors import Cancelled, DocumentError
from docatlas.core.ingest import ocr, scans
from docatlas.core.ingest.loaders import discover, load_document, load_steps
from docatlas.core.ingest.ocr import assemble
from fixtures.make_docs import make_pdf
from fixtures.make_scans import make_mixed_pdf, make_scan_pdf, render_page

TESTS = Path(__file__).resolve().parents[1]

LINES = ["Meridian Shipping signed the contract", "Anna Kovacs approved the payment"]


def squeezed(text: str) -> str:
    """Letters and digits only, lower case: OCR may drop a space between words."""
    return "".join(ch for ch in text.lower() if ch.isalnum())


def test_png_is_read_by_ocr_with_a_confidence(tmp_path: Path) -> None:
    path = tmp_path / "memo.png"
    render_page(LINES).save(path)
    document = load_document(path)
    assert document.kind == "image" and document.title == "memo"
    (page,) = document.pages
    assert squeezed(LINES[0]) in squeezed(page.text) and squeezed(LINES[1]) in squeezed(page.text)
    assert page.text.index("Meridian") < page.text.index("Anna")  # reading order
    assert 0.8 < page.confidence <= 1.0


@pytest.mark.parametrize("word", ["one", "Total", "12 March"])
def test_a_lone_short_word_on_a_blank_page_is_read(word: str) -> None:
    """PP-OCRv6's detector misses a short word on a page of white paper unless the page is cut to its ink."""
    read = ocr.recognize(render_page([word]))
    assert squeezed(read.text) == squeezed(word) and read.confidence > 0.8


def test_multipage_tiff_is_one_page_a_frame(tmp_path: Path) -> None:
    path = tmp_path / "fax.tif"
    first, second = render_page(["First page about Meridian"]), render_page(["Second page about Kovacs"])
    first.save(path, save_all=True, append_images=[second], compression="tiff_lzw")
    document = load_document(path)
    assert [p.number for p in document.pages] == [1, 2]
    assert "meridian" in squeezed(document.pages[0].text) and "kovacs" in squeezed(document.pages[1].text)


def test_scanned_pdf_pages_are_ocrd_with_progress(tmp_path: Path) -> None:
    path = make_scan_pdf(tmp_path / "scan.pdf", [[LINES[0]], [LINES[1]]])
    steps = load_steps(path)
    seen = []
    while True:
        try:
            seen.append(next(steps))
        except StopIteration as done:
            document = done.value
            break
    assert seen == [(1, 2), (2, 2)]
    assert [p.number for p in document.pages] == [1, 2]
    assert squeezed(LINES[1]) in squeezed(document.pages[1].text)
    assert all(p.confidence and p.confidence > 0.8 for p in document.pages)


def test_text_pdf_is_not_ocrd(tmp_path: Path) -> None:
    document = load_document(make_pdf(tmp_path / "typed.pdf", ["Typed text only."]))
    assert document.pages[0].confidence is None and document.pages[0].text == "Typed text only."


def test_part_text_part_scan_page_keeps_both_once(tmp_path: Path) -> None:
    path = make_mixed_pdf(tmp_path / "mixed.pdf", "Typed heading about the harbour",
                          ["Scanned line about Meridian Shipping"])
    (page,) = load_document(path).pages
    assert page.text.startswith("Typed heading about the harbour")
    assert "meridianshipping" in squeezed(page.text)
    assert squeezed(page.text).count("typedheading") == 1  # the rendered text layer is not added twice
    assert page.confidence is not None


def test_cancel_stops_between_pages(tmp_path: Path) -> None:
    path = make_scan_pdf(tmp_path / "long.pdf", [["one"], ["two"], ["three"]])
    cancel = threading.Event()
    steps = load_steps(path, cancel)
    assert next(steps) == (1, 3)
    cancel.set()
    with pytest.raises(Cancelled):
        next(steps)


def test_blank_scan_says_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "blank.png"
    render_page([]).save(path)
    with pytest.raises(DocumentError, match="no text that OCR could read"):
        load_document(path)


@pytest.mark.parametrize("content", [b"\x89PNG\r\n\x1a\nnot really", b"garbage bytes"])
def test_damaged_image(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "broken.png"
    path.write_bytes(content)
    with pytest.raises(DocumentError, match="not a valid image or is damaged"):
        load_document(path)


def test_truncated_jpeg(tmp_path: Path) -> None:
    path = tmp_path / "cut.jpg"
    render_page(LINES).save(path, quality=90)
    path.write_bytes(path.read_bytes()[:2000])
    with pytest.raises(DocumentError, match="damaged"):
        load_document(path)


def test_huge_image_is_refused_before_decoding(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(scans, "MAX_IMAGE_PIXELS", 1000)  # the limit, not the engine, is what is tested
    path = tmp_path / "poster.png"
    render_page(["big"], size=(200, 200)).save(path)
    with pytest.raises(DocumentError, match="megapixels"):
        load_document(path)


def test_images_are_discovered(tmp_path: Path) -> None:
    for name in ("a.png", "b.JPG", "c.jpeg", "d.tif", "e.tiff", "f.bmp"):
        (tmp_path / name).write_bytes(b"x")
    found, skipped = discover([tmp_path])
    assert sorted(p.name for p in found) == ["a.png", "b.JPG", "c.jpeg", "d.tif", "e.tiff"]
    assert not skipped


def test_assemble_orders_lines_and_weights_confidence() -> None:
    box = lambda x, y: [[x, y], [x + 50, y], [x + 50, y + 20], [x, y + 20]]  # noqa: E731
    read = assemble([[box(200, 10), "world", 0.5], [box(10, 12), "hello", 1.0], [box(10, 60), "next", 1.0]])
    assert read.text == "hello world\nnext"
    assert read.confidence == pytest.approx((5 * 0.5 + 5 + 4) / 14, abs=1e-4)


FIRST_USE = """
import sys

def guard(event, args):
    if event.startswith(("socket.", "urllib.", "http.", "ftplib.")):
        raise ConnectionRefusedError(f"OCR tried the network: {event} {args[:2]}")

sys.addaudithook(guard)
from docatlas.core.ingest import ocr
from fixtures.make_scans import render_page

print(ocr.recognize(render_page(LINES)).text)
"""


def _first_use(tmp_path: Path, script: str) -> subprocess.CompletedProcess:
    """Run `script` in a new Python (the engine loads there for the first time), in an empty home."""
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"),
           "PYTHONPATH": os.pathsep.join([str(TESTS.parent / "desktop"), str(TESTS)])}
    env.pop("QT_QPA_PLATFORM_PLUGIN_PATH", None)
    env.pop("QT_QPA_FONTDIR", None)
    return subprocess.run([sys.executable, "-c", f"LINES = {LINES!r}\n{script}"], capture_output=True, text=True,
                          timeout=120, env=env, check=False)


def test_first_use_reads_the_packaged_models_with_the_network_blocked(tmp_path: Path) -> None:
    """An audit hook refuses every socket and URL: the models load from DocAtlas's resources,
    nothing is downloaded, nothing written to the home folder, and nothing printed."""
    from docatlas.core.base.resources import resource_dir

    models = resource_dir("ocr")
    before = sorted(p.name for p in models.iterdir())
    out = _first_use(tmp_path, FIRST_USE)
    assert out.returncode == 0, out.stderr
    assert squeezed(out.stdout) == squeezed(" ".join(LINES))
    assert out.stderr == ""  # ONNX Runtime wrote nothing to the terminal
    assert not any((tmp_path / "home").iterdir())  # no telemetry under ~/.cache/Microsoft either
    assert sorted(p.name for p in models.iterdir()) == before
    assert {path.parent for path in ocr.model_paths().values()} == {models}
    assert all(path.is_file() for path in ocr.model_paths().values())


def test_the_guard_in_that_test_refuses_a_connection(tmp_path: Path) -> None:
    """The audit hook above really stops a connection (else the test could not fail)."""
    script = FIRST_USE.split("from docatlas")[0] + "import socket\nsocket.socket().connect(('127.0.0.1', 9))\n"
    out = _first_use(tmp_path, script)
    assert out.returncode != 0 and "ConnectionRefusedError: OCR tried the network: socket." in out.stderr


def test_no_line_of_a_page_is_logged(caplog) -> None:
    """Every logger at DEBUG while a page is read: no record holds a word of the page."""
    import logging

    with caplog.at_level(logging.DEBUG):
        logging.getLogger().setLevel(logging.DEBUG)
        read = ocr.recognize(render_page(LINES))
    assert "meridian" in squeezed(read.text)
    logged = squeezed(" ".join(record.getMessage() for record in caplog.records))
    assert not [word for word in ("meridian", "shipping", "kovacs", "payment") if word in logged]


NO_OPENCV = """
import sys
from docatlas.core.ingest import loaders, ocr
from fixtures.make_scans import render_page

print(ocr.recognize(render_page(LINES)).text.replace("\\n", " "))
print(" ".join(sorted(name for name in sys.modules if name.split(".")[0] in NEVER)) or "none")
"""


def test_ocr_never_imports_opencv_or_rapidocr(tmp_path: Path) -> None:
    """OCR runs its two models itself: reading a page in a new Python loads no cv2, rapidocr,
    shapely or pyclipper (the bundle leaves them out, packaging/bundle.py NEVER_BUNDLED)."""
    never = ("cv2", "rapidocr", "shapely", "pyclipper")
    out = _first_use(tmp_path, f"NEVER = {never!r}\n{NO_OPENCV}")
    assert out.returncode == 0, out.stderr
    text, imported = out.stdout.strip().splitlines()
    assert squeezed(text) == squeezed(" ".join(LINES))
    assert imported == "none"


def test_a_damaged_model_says_what_to_do(tmp_path: Path, monkeypatch) -> None:
    """A model file that is not an ONNX model: one sentence, reinstall."""
    (tmp_path / "ocr").mkdir()
    for name in ocr.MODELS.values():
        (tmp_path / "ocr" / name).write_bytes(b"not a model")
    monkeypatch.setattr(ocr, "resource_dir", lambda name: tmp_path / name)
    monkeypatch.setattr(ocr, "_models", None)
    with pytest.raises(DocumentError, match="could not be read; reinstall DocAtlas"):
        ocr.recognize(render_page(LINES))
