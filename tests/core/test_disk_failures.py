"""A full disk and a damaged database: one sentence, a non-zero exit, nothing lost, no traceback."""

from __future__ import annotations

import os
import re
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from docatlas.core.base import paths
from docatlas.core.base.errors import StoreError
from docatlas.core.jobs.ingest import index
from docatlas.core.storage.database import Store
from fixtures.scripted_model import lightrag_responder
from helpers import long_document, settings_for, write_corpus

ROOT = Path(__file__).resolve().parents[2]
PROGRESS = re.compile(r"^(load|extract|summarize|merge|embed|communities|done|cancelled)\b")
FILE_LIMIT = 400_000  # bytes any one file of the child may grow to (RLIMIT_FSIZE)


@pytest.fixture
def model(fake_ollama):
    fake_ollama.responder = lightrag_responder
    return fake_ollama


def cli(model, tmp_path: Path, *args: str, file_limit: int | None = None) -> subprocess.CompletedProcess:
    """Run `docatlas ARGS` in a child process, optionally unable to grow any file past `file_limit`."""
    env = {**os.environ, "OLLAMA_HOST": model.host, "PYTHONPATH": str(ROOT / "desktop"),
           "DOCATLAS_LOG_DIR": str(tmp_path / "logs"), "DOCATLAS_CONFIG_DIR": str(tmp_path / "config")}

    def limit() -> None:
        if file_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))

    return subprocess.run([sys.executable, "-m", "docatlas.cli", "--data-dir", str(tmp_path / "ws"), *args],
                          env=env, capture_output=True, text=True, preexec_fn=limit, timeout=300, check=False)


def assert_one_sentence(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line and not PROGRESS.match(line)]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr and "Logging error" not in result.stderr
    assert "unexpected" not in result.stderr
    for word in words:
        assert word in lines[0]


def test_full_disk_says_so_and_loses_nothing(model, tmp_path):
    small = write_corpus(tmp_path / "small")
    assert cli(model, tmp_path, "ingest", str(small)).returncode == 0
    big = tmp_path / "big"
    big.mkdir()
    (big / "long.txt").write_text(long_document(4000), encoding="utf-8")
    # The log file is full too: the log handler must drop its records quietly.
    (tmp_path / "logs").mkdir(exist_ok=True)
    (tmp_path / "logs" / "docatlas.log").write_bytes(b"x" * FILE_LIMIT)

    full = cli(model, tmp_path, "ingest", str(big), "--chunk-tokens", "100", "--overlap-tokens", "0",
               file_limit=FILE_LIMIT)
    assert_one_sentence(full, "disk", "free some space")

    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        assert store.query("PRAGMA integrity_check") == [{"integrity_check": "ok"}]
        assert len(store.documents()) >= 3  # the earlier documents and their graph are kept
        assert store.counts()["entities"] > 0
    again = cli(model, tmp_path, "ingest", str(big), "--chunk-tokens", "100", "--overlap-tokens", "0")
    assert again.returncode == 0, again.stderr


def test_database_full_inside_one_process_is_a_store_error(model, tmp_path):
    path = tmp_path / "long.txt"
    path.write_text(long_document(3000), encoding="utf-8")
    with Store(tmp_path / "ws.sqlite") as store:
        pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
        store.conn.execute(f"PRAGMA max_page_count = {pages + 20}")
        with pytest.raises(StoreError) as info:
            list(index(store, [path], settings_for(model, chunk_tokens=100, overlap_tokens=0)))
        assert info.value.message.startswith("The disk is full")
        assert store.conn.in_transaction is False
        assert store.counts()["chunks"] == 0  # the document's transaction was rolled back whole


def damage(db: Path) -> None:
    """Overwrite pages in the middle of a real database file."""
    size = db.stat().st_size
    page = 4096
    with open(db, "r+b") as handle:
        for start in range(size // 3 // page * page, size * 2 // 3, page * 2):
            handle.seek(start)
            handle.write(os.urandom(page))


@pytest.mark.parametrize("command", [("status",), ("ingest", "CORPUS"), ("export", "--format", "json", "OUT"),
                                     ("delete", "alpha.txt"), ("rebuild",)])
def test_damaged_database_is_one_sentence(model, tmp_path, command):
    corpus = write_corpus(tmp_path / "docs")
    (corpus / "long.txt").write_text(long_document(200), encoding="utf-8")
    assert cli(model, tmp_path, "ingest", str(corpus), "--chunk-tokens", "100").returncode == 0
    db = tmp_path / "ws" / "docatlas.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    damage(db)
    args = [str(corpus) if a == "CORPUS" else str(tmp_path / "g.json") if a == "OUT" else a for a in command]
    result = cli(model, tmp_path, *args)
    assert_one_sentence(result, "damaged")


def test_data_dir_that_exists_keeps_its_permissions(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    assert paths.data_dir(shared) == shared
    assert shared.stat().st_mode & 0o7777 == 0o1777
    fresh = tmp_path / "new" / "ws"
    paths.data_dir(fresh)
    assert fresh.stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "new").stat().st_mode & 0o777 == 0o700
