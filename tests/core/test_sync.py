"""Linked folders: `docatlas sync` ingests what is new or changed, and removes what is gone only when asked."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from docatlas.core.base import paths
from docatlas.core.base.settings import Settings, save_settings
from docatlas.core.jobs.sync import plan_sync
from docatlas.core.storage.database import Store
from fixtures.folder_changes import ADDED, EDIT, change_folder
from fixtures.scripted_model import lightrag_responder
from helpers import DOCUMENTS, docatlas, expected_graph, write_corpus

# What the folder holds after `change_folder`: one file added, one edited, one removed.
CHANGED = {
    "alpha.txt": DOCUMENTS["alpha.txt"] + EDIT[1],
    "beta.md": DOCUMENTS["beta.md"],
    ADDED[0]: ADDED[1],
}


@pytest.fixture
def model(fake_ollama, monkeypatch):
    fake_ollama.responder = lightrag_responder
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    return fake_ollama



def graph_of(capsys, ws: str, out: Path) -> tuple[set[str], set[str]]:
    """(entity names, document file names) as `export --format json` writes them."""
    code, _, err = docatlas(capsys, "--data-dir", ws, "export", "--format", "json", str(out))
    assert code == 0, err
    data = json.loads(out.read_text(encoding="utf-8"))
    return {e["name"].lower() for e in data["entities"]}, {Path(d["path"]).name for d in data["documents"]}


def test_sync_follows_a_folder_added_edited_and_removed(model, capsys, tmp_path):
    folder = write_corpus(tmp_path / "docs")
    ws = str(tmp_path / "ws")
    assert docatlas(capsys, "--data-dir", ws, "ingest", str(folder))[0] == 0
    code, out, _ = docatlas(capsys, "--data-dir", ws, "sync", "--list")
    assert code == 0 and str(folder.resolve()) in out  # ingesting a folder linked it in place

    change_folder(folder)
    code, out, err = docatlas(capsys, "--data-dir", ws, "sync", "--keep-gone")
    assert code == 0, err
    assert "1 new, 1 changed" in out and "1 file is gone but still in the graph" in out
    entities, documents = graph_of(capsys, ws, tmp_path / "kept.json")
    assert {"elena costa", "omar haddad"} <= entities and "gamma.txt" in documents

    code, out, err = docatlas(capsys, "--data-dir", ws, "sync", "--remove-gone")
    assert code == 0, err and "1 removed" in out
    entities, documents = graph_of(capsys, ws, tmp_path / "synced.json")
    assert documents == set(CHANGED)
    expected, _ = expected_graph(CHANGED)
    assert {e.replace(" ", "") for e in entities} == {e.replace(" ", "") for e in expected}

    calls = len(model.requests)
    code, out, _ = docatlas(capsys, "--data-dir", ws, "sync")
    assert code == 0 and "nothing new" in out and len(model.requests) == calls  # stat only, no model call


def test_a_touched_file_is_hashed_not_extracted_again(model, capsys, tmp_path):
    folder = write_corpus(tmp_path / "docs")
    ws = str(tmp_path / "ws")
    assert docatlas(capsys, "--data-dir", ws, "sync", str(folder))[0] == 0
    calls = len(model.requests)
    later = (folder / "beta.md").stat().st_mtime_ns + 5_000_000_000
    os.utime(folder / "beta.md", ns=(later, later))
    code, out, _ = docatlas(capsys, "--data-dir", ws, "sync")
    assert code == 0 and "1 touched but unchanged" in out and len(model.requests) == calls


def test_a_missing_linked_folder_keeps_its_documents(model, capsys, tmp_path):
    folder = write_corpus(tmp_path / "docs")
    ws = str(tmp_path / "ws")
    assert docatlas(capsys, "--data-dir", ws, "sync", str(folder))[0] == 0
    folder.rename(tmp_path / "unplugged")
    code, out, _ = docatlas(capsys, "--data-dir", ws, "sync", "--remove-gone")
    assert code == 0 and "is missing; reconnect it" in out
    _, documents = graph_of(capsys, ws, tmp_path / "g.json")
    assert documents == {"alpha.txt", "beta.md", "gamma.txt"}


def test_the_setting_removes_gone_files_without_asking(model, capsys, tmp_path):
    save_settings(Settings().with_overrides(sync__gone_files="remove"), paths.settings_path())
    folder = write_corpus(tmp_path / "docs")
    ws = str(tmp_path / "ws")
    assert docatlas(capsys, "--data-dir", ws, "sync", str(folder))[0] == 0
    (folder / "gamma.txt").unlink()
    code, out, _ = docatlas(capsys, "--data-dir", ws, "sync")
    assert code == 0 and "1 removed" in out
    with Store(paths.database_path(Path(ws))) as store:
        assert plan_sync(store).is_empty()
        assert sorted(Path(d.path).name for d in store.documents()) == ["alpha.txt", "beta.md"]


def test_sync_refuses_what_is_not_a_folder(capsys, tmp_path):
    (tmp_path / "file.txt").write_text("x", encoding="utf-8")
    ws = tmp_path / "ws"
    code, _, err = docatlas(capsys, "--data-dir", str(ws), "sync", str(tmp_path / "file.txt"))
    assert code == 1 and "is not a folder; give a folder to link" in err
    code, _, err = docatlas(capsys, "--data-dir", str(ws), "sync", str(tmp_path / "nowhere"))
    assert code == 1 and "does not exist" in err
    assert not ws.exists()  # nothing was created
    code, _, err = docatlas(capsys, "--data-dir", str(ws), "sync")
    assert code == 1 and "No folder is linked to this workspace" in err


def test_a_renamed_file_moves_in_the_graph_from_the_cache(model, capsys, tmp_path):
    folder = write_corpus(tmp_path / "docs")
    ws = str(tmp_path / "ws")
    assert docatlas(capsys, "--data-dir", ws, "sync", str(folder))[0] == 0
    before, _ = graph_of(capsys, ws, tmp_path / "before.json")
    chats = sum(1 for r in model.requests if r.get("path") == "/api/chat")
    (folder / "beta.md").rename(folder / "beta-renamed.md")
    code, out, _ = docatlas(capsys, "--data-dir", ws, "sync", "--remove-gone")
    assert code == 0 and "1 new" in out and "1 removed" in out
    after, documents = graph_of(capsys, ws, tmp_path / "after.json")
    assert documents == {"alpha.txt", "beta-renamed.md", "gamma.txt"} and after == before
    assert sum(1 for r in model.requests if r.get("path") == "/api/chat") == chats  # the replies were cached


def test_names_that_are_not_utf8_and_linked_files_are_followed_exactly(model, capsys, tmp_path):
    folder = write_corpus(tmp_path / "docs")
    odd = os.fsdecode(b"caf\xe9.txt")
    (folder / odd).write_text("Ana Silva met Rui Costa.", encoding="utf-8")
    elsewhere = write_corpus(tmp_path / "elsewhere", {"linked.txt": "Ines Duarte met Paulo Reis."})
    (folder / "link.txt").symlink_to(elsewhere / "linked.txt")
    ws = str(tmp_path / "ws")
    assert docatlas(capsys, "--data-dir", ws, "sync", str(folder))[0] == 0
    with Store(paths.database_path(Path(ws))) as store:
        assert plan_sync(store).is_empty()  # neither is taken for new, changed or gone
    (folder / odd).unlink()
    with Store(paths.database_path(Path(ws))) as store:
        assert [g.path for g in plan_sync(store).gone] == [str(folder.resolve() / "caf\\xe9.txt")]


@pytest.mark.parametrize("answer, kept", [("y", False), ("", True)])
def test_on_a_terminal_sync_asks_before_removing(model, capsys, tmp_path, monkeypatch, answer, kept):
    folder = write_corpus(tmp_path / "docs")
    ws = str(tmp_path / "ws")
    assert docatlas(capsys, "--data-dir", ws, "sync", str(folder))[0] == 0
    (folder / "gamma.txt").unlink()
    asked: list[str] = []
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: asked.append(prompt) or answer)
    code, _, err = docatlas(capsys, "--data-dir", ws, "sync")
    assert code == 0 and "1 file is gone from the linked folders (gamma.txt)" in err
    assert asked == ["Remove them from the graph? [y/N] "]
    _, documents = graph_of(capsys, ws, tmp_path / "g.json")
    assert ("gamma.txt" in documents) is kept


def test_attachments_and_messages_in_a_linked_folder_are_never_taken_for_gone(model, capsys, tmp_path):
    from fixtures.make_formats import make_eml, make_mbox

    folder = tmp_path / "mail"
    folder.mkdir()
    make_eml(folder / "figures.eml", tmp_path)
    make_mbox(folder / "box.mbox", ["First note", "Second note"])
    ws = str(tmp_path / "ws")
    code, _, err = docatlas(capsys, "--data-dir", ws, "ingest", str(folder))
    assert code == 0, err
    with Store(Path(ws) / "docatlas.sqlite") as store:
        paths_stored = [d["path"] for d in store.query("SELECT path FROM documents")]
        assert any("#attachment-" in p for p in paths_stored) and any("#message-" in p for p in paths_stored)
        plan = plan_sync(store)
    assert plan.gone == () and plan.is_empty()
    code, _, err = docatlas(capsys, "--data-dir", ws, "sync", "--remove-gone")
    assert code == 0, err
    _, documents = graph_of(capsys, ws, tmp_path / "after.json")
    assert len(documents) == len(paths_stored)  # nothing removed
