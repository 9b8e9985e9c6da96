"""Small builders shared by the core tests: a corpus with a known truth, settings for a fake host."""

from __future__ import annotations

from pathlib import Path

from docatlas.core.base.settings import Settings

# Each document: sentences naming people and organisations the scripted model "extracts".
DOCUMENTS = {
    "alpha.txt": (
        "Maria Lopez founded Harbor Analytics in Lisbon. "
        "Jonas Weber joined Harbor Analytics as chief engineer.\n\n"
        "Later, Maria Lopez met Priya Nair at a conference."
    ),
    "beta.md": (
        "# Notes\n\nPriya Nair leads Northwind Labs. "
        "Northwind Labs bought sensors from Harbor Analytics.\n\n"
        "Tomas Berg audits Northwind Labs every year."
    ),
    "gamma.txt": (
        "Jonas Weber and Tomas Berg wrote a report together. "
        "The report praised Harbor Analytics."
    ),
}


def expected_graph(documents: dict[str, str] | None = None) -> tuple[set[str], set[frozenset[str]]]:
    """Entity keys and undirected key pairs a perfect extraction of the documents gives."""
    from docatlas.core.base.keys import entity_key
    from fixtures.scripted_model import truth

    entities: set[str] = set()
    pairs: set[frozenset[str]] = set()
    for text in (documents or DOCUMENTS).values():
        names, related = truth(text)
        entities |= {entity_key(n) for n in names}
        pairs |= {frozenset((entity_key(a), entity_key(b))) for a, b in related}
    return entities, pairs


def write_corpus(folder: Path, documents: dict[str, str] | None = None) -> Path:
    """Write the test documents into `folder` and return it."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (documents or DOCUMENTS).items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def long_document(sentences: int, start: int = 0) -> str:
    """A document long enough for many chunks, every sentence naming two people; from sentence
    `start` on (documents with other starts are not near-duplicates of each other)."""
    people = ["Ada Byron", "Alan Turing", "Grace Hopper", "Edsger Dijkstra", "Barbara Liskov",
              "Donald Knuth", "Frances Allen", "John Backus", "Niklaus Wirth", "Tony Hoare"]
    lines = []
    for i in range(start, start + sentences):
        a, b = people[i % len(people)], people[(i * 3 + 1) % len(people)]
        lines.append(f"In year {1950 + i} {a} wrote to {b} about problem number {i} and its proof.")
        if i % 5 == 4:
            lines.append("")
    return "\n".join(lines)


def settings_for(server, **overrides: object) -> Settings:
    """Settings that reach the fake server quickly and give up fast."""
    base = Settings().with_overrides(
        ollama__host=server.host, ollama__timeout_s=10.0, ollama__retries=2, ollama__backoff_s=0.01,
    )
    return base.with_overrides(**overrides)


def docatlas(capsys, *args: str) -> tuple[int, str, str]:
    """Run the `docatlas` command line in-process: (exit code, stdout, stderr)."""
    from docatlas.cli import main

    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def workspace_before(path: Path, step: object):
    """An sqlite3 connection to a new database at `path` holding the schema as it stood just
    before migration `step` (an entry of MIGRATIONS): what an older workspace looks like."""
    import sqlite3

    from docatlas.core.storage.database import MIGRATIONS, _statements

    conn = sqlite3.connect(path)
    for earlier in MIGRATIONS[:MIGRATIONS.index(step)]:
        if isinstance(earlier, str):
            for statement in _statements(earlier):
                conn.execute(statement)
        else:
            earlier.apply(conn, _statements)
    conn.execute(f"PRAGMA user_version = {MIGRATIONS.index(step)}")
    return conn
