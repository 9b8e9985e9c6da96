"""One writer per workspace across processes: real `python -m docatlas` processes on one workspace.

The fake Ollama holds every extraction call until the test opens its gate, so the first
run is surely still extracting while a second process tries its luck; then the gate
opens and the first run finishes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from docatlas.cli import main
from docatlas.core.base.settings import Settings
from docatlas.core.jobs.ingest import index, remove_document
from docatlas.core.jobs.reextract import rederive, requeue_chunks
from docatlas.core.storage.database import Store
from docatlas.core.storage.lock import Holder, WorkspaceBusy, current_holder, workspace_writer
from fixtures.scripted_model import lightrag_responder
from helpers import long_document, write_corpus

ROOT = Path(__file__).resolve().parents[2]
SENTENCE = "is writing to this workspace; wait for it to finish or run again with --wait."


@pytest.fixture
def model(fake_ollama, monkeypatch):
    """The fake Ollama with a gate (`model.gate`, an Event): chat calls wait until it is set."""
    gate = threading.Event()
    gate.set()

    def gated(body: dict) -> str:
        gate.wait(timeout=120)
        return lightrag_responder(body)

    fake_ollama.responder = gated
    fake_ollama.gate = gate
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    yield fake_ollama
    gate.set()


@pytest.fixture
def long_docs(tmp_path) -> Path:
    docs = tmp_path / "long"
    docs.mkdir()
    (docs / "long.txt").write_text(long_document(120), encoding="utf-8")
    return docs


def command(ws: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "docatlas", "--data-dir", str(ws), *args]


def environment(model) -> dict[str, str]:
    return {**os.environ, "OLLAMA_HOST": model.host, "PYTHONPATH": str(ROOT / "desktop")}


def ingest_args(docs: Path) -> list[str]:
    return ["ingest", str(docs), "--chunk-tokens", "150", "--parallel", "2"]


def start_held_ingest(model, ws: Path, docs: Path) -> subprocess.Popen:
    """Start an ingestion in its own process; return once it waits for its first model reply."""
    model.gate.clear()
    before = len(model.paths())
    process = subprocess.Popen(command(ws, *ingest_args(docs)), env=environment(model),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
        if "/api/chat" in model.paths()[before:]:
            return process
    model.gate.set()
    raise AssertionError(f"the first ingestion never got going: {process.communicate()}")


def finish(model, process: subprocess.Popen) -> tuple[int, str, str]:
    """Let the held ingestion's model calls through; its exit code and output."""
    model.gate.set()
    out, err = process.communicate(timeout=120)
    return process.returncode, out, err


def graph(capsys, ws: Path, tmp_path: Path) -> dict:
    """The workspace's graph as `export --format json` writes it."""
    out = tmp_path / f"{ws.name}.json"
    assert main(["--data-dir", str(ws), "export", "--format", "json", str(out)]) == 0
    capsys.readouterr()
    return json.loads(out.read_text(encoding="utf-8"))


def clean_run(capsys, tmp_path: Path, *steps: list[str]) -> tuple[dict, list[str]]:
    """The graph and the outputs of the same commands in a workspace nobody else writes to."""
    ws = tmp_path / "clean"
    outputs = []
    for args in steps:
        code = main(["--data-dir", str(ws), *args])
        out, err = capsys.readouterr()
        assert code == 0, err
        outputs.append(out)
    return graph(capsys, ws, tmp_path), outputs


def test_a_second_ingest_is_refused_and_the_first_finishes_exact(model, long_docs, tmp_path, capsys):
    ws = tmp_path / "ws"
    other_half = write_corpus(tmp_path / "docs")
    first = start_held_ingest(model, ws, long_docs)

    second = subprocess.run(command(ws, *ingest_args(other_half)), env=environment(model),
                            capture_output=True, text=True, timeout=60)
    assert first.poll() is None  # refused while the first was still running, not after it
    assert second.returncode == 1
    assert second.stderr.strip() == (f"Another DocAtlas process (pid {first.pid}, ingest) {SENTENCE}")

    status = subprocess.run(command(ws, "status", "--json"), env=environment(model),
                            capture_output=True, text=True, timeout=60)
    assert first.poll() is None  # reads work during a run
    assert status.returncode == 0, status.stderr
    assert [d["path"] for d in json.loads(status.stdout)["documents"]] == [str(long_docs / "long.txt")]

    code, out, err = finish(model, first)
    assert code == 0, err
    assert "FOREIGN KEY" not in err + second.stderr
    expected, (clean_out,) = clean_run(capsys, tmp_path, ingest_args(long_docs))
    assert graph(capsys, ws, tmp_path) == expected
    assert out == clean_out  # same documents, chunks and model calls as a run alone
    with Store(ws / "docatlas.sqlite") as store:
        assert current_holder(store) is None  # the holder's note goes with the lock


def test_delete_during_ingest_is_refused_and_the_ingest_finishes_exact(model, long_docs, tmp_path, capsys):
    ws = tmp_path / "ws"
    corpus = write_corpus(tmp_path / "docs")
    assert main(["--data-dir", str(ws), *ingest_args(corpus)]) == 0
    first = start_held_ingest(model, ws, long_docs)

    delete = subprocess.run(command(ws, "delete", "alpha.txt"), env=environment(model),
                            capture_output=True, text=True, timeout=60)
    assert first.poll() is None
    assert delete.returncode == 1
    assert delete.stderr.strip() == f"Another DocAtlas process (pid {first.pid}, ingest) {SENTENCE}"

    code, _, err = finish(model, first)
    assert code == 0, err
    expected, _ = clean_run(capsys, tmp_path, ingest_args(corpus), ingest_args(long_docs))
    assert graph(capsys, ws, tmp_path) == expected
    assert len(expected["documents"]) == 4


