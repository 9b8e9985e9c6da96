"""Storage is the only place with SQL: retrieval, prompts and the layout call typed storage
functions and execute no statement themselves."""

from __future__ import annotations

import re
from pathlib import Path

import docatlas.core as core

CORE = Path(core.__file__).resolve().parent
CHECKED = [*sorted((CORE / "retrieval").glob("*.py")), *sorted((CORE / "prompts").glob("*.py")),
           CORE / "graph" / "layout.py", CORE / "graph" / "communities.py"]
SQL_CALL = re.compile(r"conn\.execute|\.query\(|executemany|\.db\[")


def sql_calls(text: str) -> list[str]:
    """The lines of a module's source that execute SQL."""
    return [line.strip() for line in text.splitlines() if SQL_CALL.search(line)]


def test_the_check_sees_every_way_of_executing_sql():
    sample = ('store.conn.execute("SELECT 1")\nrows = store.query("SELECT 2")\n'
              'conn.executemany("DELETE FROM t WHERE id = ?", ids)\nstore.db["entities"].insert(row)\n'
              'settings.query.top_k\n')
    assert len(sql_calls(sample)) == 4


def test_retrieval_prompts_and_layout_execute_no_sql():
    assert len(CHECKED) > 15 and all(path.is_file() for path in CHECKED)
    found = {path.relative_to(CORE).as_posix(): calls for path in CHECKED
             if (calls := sql_calls(path.read_text(encoding="utf-8")))}
    assert found == {}
