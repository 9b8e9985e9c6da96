"""The workspace database: one SQLite file (WAL), a schema version with migrations.

Per-chunk records (`chunk_entities`, `chunk_relations`) are the source of truth; the
`entities` and `relations` tables are derived from them by `docatlas.core.graph.merge`.
One `Store` writes at a time (the pipeline's thread); readers may open their own `Store`.
Writes that must not be half-done go through `transaction()`: an explicit
`BEGIN IMMEDIATE … COMMIT` on a connection in autocommit mode, so that nothing else can
commit part of it early.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from docatlas.core.base.concepts import CONCEPT, SAME_SENTENCE, find_concepts
from docatlas.core.base.errors import StoreError
from docatlas.core.base.records import EntityRecord, RelationRecord
from docatlas.core.storage.copy_finder import find_copies
from docatlas.core.storage.locate import relocate as relocate_mentions
from docatlas.core.storage.migrations import MIGRATIONS, SCHEMA_VERSION

log = logging.getLogger(__name__)

BUSY_WAIT_S = 30.0  # how long a write waits for another connection's transaction to end
CACHE_WAIT_S = 2.0  # a cache write waits less: left out, it costs one model call later, never the answer


@dataclass(frozen=True)
class DocumentRow:
    """A document as the store knows it."""

    id: int
    path: str
    title: str
    kind: str
    content_hash: str
    size: int
    status: str
    error: str | None


@dataclass(frozen=True)
class ChunkRow:
    """A chunk waiting for (or done with) extraction."""

    id: int
    document_id: int
    idx: int
    text: str
    tokens: int
    page_start: int | None
    page_end: int | None
    status: str


@dataclass(frozen=True)
class NewChunk:
    """A chunk to be written for a document."""

    text: str
    tokens: int
    page_start: int | None
    page_end: int | None
    start: int | None = None  # its span in the document's extracted text
    end: int | None = None
    lead: str = ""  # the text between the previous chunk's end and `start`


def stored_path(path: str) -> tuple[str, bytes | None]:
    """(printable text, original bytes or None) for a path that may hold non-UTF-8 bytes."""
    raw = os.fsencode(path)
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError:
        return raw.decode("utf-8", "backslashreplace"), raw


class StoreBusy(StoreError):
    """Another connection (often another DocAtlas process) kept the database busy past the wait."""


def friendly_error(exc: sqlite3.Error) -> StoreError:
    """The one sentence for a database failure: what happened and what to do."""
    text = str(exc).lower()
    if "full" in text:
        return StoreError("The disk is full; free some space and run again (finished work is kept).")
    if "disk i/o error" in text:
        return StoreError("The workspace database could not be written (a disk error, often a full "
                          "disk); free some space or check the disk and run again (finished work is kept).")
    if "locked" in text or "busy" in text:
        return StoreBusy("The workspace is busy in another DocAtlas process; close it and try again.")
    if "readonly" in text or "read-only" in text:
        return StoreError("The workspace folder is read-only; choose a folder you can write to.")
    if "not a database" in text or "malformed" in text:
        return StoreError("The workspace database is damaged; open another workspace or restore a backup.")
    return StoreError(f"The workspace database failed ({exc}); try again, and see the log if it persists.")


class Store:
    """One open workspace database."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.RLock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                str(self.path), timeout=30, isolation_level=None, check_same_thread=False
            )
            _enable_wal(conn)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute(f"PRAGMA busy_timeout={int(BUSY_WAIT_S * 1000)}")
            self.conn = conn
            self._migrate()
        except sqlite3.Error as exc:
            raise friendly_error(exc) from exc

    # -- plumbing -----------------------------------------------------------------

    @property
    def db(self):
        """The connection as a sqlite_utils Database (for table helpers)."""
        import sqlite_utils

        return sqlite_utils.Database(self.conn)

    def close(self) -> None:
        """Close the connection (after a query another thread is running: a model call left to
        finish in the background may still write its reply to the cache)."""
        with self._lock:
            self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self, wait_s: float = BUSY_WAIT_S) -> Iterator[sqlite3.Connection]:
        """All writes inside happen together or not at all.

        It waits up to `wait_s` for another connection's write to end, then raises `StoreBusy`.
        """
        with self._lock:
            try:
                self._begin(wait_s)
            except sqlite3.Error as exc:
                raise friendly_error(exc) from exc
            try:
                yield self.conn
                self.conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback()
                raise friendly_error(exc) from exc
            except BaseException:
                self._rollback()
                raise

    def _begin(self, wait_s: float) -> None:
        if wait_s == BUSY_WAIT_S:
            self.conn.execute("BEGIN IMMEDIATE")
            return
        self.conn.execute(f"PRAGMA busy_timeout={int(wait_s * 1000)}")
        try:
            self.conn.execute("BEGIN IMMEDIATE")  # the wait is only for taking the write lock
        finally:
            self.conn.execute(f"PRAGMA busy_timeout={int(BUSY_WAIT_S * 1000)}")

    def _rollback(self) -> None:
        """Roll back what is open; SQLite has already rolled back after a full disk or I/O error."""
        if self.conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")

    def query(self, sql: str, params: Sequence | dict = ()) -> list[sqlite3.Row]:
        """Run a read query; rows support access by column name."""
        with self._lock:
            try:
                cursor = self.conn.execute(sql, params)
                names = [d[0] for d in cursor.description or ()]
                return [dict(zip(names, row)) for row in cursor.fetchall()]  # type: ignore[misc]
            except sqlite3.Error as exc:
                raise friendly_error(exc) from exc

    def _migrate(self) -> None:
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(
                "This workspace was written by a newer DocAtlas; update DocAtlas to open it."
            )
        for target in range(version, SCHEMA_VERSION):
            with self.transaction() as conn:
                # Read again under the write lock: another process may have just migrated.
                if conn.execute("PRAGMA user_version").fetchone()[0] > target:
                    continue
                step = MIGRATIONS[target]
                if isinstance(step, str):
                    for statement in _statements(step):
                        conn.execute(statement)
                else:  # a step that fills what it adds from the rows already stored
                    step.apply(conn, _statements)
                conn.execute(f"PRAGMA user_version = {target + 1}")

    @property
    def schema_version(self) -> int:
        """The schema version of the open file."""
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    # -- meta -----------------------------------------------------------------------

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        """A value from the meta table."""
        rows = self.query("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0]["value"] if rows else default

    def set_meta(self, key: str, value: str, conn: sqlite3.Connection | None = None) -> None:
        """Set a meta value (inside the caller's transaction when `conn` is given)."""
        sql = "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value"
        if conn is not None:
            conn.execute(sql, (key, value))
        else:
            with self.transaction() as c:
                c.execute(sql, (key, value))

    # -- documents and chunks --------------------------------------------------------

    def document_by_path(self, path: str) -> DocumentRow | None:
        """The document stored for this path, if any."""
        rows = self.query("SELECT * FROM documents WHERE path = ?", (stored_path(path)[0],))
        return _document(rows[0]) if rows else None

    def documents(self) -> list[DocumentRow]:
        """All documents, oldest first."""
        return [_document(r) for r in self.query("SELECT * FROM documents ORDER BY id")]

    def find_documents(self, ref: str) -> list[DocumentRow]:
        """Documents matching an id, a full path, a file name or a title."""
        rows = self.query(
            "SELECT * FROM documents WHERE CAST(id AS TEXT) = ? OR path = ? OR title = ? "
            "OR path LIKE ? ESCAPE '\\' ORDER BY id",
            (ref, ref, ref, "%/" + ref.replace("%", "\\%").replace("_", "\\_")),
        )
        return [_document(r) for r in rows]

    def put_document(
        self,
        *,
        path: str,
        title: str,
        kind: str,
        content_hash: str,
        size: int,
        chunks: Iterable[NewChunk],
        metadata: Iterable[tuple[str, str]] = (),
        pages: Iterable[tuple[int, int]] = (),
    ) -> tuple[int, set[str]]:
        """Store a (new or changed) document and all its chunks as `pending`, in one go.

        `chunks` may be a generator: it is consumed inside the transaction, so a document
        read as a stream is never whole in memory, and an error while reading it keeps the
        previous version. A previous version at the same path is replaced; the entity keys
        its records supported are returned (and kept in `pending_rederive` in the same
        transaction) so the graph can be re-derived for them. `pages` are (number, offset
        where the page starts in the extracted text) for a paged document.
        """
        now = time.time()
        text_path, raw_path = stored_path(path)
        with self.transaction() as conn:
            touched = self._drop_document(conn, text_path)
            cursor = conn.execute(
                "INSERT INTO documents(path, title, kind, content_hash, size, status, added_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)",
                (text_path, title, kind, content_hash, size, now, now),
            )
            doc_id = cursor.lastrowid
            _keep_path_bytes(conn, doc_id, raw_path)
            conn.executemany("INSERT OR REPLACE INTO document_metadata(document_id, key, value) VALUES (?, ?, ?)",
                             ((doc_id, key, value) for key, value in metadata if value))
            inserted = conn.executemany(
                "INSERT INTO chunks(document_id, idx, text, tokens, page_start, page_end, char_start, char_end,"
                " lead, status, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)",
                ((doc_id, i, c.text, c.tokens, c.page_start, c.page_end, c.start, c.end, c.lead, now)
                 for i, c in enumerate(chunks)),
            ).rowcount
            conn.executemany("INSERT INTO document_pages(document_id, number, start) VALUES (?, ?, ?)",
                             [(doc_id, number, start) for number, start in pages])
            if not inserted:
                conn.execute("UPDATE documents SET status = 'done' WHERE id = ?", (doc_id,))
            named = _store_concepts(conn, doc_id)
            find_copies(conn, doc_id)  # a near-duplicate of a stored chunk takes its records, not a call
            # Owed a merge like a drop's keys: a kill before the next batch leaves them to the next run.
            conn.executemany("INSERT OR IGNORE INTO pending_rederive(key) VALUES (?)", [(k,) for k in named - touched])
        return int(doc_id), touched | named

    def put_failed_document(self, *, path: str, title: str, kind: str, content_hash: str,
                            size: int, error: str) -> set[str]:
        """Record a document that could not be read; a previous version is replaced."""
        now = time.time()
        text_path, raw_path = stored_path(path)
        with self.transaction() as conn:
            touched = self._drop_document(conn, text_path)
            cursor = conn.execute(
                "INSERT INTO documents(path, title, kind, content_hash, size, status, error, added_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, 'failed', ?, ?, ?)",
                (text_path, title, kind, content_hash, size, error, now, now),
            )
            _keep_path_bytes(conn, cursor.lastrowid, raw_path)
        return touched

    def delete_document(self, document_id: int) -> set[str]:
        """Remove a document, its chunks and their records; return the entity keys touched."""
        with self.transaction() as conn:
            row = conn.execute("SELECT path FROM documents WHERE id = ?", (document_id,)).fetchone()
            return self._drop_document(conn, row[0]) if row else set()

    def file_path(self, document: DocumentRow) -> Path:
        """The document's file on disk, exactly (also when its name is not valid UTF-8)."""
        rows = self.query("SELECT raw FROM document_path_bytes WHERE document_id = ?", (document.id,))
        return Path(os.fsdecode(rows[0]["raw"])) if rows else Path(document.path)

    def _drop_document(self, conn: sqlite3.Connection, path: str) -> set[str]:
        row = conn.execute("SELECT id FROM documents WHERE path = ?", (path,)).fetchone()
        if row is None:
            return set()
        touched = _touched_keys(conn, "chunks.document_id = ?", (row[0],))
        conn.execute("DELETE FROM documents WHERE id = ?", (row[0],))  # cascades
        # The keys outlive a crash before the merge: the next writing job re-derives them.
        conn.executemany("INSERT OR IGNORE INTO pending_rederive(key) VALUES (?)", [(k,) for k in touched])
        return touched

    def work_chunks(self, document_ids: Iterable[int] | None = None, with_text: bool = True) -> list[ChunkRow]:
        """Chunks still to extract (pending or failed earlier), in document order.

        With `with_text=False` their text is left empty (read each with `chunk_text` when it
        is needed), so a workspace of 50,000 pending chunks is not held in memory."""
        columns = "*" if with_text else "id, document_id, idx, '' AS text, tokens, page_start, page_end, status"
        sql = f"SELECT {columns} FROM chunks WHERE status IN ('pending', 'failed')"
        params: tuple = ()
        if document_ids is not None:
            ids = list(document_ids)
            if not ids:
                return []
            sql += f" AND document_id IN ({','.join('?' * len(ids))})"
            params = tuple(ids)
        return [_chunk(r) for r in self.query(sql + " ORDER BY document_id, idx", params)]

    def chunk_text(self, chunk_id: int) -> str:
        """The text of one chunk."""
        return self.query("SELECT text FROM chunks WHERE id = ?", (chunk_id,))[0]["text"]

    def chunk_counts(self, document_id: int) -> dict[str, int]:
        """How many chunks of a document are in each status."""
        rows = self.query(
            "SELECT status, COUNT(*) AS n FROM chunks WHERE document_id = ? GROUP BY status",
            (document_id,),
        )
        return {r["status"]: r["n"] for r in rows}

    def finish_chunk(
        self,
        chunk_id: int,
        entities: Sequence[EntityRecord],
        relations: Sequence[RelationRecord],
        *,
        status: str,
        profile: str,
        model: str,
        calls: int,
        keys: Sequence[str],
        relation_keys: Sequence[tuple[str, str]],
        keep_concepts: Collection[str] = (),
    ) -> set[str]:
        """Store a chunk's records and mark it done (or `empty`) in one transaction.

        `keys[i]` is the normalised key of `entities[i]`; `relation_keys[i]` the
        (source, target) keys of `relations[i]`. The keys of its new and replaced records are
        owed a merge (`pending_rederive`, in the same transaction) until one derives them, so a
        process killed before (or during) its merges leaves exactly those keys to the next run.
        Returns those keys (the chunk's replaced records' among them: its concept names).
        `keep_concepts`: concept names the new records do not cover that stay (a copy's own
        names, which the model never read), with the concept links between two of them.
        """
        now = time.time()
        with self.transaction() as conn:
            owed = _touched_keys(conn, "chunks.id = ?", (chunk_id,))  # the records it replaces
            owed.update(keys)
            owed.update(k for pair in relation_keys for k in pair)
            kept = json.dumps(sorted(keep_concepts))
            conn.execute("DELETE FROM chunk_entities WHERE chunk_id = ? AND NOT (layer = ? AND key IN "
                         "(SELECT value FROM json_each(?)))", (chunk_id, CONCEPT, kept))
            conn.execute("DELETE FROM chunk_relations WHERE chunk_id = ? AND NOT (layer = ? AND source_key IN "
                         "(SELECT value FROM json_each(?)) AND target_key IN (SELECT value FROM json_each(?)))",
                         (chunk_id, CONCEPT, kept, kept))
            conn.executemany(
                "INSERT INTO chunk_entities(chunk_id, key, name, type, description) VALUES (?, ?, ?, ?, ?)",
                [(chunk_id, k, e.name, e.type, e.description) for k, e in zip(keys, entities)],
            )
            conn.executemany(
                "INSERT INTO chunk_relations(chunk_id, source_key, target_key, source, target, keywords, "
                "description, strength) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (chunk_id, sk, tk, r.source, r.target, r.keywords, r.description, r.strength)
                    for (sk, tk), r in zip(relation_keys, relations)
                ],
            )
            relocate_mentions(conn, chunk_id)
            conn.execute(
                "UPDATE chunks SET status = ?, error = NULL, profile = ?, model = ?, calls = calls + ?, "
                "updated_at = ? WHERE id = ?",
                (status, profile, model, calls, now, chunk_id),
            )
            conn.executemany("INSERT OR IGNORE INTO pending_rederive(key) VALUES (?)", [(k,) for k in owed])
        return owed

    def fail_chunk(self, chunk_id: int, error: str) -> None:
        """Mark a chunk failed with a reason; it is tried again on the next run."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE chunks SET status = 'failed', error = ?, updated_at = ? WHERE id = ?",
                (error, time.time(), chunk_id),
            )

    def refresh_document_status(self, document_id: int) -> str:
        """Set a document's status from its chunks: done, failed or pending."""
        counts = self.chunk_counts(document_id)
        if counts.get("pending"):
            status, error = "pending", None
        elif counts.get("failed"):
            status = "failed"
            error = self.query(
                "SELECT error FROM chunks WHERE document_id = ? AND status = 'failed' LIMIT 1",
                (document_id,),
            )[0]["error"]
        else:
            status, error = "done", None
        with self.transaction() as conn:
            conn.execute(
                "UPDATE documents SET status = ?, error = ?, updated_at = ? WHERE id = ?",
                (status, error, time.time(), document_id),
            )
        return status

    # -- LLM response cache (docatlas.core.llm.protocol.ResponseCache) ------------------------

    def get(self, key: str) -> str | None:
        """A cached model reply."""
        rows = self.query("SELECT reply FROM llm_cache WHERE key = ?", (key,))
        return rows[0]["reply"] if rows else None

    def put(self, key: str, model: str, reply: str) -> None:
        """Cache a model reply, in a short transaction of its own.

        Queries write here without the workspace lock (they must run during an ingestion):
        when another process keeps the database busy past `CACHE_WAIT_S`, the reply is left
        uncached, so the answer it belongs to still reaches the user.
        """
        try:
            with self.transaction(CACHE_WAIT_S) as conn:
                conn.execute(
                    "INSERT OR REPLACE INTO llm_cache(key, model, reply, created_at) VALUES (?, ?, ?, ?)",
                    (key, model, reply, time.time()),
                )
        except StoreBusy:
            log.warning("a model reply was left uncached: the workspace was busy in another process")

    # -- counts ----------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """Totals for status displays."""
        row = self.query(
            "SELECT (SELECT COUNT(*) FROM documents) AS documents,"
            " (SELECT COUNT(*) FROM chunks) AS chunks,"
            " (SELECT COUNT(*) FROM chunks WHERE status IN ('done', 'empty')) AS chunks_done,"
            " (SELECT COUNT(*) FROM chunks WHERE status = 'pending') AS chunks_pending,"
            " (SELECT COUNT(*) FROM chunks WHERE status = 'failed') AS chunks_failed,"
            " (SELECT COUNT(*) FROM entities) AS entities,"
            " (SELECT COUNT(*) FROM entities WHERE layer = ?) AS concept_entities,"
            " (SELECT COUNT(*) FROM relations) AS relations,"
            " (SELECT COUNT(*) FROM chunk_copies JOIN chunks ON chunks.id = chunk_copies.chunk_id"
            "  WHERE chunks.status IN ('done', 'empty')) AS copies_reused,"
            " (SELECT COUNT(*) FROM llm_cache) AS cached_replies", (CONCEPT,)
        )[0]
        return dict(row)