def test_wait_waits_for_the_writer_then_runs(model, long_docs, tmp_path, capsys):
    ws = tmp_path / "ws"
    corpus = write_corpus(tmp_path / "docs")
    assert main(["--data-dir", str(ws), *ingest_args(corpus)]) == 0
    first = start_held_ingest(model, ws, long_docs)

    delete = subprocess.Popen(command(ws, "delete", "alpha.txt", "--wait"), env=environment(model),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    waiting = delete.stderr.readline()  # said before it waits, so the first run is still going
    assert waiting.strip() == (f"Another DocAtlas process (pid {first.pid}, ingest) is writing to this "
                               "workspace; waiting for it to finish.")
    assert first.poll() is None and delete.poll() is None

    code, _, err = finish(model, first)
    assert code == 0, err
    out, err = delete.communicate(timeout=120)
    assert delete.returncode == 0, err
    assert out.strip() == f"Deleted {corpus / 'alpha.txt'}."
    expected, _ = clean_run(capsys, tmp_path, ingest_args(corpus), ingest_args(long_docs), ["delete", "alpha.txt"])
    assert graph(capsys, ws, tmp_path) == expected


def test_the_lock_is_reentrant_in_one_process_and_exclusive_across(tmp_path):
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        with workspace_writer(store, "ingest"), workspace_writer(store, "delete"):
            holder = current_holder(store)
            assert holder is not None and (holder.pid, holder.what) == (os.getpid(), "ingest")
            probe = ("import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path;"
                     "from docatlas.core.storage.database import Store;"
                     "from docatlas.core.storage.lock import WorkspaceBusy, workspace_writer\n"
                     "with Store(Path(sys.argv[2])) as store:\n"
                     "    try:\n"
                     "        with workspace_writer(store, 'rebuild'): print('got it')\n"
                     "    except WorkspaceBusy as exc: print(exc.message)\n")
            other = subprocess.run([sys.executable, "-c", probe, str(ROOT / "desktop"), str(store.path)],
                                   capture_output=True, text=True, timeout=60)
            # the core's sentence, as the window shows it (the CLI's adds --wait)
            assert other.stdout.strip() == (f"Another DocAtlas process (pid {os.getpid()}, ingest) is writing to "
                                            "this workspace; wait for it to finish, then try again.")
        assert current_holder(store) is None
        again = subprocess.run([sys.executable, "-c", probe, str(ROOT / "desktop"), str(store.path)],
                               capture_output=True, text=True, timeout=60)
        assert again.stdout.strip() == "got it"


HOLDER = """import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from docatlas.core.storage.database import Store
from docatlas.core.storage.lock import workspace_writer
with Store(Path(sys.argv[2])) as store, workspace_writer(store, "rebuild"):
    print("held", flush=True)
    sys.stdin.read()  # until the test closes our stdin
"""


def test_the_jobs_take_the_lock_themselves_so_the_window_does_too(tmp_path):
    """ingest, delete, requeue and rebuild refuse while another process writes; the window calls them directly."""
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(ROOT / "desktop"), str(store.path)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout.readline().strip() == "held"
            jobs = [lambda: list(index(store, [], Settings())), lambda: remove_document(store, 1),
                    lambda: requeue_chunks(store, [1]), lambda: rederive(store, Settings())]
            for job in jobs:
                with pytest.raises(WorkspaceBusy) as refused:
                    job()
                assert refused.value.holder == Holder(holder.pid, "rebuild")
        finally:
            holder.stdin.close()
            holder.wait(timeout=60)
        assert requeue_chunks(store, []) == set()  # free again once the other process let go
        assert current_holder(store) is None


def test_a_killed_writer_leaves_no_lock_behind(model, long_docs, tmp_path):
    ws = tmp_path / "ws"
    first = start_held_ingest(model, ws, long_docs)
    first.kill()
    first.communicate()
    with Store(ws / "docatlas.sqlite") as store:
        assert current_holder(store) is not None  # its note is still there, but nobody holds the lock
        with workspace_writer(store, "delete"):  # the OS let go of the lock with the process
            assert current_holder(store).what == "delete"


def test_a_second_writer_is_turned_away_before_the_rest_of_docatlas_loads(tmp_path):
    """The refusal comes from a quick look at the lock file: no model client, no database opened."""
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store, workspace_writer(store, "ingest"):
        probe = ("import sys; sys.path.insert(0, sys.argv[1]); import docatlas.cli\n"
                 "code = docatlas.cli.main(['--data-dir', sys.argv[2], 'ingest', sys.argv[2]])\n"
                 "print(code, sorted(m for m in ('ollama', 'sqlite_utils', 'networkx') if m in sys.modules))\n")
        other = subprocess.run([sys.executable, "-c", probe, str(ROOT / "desktop"), str(store.path.parent)],
                               capture_output=True, text=True, timeout=60)
    assert other.stdout.strip() == "1 []"
    assert other.stderr.strip() == (f"Another DocAtlas process (pid {os.getpid()}, ingest) is writing to this "
                                    "workspace; wait for it to finish or run again with --wait.")
