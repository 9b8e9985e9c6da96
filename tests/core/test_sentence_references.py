"""References point at a sentence: the quote is a sentence of its chunk, its span and page
are where that sentence sits in the document, through `ask` and `query --json`."""

from __future__ import annotations

import json
from pathlib import Path

from docatlas.core.base.keys import entity_key
from docatlas.core.base.records import EntityRecord
from docatlas.core.base.sentences import answer_sentences, sentence_spans
from docatlas.core.graph.merge import rebuild
from docatlas.core.ingest.chunking import chunk_document, page_starts
from docatlas.core.ingest.loaders import Document, Page
from docatlas.core.retrieval.answer import ask
from docatlas.core.storage.database import NewChunk
from docatlas.core.storage.read_models import document_text
from test_retrieval_helpers import Script, client, open_store, settings_for

FILLER = " ".join(f"The harbour log notes tide {i} as calm." for i in range(40))
PAGES = (Page(1, FILLER + " Maria Lopez founded Harbor Analytics in Lisbon in 2015. " + FILLER),
         Page(2, "Harbor Analytics sells tide sensors to ports. " + FILLER))
ANSWER = ("Maria Lopez founded Harbor Analytics in 2015 [C1, C2]. The weather was lovely. "
          "It sells tide sensors to ports. [C1, C2]")
QUESTION = "What did Maria Lopez found, and what does Harbor Analytics sell?"


def _workspace(tmp_path: Path):
    store = open_store(tmp_path)
    document = Document(Path("/docs/harbor.pdf"), "harbor", "pdf", "h", PAGES)
    chunks = chunk_document(document, 120, 20)
    doc_id, _ = store.put_document(
        path="/docs/harbor.pdf", title="harbor", kind="pdf", content_hash="h", size=1,
        chunks=[NewChunk(c.text, c.tokens, c.page_start, c.page_end, c.start, c.end, c.lead) for c in chunks],
        pages=page_starts(document))
    rows = store.query("SELECT id, text FROM chunks ORDER BY idx")
    for row in rows:
        names = [n for n in ("Maria Lopez", "Harbor Analytics") if n in row["text"]]
        records = [EntityRecord(n, "organization", f"{n} is named.") for n in names]
        store.finish_chunk(row["id"], records, [], status="done", profile="lightrag", model="test",
                           calls=1, keys=[entity_key(n) for n in names], relation_keys=[])
    rebuild(store)
    return store, document, doc_id


def test_each_reference_quotes_the_best_sentence_of_its_chunk(fake_ollama, tmp_path):
    fake_ollama.responder = Script(answer=ANSWER)
    store, document, doc_id = _workspace(tmp_path)
    with store:
        answer = ask(store, client(fake_ollama, store), QUESTION,
                     settings_for(fake_ollama), mode="naive")
        assert answer.references
        for ref in answer.references:
            spans = [ref.text[s:e] for s, e in sentence_spans(ref.text)]
            assert ref.quote in spans  # a sentence of its chunk, whole
            assert document.text[ref.start:ref.end] == ref.quote
            assert document_text(store, doc_id, ref.start, ref.end) == ref.quote
        founded = next(r for r in answer.references if "Maria Lopez founded" in r.text)
        assert (founded.quote, founded.page) == ("Maria Lopez founded Harbor Analytics in Lisbon in 2015.", 1)
        sells = next(r for r in answer.references if "sells tide sensors" in r.text)
        assert sells.quote == "Harbor Analytics sells tide sensors to ports."
        assert (sells.page_chunk, sells.page) == (1, 2)  # the sentence's page, not the chunk's first
        data = answer.to_json()["references"][0]
        assert {"document", "page", "chunk", "start", "end", "quote"} <= set(data)
        json.dumps(data)


def test_a_citation_after_the_full_stop_belongs_to_its_sentence():
    spans = answer_sentences(ANSWER)
    sentences = [ANSWER[s:e] for s, e in spans]
    assert sentences == ["Maria Lopez founded Harbor Analytics in 2015 [C1, C2].", "The weather was lovely.",
                         "It sells tide sensors to ports. [C1, C2]"]
