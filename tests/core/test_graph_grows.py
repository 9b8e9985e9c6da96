"""The graph grows while a run goes on: a chunk's records are merged in a small batch seconds after
it is extracted, so `export`, `status` and the graph query modes see them during the run, and the
full-text index serves the files already stored. A kill at any moment leaves exactly the keys the
run stored owed to the next run, which summarises them and asks the model nothing again.

Real processes (`docatlas ingest` and the commands beside it), real SQLite, real HTTP to FakeOllama,
whose extraction of one file is held until the test lets it go: the run is surely still going on
while the other files' records are read.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from docatlas.core.base import paths
from docatlas.core.base.keys import entity_key
from docatlas.core.graph.export import graph_data
from docatlas.core.jobs.ingest import index
from docatlas.core.storage import healing
from docatlas.core.storage.database import Store
from fixtures.scripted_model import SUMMARY_MARK, names_in, passage_of, responder_for
from helpers import DOCUMENTS, long_document, settings_for, write_corpus
from test_healing import graph_of
from test_retrieval_helpers import Script

ROOT = Path(__file__).resolve().parents[2]
HELD = "zeta.txt"
HELD_TEXT = "Zara Quill met Otto Brand in Kyoto. Otto Brand admired the Kyoto Garden Tower."
WAIT_S = 90  # bounded waits for conditions; never an assertion on time


class HeldModel:
    """Extraction by the scripted model (descriptions vary by chunk), the retrieval prompts by `Script`;
    every extraction call for the held file waits until `release` is set."""

    def __init__(self) -> None:
        self.extract = responder_for("lightrag", varied=True)
        self.script = Script()
        self.release = threading.Event()
        self.holding = threading.Event()  # a held call has reached the model

    def __call__(self, request: dict) -> str:
        messages = request.get("messages") or [{"content": request.get("prompt", "")}]
        first = messages[0]["content"]
        retrieval = isinstance(request.get("format"), dict) or "question" in json.dumps(messages[-1:]).lower()
        if retrieval and SUMMARY_MARK not in first:
            if "high_level" in request["format"].get("properties", {}) if isinstance(request.get("format"),
                                                                                      dict) else False:
                # The question's names as both kinds of keywords: a relation's text names its ends.
                names = names_in(first.rsplit("Question:", 1)[-1])
                return json.dumps({"high_level": names, "low_level": names})
            return self.script(request)
        if SUMMARY_MARK not in first and "Passage:\n" in first and "Zara Quill" in passage_of(first):
            self.holding.set()
            self.release.wait(WAIT_S)
        return self.extract(request)


@pytest.fixture
def model(fake_ollama, monkeypatch):
    fake_ollama.responder = HeldModel()
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    settings = paths.settings_path()  # summaries owed for the names several files share
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"extraction": {"summary_tokens": 20}}), encoding="utf-8")
    yield fake_ollama
    fake_ollama.responder.release.set()


def _env(server) -> dict:
    return {**os.environ, "OLLAMA_HOST": server.host, "PYTHONPATH": str(ROOT / "desktop")}


def cli(server, ws: Path, *args: str) -> subprocess.CompletedProcess:
    """One `docatlas` command in a process of its own, beside the run."""
    return subprocess.run([sys.executable, "-m", "docatlas.cli", "--data-dir", str(ws), *args], env=_env(server),
                          capture_output=True, text=True, timeout=120)


def start_ingest(server, ws: Path, docs: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "docatlas.cli", "--data-dir", str(ws), "ingest", str(docs)],
                            env=_env(server), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(what: Callable[[], object], process: subprocess.Popen, describe: str) -> object:
    """Poll `what` until it gives something true, while the run is still going; its last value."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        assert process.poll() is None, f"the run ended before {describe}"
        found = what()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"never saw {describe}")


def exported(server, ws: Path) -> dict:
    result = cli(server, ws, "export", "--format", "json", "-")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def exported_names(server, ws: Path, layer: str = "model") -> set[str]:
    return {e["name"] for e in exported(server, ws)["entities"] if e["layer"] == layer}