def _enable_wal(conn: sqlite3.Connection, attempts: int = 60) -> None:
    """Switch to WAL; on a brand-new file other openers can make SQLite answer "locked"
    at once (the busy handler is not used for this), so try again for a few seconds."""
    for attempt in range(attempts):
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc).lower() or attempt == attempts - 1:
                raise
            time.sleep(0.05)


def _statements(script: str) -> Iterator[str]:
    """Split a migration into complete SQL statements (triggers hold semicolons of their own)."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            yield buffer.strip()
            buffer = ""
    if buffer.strip():
        yield buffer.strip()


def _keep_path_bytes(conn: sqlite3.Connection, document_id: int | None, raw: bytes | None) -> None:
    if raw is not None:
        conn.execute("INSERT OR REPLACE INTO document_path_bytes(document_id, raw) VALUES (?, ?)",
                     (document_id, raw))


CONCEPT_BATCH = 200  # chunks read back at a time to find their names (memory stays flat)


def _store_concepts(conn: sqlite3.Connection, document_id: int) -> set[str]:
    """The concept layer's records of a document's new chunks (`core.base.concepts`); their keys."""
    keys: set[str] = set()
    cursor = conn.execute("SELECT id, text FROM chunks WHERE document_id = ? ORDER BY idx", (document_id,))
    while rows := cursor.fetchmany(CONCEPT_BATCH):
        entities, relations = [], []
        for chunk_id, text in rows:
            found = find_concepts(text)
            entities += [(chunk_id, key, name) for key, name in found.names.items()]
            relations += [(chunk_id, a, b, found.names[a], found.names[b], float(n))
                          for (a, b), n in found.links.items()]
            keys.update(found.names)
        conn.executemany("INSERT INTO chunk_entities(chunk_id, key, name, type, description, layer) "
                         "VALUES (?, ?, ?, '', '', ?)", [(*e, CONCEPT) for e in entities])
        conn.executemany("INSERT INTO chunk_relations(chunk_id, source_key, target_key, source, target, keywords, "
                         "description, strength, layer) VALUES (?, ?, ?, ?, ?, ?, '', ?, ?)",
                         [(c, a, b, sa, sb, SAME_SENTENCE, n, CONCEPT) for c, a, b, sa, sb, n in relations])
    return keys


def _touched_keys(conn: sqlite3.Connection, where: str, params: tuple) -> set[str]:
    keys = {
        r[0]
        for r in conn.execute(
            f"SELECT key FROM chunk_entities JOIN chunks ON chunks.id = chunk_entities.chunk_id WHERE {where}",
            params,
        )
    }
    for s, t in conn.execute(
        "SELECT source_key, target_key FROM chunk_relations "
        f"JOIN chunks ON chunks.id = chunk_relations.chunk_id WHERE {where}",
        params,
    ):
        keys.update((s, t))
    return keys


def _document(row: dict) -> DocumentRow:
    return DocumentRow(
        id=row["id"], path=row["path"], title=row["title"], kind=row["kind"],
        content_hash=row["content_hash"], size=row["size"], status=row["status"], error=row["error"],
    )


def _chunk(row: dict) -> ChunkRow:
    return ChunkRow(
        id=row["id"], document_id=row["document_id"], idx=row["idx"], text=row["text"],
        tokens=row["tokens"], page_start=row["page_start"], page_end=row["page_end"], status=row["status"],
    )
