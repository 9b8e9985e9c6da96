"""Near-duplicate chunks (`chunk_copies`, migration 16) as a run and a re-extraction read them.

Which chunks are copies and of what (`storage.copy_finder` finds them as chunks are stored),
the statuses of originals, and a finished original's model records for its copies to take.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from docatlas.core.base.concepts import CONCEPT
from docatlas.core.storage.database import Store

FINISHED = ("done", "empty")


@dataclass(frozen=True)
class Original:
    """A finished original's records and what extracted them."""

    id: int
    status: str
    profile: str | None
    model: str | None
    text: str
    entities: list[tuple[str, str, str]]  # (name, type, description)
    relations: list[tuple[str, str, str, str, float]]  # (source, target, keywords, description, strength)


def originals_of(store: Store, chunk_ids: Sequence[int]) -> dict[int, tuple[int, ...]]:
    """copy id -> its originals (one, or two neighbours it straddles), for the copies among `chunk_ids`."""
    found: dict[int, tuple[int, ...]] = {}
    ids = list(chunk_ids)
    for at in range(0, len(ids), 500):
        part = ids[at:at + 500]
        for r in store.query(f"SELECT chunk_id, original_id, also_id FROM chunk_copies WHERE chunk_id IN "
                             f"({','.join('?' * len(part))})", part):
            found[r["chunk_id"]] = (r["original_id"],) + ((r["also_id"],) if r["also_id"] is not None else ())
    return found


def all_copies(store: Store) -> dict[int, tuple[int, ...]]:
    """Every copy id -> its originals, in copy order."""
    return {r["chunk_id"]: (r["original_id"],) + ((r["also_id"],) if r["also_id"] is not None else ())
            for r in store.query("SELECT chunk_id, original_id, also_id FROM chunk_copies ORDER BY chunk_id")}


def waiting_for(store: Store, original_ids: Sequence[int]) -> int | None:
    """The first of `original_ids` not finished yet (a copy waits for it); None when all are."""
    done = statuses(store, original_ids)
    return next((i for i in original_ids if done.get(i) not in FINISHED), None)


def finished_originals(store: Store, original_ids: Sequence[int]) -> Original | None:
    """The originals' model records together, when every one is finished; else None."""
    found = [finished_original(store, i) for i in original_ids]
    if not found or any(o is None for o in found):
        return None
    first = found[0]
    if len(found) == 1:
        return first
    return Original(first.id, "done" if any(o.status == "done" for o in found) else "empty", first.profile,
                    first.model, "\n".join(o.text for o in found), [e for o in found for e in o.entities],
                    [r for o in found for r in o.relations])


def statuses(store: Store, chunk_ids: Iterable[int]) -> dict[int, str]:
    """The status of each chunk of `chunk_ids` that exists."""
    found: dict[int, str] = {}
    ids = list(chunk_ids)
    for at in range(0, len(ids), 500):
        part = ids[at:at + 500]
        for r in store.query(f"SELECT id, status FROM chunks WHERE id IN ({','.join('?' * len(part))})", part):
            found[r["id"]] = r["status"]
    return found


def finished_original(store: Store, chunk_id: int) -> Original | None:
    """The original's model records, when it is finished (done or empty); else None."""
    rows = store.query("SELECT id, status, profile, model, text FROM chunks WHERE id = ?", (chunk_id,))
    if not rows or rows[0]["status"] not in FINISHED:
        return None
    row = rows[0]
    entities = [(r["name"], r["type"], r["description"]) for r in store.query(
        "SELECT name, type, description FROM chunk_entities WHERE chunk_id = ? AND layer != ? ORDER BY rowid",
        (chunk_id, CONCEPT))]
    relations = [(r["source"], r["target"], r["keywords"], r["description"], r["strength"]) for r in store.query(
        "SELECT source, target, keywords, description, strength FROM chunk_relations WHERE chunk_id = ? "
        "AND layer != ? ORDER BY rowid", (chunk_id, CONCEPT))]
    return Original(row["id"], row["status"], row["profile"], row["model"], row["text"], entities, relations)


def copy_count(store: Store) -> int:
    """How many chunks are copies of another."""
    return int(store.query("SELECT COUNT(*) AS n FROM chunk_copies")[0]["n"])