def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "docs", {**DOCUMENTS, HELD: HELD_TEXT})


def test_export_status_and_every_query_mode_see_the_run_as_it_goes(model, tmp_path):
    ws, docs = tmp_path / "ws", corpus(tmp_path)
    run = start_ingest(model, ws, docs)
    try:
        wait_for(model.responder.holding.is_set, run, "the held file's extraction call")
        with Store(ws / "docatlas.sqlite") as store:  # every file but the held one read by the model
            wait_for(lambda: store.counts()["chunks_done"] == len(DOCUMENTS), run, "the other files extracted")
        wait_for(lambda: (found := exported_names(model, ws)) >= {"Maria Lopez", "Harbor Analytics"}
                 and found, run, "the first files' entities in `export`")
        graph = exported(model, ws)
        layers = {e["name"]: e["layer"] for e in graph["entities"]}
        names = {n for n, layer in layers.items() if layer == "model"}
        # the held file is not extracted yet (the run is in the middle): its names are the concept layer's
        assert "Zara Quill" not in names and layers["Zara Quill"] == layers["Kyoto Garden Tower"] == "concept"
        assert layers["Maria Lopez"] == "model"
        link = next(r for r in graph["relations"] if {r["source"], r["target"]} == {"Zara Quill", "Otto Brand"})
        assert link["layer"] == "concept" and link["sources"] and link["sources"][0].endswith(HELD)

        status = cli(model, ws, "status", "--json")
        assert status.returncode == 0, status.stderr
        report = json.loads(status.stdout)
        held = next(d for d in report["documents"] if d["path"].endswith(HELD))
        assert report["entities"] >= len(names) and held["chunks_done"] == 0
        assert report["concept_entities"] >= 4  # the held file's names: Zara Quill, Otto Brand, Kyoto, ...
        text = cli(model, ws, "status")
        assert f"({report['concept_entities']} of them names the model has not read yet)" in text.stdout

        naive = cli(model, ws, "query", "Where did Zara Quill meet Otto Brand?", "--mode", "naive", "--json")
        assert naive.returncode == 0, naive.stderr
        report = json.loads(naive.stdout)
        assert any("Zara Quill met Otto Brand" in c["text"] for c in report["context"]["chunks"])  # not extracted yet
        total = len(DOCUMENTS) + 1
        assert report["coverage"] == {"documents_read": len(DOCUMENTS), "documents": total}  # it says what it rests on
        assert f"The model has read {len(DOCUMENTS)} of {total} documents so far" in naive.stderr

        partners = cli(model, ws, "query", "Who is Zara Quill connected to?", "--mode", "local", "--json")
        assert partners.returncode == 0, partners.stderr
        context = json.loads(partners.stdout)["context"]
        linked = {end for r in context["relations"] for end in (r["source"], r["target"])}
        assert {"Zara Quill", "Otto Brand"} <= linked, context  # from a document the model has not read
        link = next(r for r in context["relations"] if {r["source"], r["target"]} == {"Zara Quill", "Otto Brand"})
        assert link["layer"] == "concept"  # each part of the context says which layer it rests on

        for mode in ("local", "global", "hybrid", "mix"):
            answer = cli(model, ws, "query", "What did Maria Lopez found?", "--mode", mode, "--json")
            assert answer.returncode == 0, answer.stderr
            context = json.loads(answer.stdout)["context"]
            found = {e["name"] for e in context["entities"]} | {
                end for r in context["relations"] for end in (r["source"], r["target"])}
            assert "Maria Lopez" in found, (mode, context)
            assert all(e["layer"] == "model" for e in context["entities"] if e["name"] == "Maria Lopez")
        assert run.poll() is None  # all of it while the run went on
    finally:
        model.responder.release.set()
    _, err = run.communicate(timeout=120)
    assert run.returncode == 0, err
    assert {"Zara Quill", "Otto Brand"} <= exported_names(model, ws)
    assert not exported_names(model, ws, "concept")  # the model's records replaced every concept name
    after = cli(model, ws, "query", "Where did Zara Quill meet Otto Brand?", "--mode", "naive", "--json")
    assert "coverage" not in json.loads(after.stdout) and "The model has read" not in after.stderr


