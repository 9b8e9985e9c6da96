"""Storage is the only place with SQL: every other module of DocAtlas (core layers, window,
command line) calls typed `docatlas.core.storage` functions and executes no statement."""

from __future__ import annotations

import re
from pathlib import Path

import docatlas
import pytest

PACKAGE = Path(docatlas.__file__).resolve().parent
STORAGE = PACKAGE / "core" / "storage"
# Running a statement, or a statement's text.
SQL = re.compile(r"\.execute\(|\.executemany\(|executescript|\.query\(|\.db\[|\.conn\b|\bsqlite_utils\b"
                 r"|\b(SELECT|INSERT INTO|INSERT OR|DELETE FROM|UPDATE \w+ SET|CREATE (TEMP )?TABLE|PRAGMA)\b")


def modules_outside_storage() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if STORAGE not in p.parents)


def test_no_module_outside_storage_holds_sql():
    found = [f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
             for path in modules_outside_storage()
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if SQL.search(line)]
    assert found == []


def test_the_check_reads_the_whole_package():
    names = {p.relative_to(PACKAGE).as_posix() for p in modules_outside_storage()}
    assert {"core/graph/merge.py", "core/retrieval/embed.py", "core/prompts/store.py", "core/jobs/reextract.py",
            "core/graph/layout.py", "gui/main_window.py", "cli/__init__.py"} <= names
    assert not any(name.startswith("core/storage/") for name in names)


@pytest.mark.parametrize("line", [
    'conn.execute("DELETE FROM entities WHERE key = ?", (key,))', "rows = store.query(sql)",
    "conn.executemany(sql, rows)", 'store.db["entities"].insert(row)', "for row in store.conn:",
    'sql = "SELECT key FROM entities"', '"INSERT OR REPLACE INTO relations VALUES (?)"',
    'store.conn.execute("SELECT 1")',
])
def test_the_check_sees_sql(line):
    assert SQL.search(line)


def test_the_check_lets_prose_and_storage_calls_through():
    assert not SQL.search("graph_rows.write_derived(conn, plan.scope, entities, relations)")
    assert not SQL.search("# an update fires the full-text and embedding triggers; select a key")
    assert not SQL.search("settings.query.top_k")
