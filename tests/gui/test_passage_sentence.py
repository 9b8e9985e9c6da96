"""The passage viewer opens a real PDF's text at the cited sentence: exactly that sentence is
highlighted (read back through the widget's text cursor), the names are marked in another
colour and stepped through with the buttons, and "Open at Page N" asks for that page."""

from __future__ import annotations

from docatlas.core.ingest.chunking import chunk_document, page_starts
from docatlas.core.ingest.loaders import load_document
from docatlas.core.storage.database import NewChunk, Store
from docatlas.core.storage.read_models import passage
from docatlas.gui.dialogs.interaction import Interaction
from docatlas.gui.views.passage_viewer import HIGHLIGHT, MENTION, PassageViewer
from fixtures.make_docs import make_pdf
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

FILLER = " ".join(f"The harbour log notes tide {i} as calm." for i in range(30))
QUOTE = "Maria Lopez founded Harbor Analytics in Lisbon in 2015."


def test_the_viewer_highlights_exactly_the_cited_sentence(qtbot, tmp_path):
    path = make_pdf(tmp_path / "harbor.pdf", [FILLER, FILLER + " " + QUOTE + " Maria Lopez left in 2020. " + FILLER])
    document = load_document(path)
    start = document.text.index(QUOTE)
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        chunks = chunk_document(document, 150, 20)
        store.put_document(path=str(path), title="harbor", kind="pdf", content_hash="h", size=1,
                           chunks=[NewChunk(c.text, c.tokens, c.page_start, c.page_end, c.start, c.end, c.lead)
                                   for c in chunks], pages=page_starts(document))
        target = next(c for c in chunks if c.start <= start < c.end)
        (row,) = store.query("SELECT id FROM chunks WHERE idx = ?", (target.index,))
        found = passage(store, row["id"])
    host = QWidget()
    qtbot.addWidget(host)
    opened = []
    interaction = Interaction(host)
    interaction.open_url = lambda url: opened.append(url) or True
    viewer = PassageViewer(interaction, host)
    qtbot.addWidget(viewer)
    reference = {"chunk": row["id"], "start": start, "end": start + len(QUOTE), "quote": QUOTE, "page": 2,
                 "names": ["Maria Lopez"]}
    viewer.show_passage(found, reference)
    viewer.show()

    marks = {s.format.background().color().name(): [] for s in viewer.text_view.extraSelections()}
    for selection in viewer.text_view.extraSelections():
        marks[selection.format.background().color().name()].append(selection.cursor.selectedText())
    assert marks[HIGHLIGHT.name()] == [QUOTE]  # the sentence, whole and alone
    assert marks[MENTION.name()] == ["Maria Lopez", "Maria Lopez"]
    shown = viewer.text_view.toPlainText()
    assert FILLER[:40] in shown and len(shown) > len(target.text)  # its surroundings are shown too
    assert "p. 2" in viewer.where_label.text()

    qtbot.mouseClick(viewer.next_button, Qt.MouseButton.LeftButton)
    assert viewer.text_view.textCursor().selectedText() == "Maria Lopez"
    first = viewer.text_view.textCursor().selectionStart()
    qtbot.mouseClick(viewer.next_button, Qt.MouseButton.LeftButton)
    assert viewer.text_view.textCursor().selectionStart() > first
    qtbot.mouseClick(viewer.previous_button, Qt.MouseButton.LeftButton)
    assert viewer.text_view.textCursor().selectionStart() == first

    assert viewer.open_button.text() == "Open at Page 2"
    qtbot.mouseClick(viewer.open_button, Qt.MouseButton.LeftButton)
    assert opened and opened[0].fragment() == "page=2" and opened[0].toLocalFile() == str(path)
