"""Document metadata and parts: what a file says about itself (author, title, dates, mail
headers) and which documents came inside another (attachments, a mailbox's messages).

The rows are written in the same transaction as their document (`Store.put_document`) and go
with it (ON DELETE CASCADE). Reads serve the Documents tab, `status`, references and the
metadata filter.
"""

from __future__ import annotations

from collections.abc import Sequence

from docatlas.core.storage.database import Store


def link_part(store: Store, document_id: int, parent_id: int, part_key: str) -> None:
    """Record that `document_id` came inside `parent_id` under `part_key`."""
    with store.transaction() as conn:
        conn.execute("INSERT OR REPLACE INTO document_parts(document_id, parent_id, part_key) VALUES (?, ?, ?)",
                     (document_id, parent_id, part_key))


def parts_of(store: Store, parent_id: int) -> list[tuple[int, str]]:
    """(document id, part key) of every document that came inside `parent_id`."""
    rows = store.query("SELECT document_id, part_key FROM document_parts WHERE parent_id = ? ORDER BY document_id",
                       (parent_id,))
    return [(int(r["document_id"]), str(r["part_key"])) for r in rows]


def parent_of(store: Store, document_id: int) -> int | None:
    """The document `document_id` came inside, if any."""
    rows = store.query("SELECT parent_id FROM document_parts WHERE document_id = ?", (document_id,))
    return int(rows[0]["parent_id"]) if rows else None


def metadata_of(store: Store, document_ids: Sequence[int]) -> dict[int, dict[str, str]]:
    """Each document's metadata, by id (documents without any are absent)."""
    found: dict[int, dict[str, str]] = {}
    ids = list(document_ids)
    for start in range(0, len(ids), 500):
        batch = ids[start:start + 500]
        rows = store.query(
            f"SELECT document_id, key, value FROM document_metadata WHERE document_id IN ({','.join('?' * len(batch))})"
            " ORDER BY document_id, key", batch)
        for row in rows:
            found.setdefault(int(row["document_id"]), {})[str(row["key"])] = str(row["value"])
    return found


def byline(metadata: dict[str, str]) -> str:
    """Who and when, for a reference: "Ada Lovelace, 2026-03-02" (author or sender; a date)."""
    who = metadata.get("author") or metadata.get("from") or ""
    when = (metadata.get("date") or metadata.get("created") or metadata.get("modified") or "")[:10]
    return ", ".join(part for part in (who, when) if part)


def all_metadata(store: Store) -> dict[int, dict[str, str]]:
    """Every document's metadata, by id (a full read of the Documents list)."""
    found: dict[int, dict[str, str]] = {}
    for row in store.query("SELECT document_id, key, value FROM document_metadata ORDER BY document_id, key"):
        found.setdefault(int(row["document_id"]), {})[str(row["key"])] = str(row["value"])
    return found


def documents_matching(store: Store, key: str | None, text: str) -> list[int]:
    """Ids of documents whose metadata (under `key`, or any key) contains `text`, case-insensitively."""
    pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    sql = "SELECT DISTINCT document_id FROM document_metadata WHERE value LIKE ? ESCAPE '\\'"
    params: list = [pattern]
    if key:
        sql += " AND key = ?"
        params.append(key)
    return [int(r["document_id"]) for r in store.query(sql + " ORDER BY document_id", params)]


def documents_under(store: Store, parent_path: str) -> list[tuple[int, str]]:
    """(id, path) of the documents stored as parts of `parent_path` (paths `parent#...`)."""
    prefix = parent_path + "#"
    rows = store.query("SELECT id, path FROM documents WHERE substr(path, 1, ?) = ? ORDER BY id",
                       (len(prefix), prefix))
    return [(int(r["id"]), str(r["path"])) for r in rows]
