"""Builders shared by the retrieval tests: a small known graph written straight into a Store,
a scripted model that answers each retrieval prompt, and clients for the fake server.

(A test module itself, so that pytest finds it next to the tests that import it; its own
tests check that the builders give the graph the other tests rely on.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from docatlas.core.base.keys import entity_key
from docatlas.core.base.records import EntityRecord, RelationRecord
from docatlas.core.base.settings import Settings
from docatlas.core.base.tokens import count_tokens
from docatlas.core.graph.merge import rebuild
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.storage.database import NewChunk, Store

# document name -> list of (text, page_start, page_end, entities, relations)
# entities: (name, type, description); relations: (source, target, keywords, description)
CORPUS: dict[str, list[tuple]] = {
    "harbor.txt": [
        ("Maria Lopez founded Harbor Analytics in Lisbon in 2015.", None, None,
         [("Maria Lopez", "person", "Founder of Harbor Analytics."),
          ("Harbor Analytics", "organization", "A sensor analytics company based in Lisbon."),
          ("Lisbon", "location", "Capital of Portugal, home of Harbor Analytics.")],
         [("Maria Lopez", "Harbor Analytics", "founder, leadership", "Maria Lopez founded Harbor Analytics."),
          ("Harbor Analytics", "Lisbon", "headquarters", "Harbor Analytics is based in Lisbon.")]),
        ("Jonas Weber joined Harbor Analytics as chief engineer and built the tide sensor platform.",
         None, None,
         [("Jonas Weber", "person", "Chief engineer at Harbor Analytics."),
          ("Harbor Analytics", "organization", "Employs Jonas Weber as chief engineer."),
          ("Tide Sensor Platform", "technology", "Sensor platform built by Jonas Weber.")],
         [("Jonas Weber", "Harbor Analytics", "employment", "Jonas Weber is chief engineer of Harbor Analytics."),
          ("Jonas Weber", "Tide Sensor Platform", "engineering", "Jonas Weber built the tide sensor platform.")]),
    ],
    "northwind.pdf": [
        ("Priya Nair leads Northwind Labs, a robotics company in Oslo.", 1, 1,
         [("Priya Nair", "person", "Head of Northwind Labs."),
          ("Northwind Labs", "organization", "A robotics company in Oslo."),
          ("Oslo", "location", "City in Norway where Northwind Labs works.")],
         [("Priya Nair", "Northwind Labs", "leadership", "Priya Nair leads Northwind Labs."),
          ("Northwind Labs", "Oslo", "location", "Northwind Labs is in Oslo.")]),
        ("Northwind Labs bought tide sensors from Harbor Analytics for its underwater robots.", 2, 3,
         [("Northwind Labs", "organization", "Buys tide sensors for underwater robots."),
          ("Harbor Analytics", "organization", "Sells tide sensors to Northwind Labs.")],
         [("Northwind Labs", "Harbor Analytics", "supply contract, purchase",
           "Northwind Labs buys tide sensors from Harbor Analytics.")]),
    ],
    "garden.txt": [
        ("The community garden grows tomatoes and basil every summer.", None, None,
         [("Community Garden", "location", "A shared garden that grows vegetables."),
          ("Tomatoes", "concept", "Vegetables grown in the community garden."),
          ("Basil", "concept", "A herb grown in the community garden.")],
         [("Community Garden", "Tomatoes", "cultivation", "The community garden grows tomatoes."),
          ("Community Garden", "Basil", "cultivation", "The community garden grows basil.")]),
    ],
}


def add_document(store: Store, name: str, chunks: list[tuple], folder: str = "/docs") -> tuple[int, set[str]]:
    """Write one document with its chunks and per-chunk records; return its id and touched keys."""
    kind = name.rsplit(".", 1)[-1]
    doc_id, touched = store.put_document(
        path=f"{folder}/{name}", title=name.rsplit(".", 1)[0], kind=kind, content_hash=name, size=1,
        chunks=[NewChunk(text, count_tokens(text), p0, p1) for text, p0, p1, _, _ in chunks],
    )
    ids = [r["id"] for r in store.query("SELECT id FROM chunks WHERE document_id = ? ORDER BY idx", (doc_id,))]
    for chunk_id, (_, _, _, entities, relations) in zip(ids, chunks):
        records = [EntityRecord(n, t, d) for n, t, d in entities]
        rels = [RelationRecord(s, t, k, d, 1.0) for s, t, k, d in relations]
        store.finish_chunk(
            chunk_id, records, rels, status="done", profile="lightrag", model="test", calls=1,
            keys=[entity_key(e.name) for e in records],
            relation_keys=[(entity_key(r.source), entity_key(r.target)) for r in rels],
        )
        touched |= {entity_key(e.name) for e in records}
        touched |= {entity_key(x) for r in rels for x in (r.source, r.target)}
    store.refresh_document_status(doc_id)
    return doc_id, touched


def build_graph(store: Store, corpus: dict[str, list[tuple]] | None = None) -> Store:
    """Write the corpus and merge its graph."""
    for name, chunks in (corpus or CORPUS).items():
        add_document(store, name, chunks)
    rebuild(store)
    return store


def open_store(tmp_path: Path) -> Store:
    """A fresh workspace database."""
    return Store(tmp_path / "ws" / "docatlas.sqlite")


def settings_for(server, **overrides: object) -> Settings:
    """Settings reaching the fake server, giving up fast."""
    base = Settings().with_overrides(
        ollama__host=server.host, ollama__timeout_s=10.0, ollama__retries=1, ollama__backoff_s=0.01)
    return base.with_overrides(**overrides)


def client(server, store: Store | None = None, **overrides: object) -> OllamaLLM:
    """An Ollama client for the fake server (with the store as reply cache when given)."""
    return OllamaLLM(settings_for(server, **overrides).ollama, cache=store)


ANSWER = "Maria Lopez founded Harbor Analytics [C1]. It is based in Lisbon [E3]."
REPORT = {"title": "Harbor Analytics and its people", "summary": "A sensor company in Lisbon and its staff.",
          "findings": [{"summary": "Founded by Maria Lopez", "explanation": "Maria Lopez founded it in 2015."}],
          "rating": 7.5, "rating_explanation": "Central to the documents."}


def prompt_of(request: dict) -> str:
    """All message text of a chat request."""
    return "\n".join(str(m.get("content") or "") for m in request.get("messages") or [])


def keywords_for(prompt: str) -> dict:
    """Scripted keywords: capitalised names are low-level, a few topic words high-level."""
    question = prompt.rsplit("Question:", 1)[-1]
    names = re.findall(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+", question)
    topics = [w for w in ("supply", "founder", "sensors", "garden", "leadership") if w in question.lower()]
    return {"high_level": topics or ["companies"], "low_level": names or question.split()[-2:]}


class Script:
    """A responder for the fake server that knows each retrieval prompt by its format."""

    def __init__(self, answer: str = ANSWER, report: dict | None = None, points: list | None = None):
        self.answer = answer
        self.report = report or REPORT
        self.points = points if points is not None else [
            {"point": "Harbor Analytics sells tide sensors.", "score": 80, "reports": ["K1"]}]
        self.seen: dict[str, int] = {}

    def __call__(self, request: dict) -> str:
        fmt = request.get("format")
        props = fmt.get("properties", {}) if isinstance(fmt, dict) else {}
        kind = ("keywords" if "high_level" in props else "map" if "points" in props
                else "report" if "title" in props else "answer")
        self.seen[kind] = self.seen.get(kind, 0) + 1
        if kind == "keywords":
            return json.dumps(keywords_for(prompt_of(request)))
        if kind == "report":
            return json.dumps(self.report)
        if kind == "map":
            return json.dumps({"points": self.points})
        return self.answer


def chat_requests(server) -> list[dict]:
    """Bodies of the chat requests so far."""
    return [r["body"] for r in server.requests if r["path"] == "/api/chat"]


def embed_requests(server) -> list[dict]:
    """Bodies of the embed requests so far."""
    return [r["body"] for r in server.requests if r["path"] == "/api/embed"]


# -- the builders' own checks ------------------------------------------------------------------
def test_build_graph_gives_the_known_graph(tmp_path):
    with open_store(tmp_path) as store:
        build_graph(store)
        keys = {r["key"] for r in store.query("SELECT key FROM entities")}
        assert {"maria lopez", "harbor analytics", "northwind labs", "community garden"} <= keys
        assert store.counts()["relations"] == 9
        pages = store.query("SELECT page_start, page_end FROM chunks c JOIN documents d ON d.id = c.document_id "
                            "WHERE d.path LIKE '%northwind.pdf' ORDER BY idx")
        assert [(r["page_start"], r["page_end"]) for r in pages] == [(1, 1), (2, 3)]


def test_script_tells_the_prompts_apart():
    script = Script()
    assert "low_level" in script({"format": {"properties": {"high_level": {}}},
                                  "messages": [{"content": "Question: Who is Maria Lopez?"}]})
    assert script({"messages": [{"content": "hi"}]}) == ANSWER
    assert script.seen == {"keywords": 1, "answer": 1}