def stored_keys(store: Store) -> set[str]:
    rows = store.query("SELECT key FROM chunk_entities UNION SELECT source_key FROM chunk_relations "
                       "UNION SELECT target_key FROM chunk_relations")
    return {r["key"] for r in rows}


def extraction_passages(server) -> list[str]:
    return [passage_of(r["body"]["messages"][0]["content"]) for r in server.requests if r["path"] == "/api/chat"
            and SUMMARY_MARK not in r["body"]["messages"][0]["content"] and not isinstance(r["body"].get("format"),
                                                                                            dict)]


def test_a_run_killed_after_its_batches_leaves_exactly_its_keys_owed_and_the_next_run_settles_them(
        model, tmp_path):
    ws, docs = tmp_path / "ws", corpus(tmp_path)
    run = start_ingest(model, ws, docs)
    try:
        wait_for(model.responder.holding.is_set, run, "the held file's extraction call")
        wait_for(lambda: "Maria Lopez" in exported_names(model, ws), run, "a batch merged")
        with Store(ws / "docatlas.sqlite") as store:  # every chunk but the held one is extracted and merged
            wait_for(lambda: store.counts()["chunks_done"] == len(DOCUMENTS) and len(
                graph_data(store)["entities"]) == len(stored_keys(store)), run, "every finished chunk merged")
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=60)
    finally:
        model.responder.release.set()

    settings = settings_for(model, summary_tokens=20)
    with Store(ws / "docatlas.sqlite") as store:
        assert store.get_meta("graph_dirty") != "1"  # no full rebuild owed: the keys alone
        owed, stored = healing.pending(store), stored_keys(store)
        in_graph = {entity_key(e["name"]) for e in graph_data(store)["entities"]}
        # owed: every stored key (their summaries), and the concept names whose records the model's
        # replaced (already gone from the graph: the batch merged them away)
        assert stored <= owed and (owed - stored) == {"lisbon"} and not (owed - stored) & in_graph
        summaries_before = [e["description"] for e in graph_data(store)["entities"]
                            if e["description"].startswith("Summary of ")]
        assert summaries_before == []  # the batches made none: the final merge never came
        model.requests.clear()
        last = list(index(store, [docs], settings))[-1]
        assert last.stage == "done"
        assert set(extraction_passages(model)) == {HELD_TEXT}  # only the call that was in flight
        assert healing.pending(store) == set() and store.get_meta("graph_dirty") == "0"
        healed = graph_of(store)

    with Store(tmp_path / "clean" / "docatlas.sqlite") as clean:
        list(index(clean, [docs], settings))
        expected = graph_of(clean)
    assert any(description.startswith("Summary of ") for _, _, description, _ in expected["entities"])
    assert healed == expected


def test_records_are_merged_in_batches_during_extraction(fake_ollama, tmp_path):
    fake_ollama.responder = responder_for("lightrag")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "long.txt").write_text(long_document(300), encoding="utf-8")
    settings = settings_for(fake_ollama, chunk_tokens=100, overlap_tokens=0)
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        seen = []
        for step in index(store, [docs], settings):
            if step.stage == "extract" and step.chunks_merged > (seen[-1][0] if seen else 0):
                # the records of the chunks merged so far are in the graph now, before the final merge
                seen.append((step.chunks_merged, store.counts()["entities"], step.chunks_done))
            last = step
        assert len(seen) > 1 and all(entities > 0 for _, entities, _ in seen)
        assert all(merged <= done for merged, _, done in seen)
        assert seen[0][0] < last.chunks_done and last.chunks_merged == last.chunks_done > 20
        assert healing.pending(store) == set()  # the final merge settled every key
