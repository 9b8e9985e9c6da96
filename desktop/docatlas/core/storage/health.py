"""Extraction health as stored: per chunk (`chunk_health`), per document, and per model
(`model_facts`: the learned token ratio, the profile `--profile auto` chose).

The figures are plain dicts of `ingest.health.HEALTH_FIELDS` here (storage sits below
ingest); the ingest layer turns them into its dataclasses.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

from docatlas.core.storage.database import Store

COUNTS = ("found", "grounded", "ungrounded", "grounded_entities", "remapped", "cut", "retries")


def put_chunk_health(conn, chunk_id: int, figures: dict, type_notes: Sequence[dict]) -> None:
    """Write one chunk's figures (inside the caller's transaction)."""
    conn.execute(
        "INSERT OR REPLACE INTO chunk_health(chunk_id, found, grounded, ungrounded, grounded_entities, "
        "remapped, cut, retries, reply_format, type_notes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (chunk_id, *(int(figures[c]) for c in COUNTS), str(figures.get("reply_format") or ""),
         json.dumps(list(type_notes), ensure_ascii=False)))


def chunk_health(store: Store, chunk_ids: Sequence[int]) -> dict[int, dict]:
    """Figures of the given chunks that have them: chunk id -> figures (type_notes parsed)."""
    found: dict[int, dict] = {}
    ids = [int(i) for i in chunk_ids]
    for start in range(0, len(ids), 500):
        part = ids[start:start + 500]
        rows = store.query(f"SELECT * FROM chunk_health WHERE chunk_id IN ({','.join('?' * len(part))})", part)
        for row in rows:
            figures = dict(row)
            figures["type_notes"] = json.loads(figures["type_notes"] or "[]")
            found[int(figures.pop("chunk_id"))] = figures
    return found


def document_health(store: Store, document_ids: Sequence[int] | None = None) -> dict[int, dict]:
    """Per document (all, or these): chunks with figures, chunks without a grounded entity, the sums.

    With `document_ids` the read goes through the chunks' (document_id, idx) index."""
    sums = ", ".join(f"COALESCE(SUM(h.{c}), 0) AS {c}" for c in COUNTS)
    ids = sorted({int(i) for i in document_ids}) if document_ids is not None else None
    if ids is not None and not ids:
        return {}
    where = f"WHERE c.document_id IN ({','.join('?' * len(ids))}) " if ids is not None else ""
    rows = store.query(
        f"SELECT c.document_id AS document_id, COUNT(h.chunk_id) AS chunks, "
        f"COALESCE(SUM(h.grounded_entities = 0), 0) AS no_entity, {sums}, "
        "GROUP_CONCAT(DISTINCT h.reply_format) AS formats "
        f"FROM chunks c JOIN chunk_health h ON h.chunk_id = c.id {where}GROUP BY c.document_id", ids or ())
    return {int(r["document_id"]): dict(r) for r in rows}


@dataclass(frozen=True)
class HealthMark:
    """A document's extraction health, as the Documents tab marks it."""

    chunks: int = 0  # chunks with figures
    no_entity: int = 0  # of those, chunks that gave no grounded entity
    ungrounded: int = 0
    cut: int = 0
    remapped: int = 0


def health_marks(store: Store, document_ids: Sequence[int] | None = None) -> dict[int, HealthMark]:
    """`document_health` as marks."""
    return {d: HealthMark(f["chunks"], f["no_entity"], f["ungrounded"], f["cut"], f["remapped"])
            for d, f in document_health(store, document_ids).items()}


def clear_chunk_health(conn, chunk_ids: Sequence[int]) -> None:
    """Forget the figures of chunks sent back to pending (inside the caller's transaction)."""
    conn.executemany("DELETE FROM chunk_health WHERE chunk_id = ?", [(int(i),) for i in chunk_ids])


def token_ratios(store: Store) -> dict[str, float]:
    """model -> learned ratio of its tokens to ours."""
    return {r["model"]: float(r["token_ratio"])
            for r in store.query("SELECT model, token_ratio FROM model_facts WHERE token_ratio IS NOT NULL")}


def put_token_ratios(store: Store, ratios: dict[str, float]) -> None:
    """Store learned ratios (kept per model, the higher one wins)."""
    if not ratios:
        return
    with store.transaction() as conn:
        conn.executemany(
            "INSERT INTO model_facts(model, token_ratio, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT(model) DO UPDATE SET token_ratio = MAX(COALESCE(token_ratio, 0), excluded.token_ratio), "
            "updated_at = excluded.updated_at",
            [(m, float(r), time.time()) for m, r in ratios.items() if r > 0])


def chosen_profile(store: Store, model: str) -> str | None:
    """The profile `--profile auto` chose for `model`, if it chose one."""
    rows = store.query("SELECT profile FROM model_facts WHERE model = ?", (model,))
    return rows[0]["profile"] if rows and rows[0]["profile"] else None


def put_chosen_profile(store: Store, model: str, profile: str, scores: dict[str, int]) -> None:
    """Remember the profile chosen for `model`, with every profile's score."""
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO model_facts(model, profile, profile_scores, updated_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(model) DO UPDATE SET profile = excluded.profile, "
            "profile_scores = excluded.profile_scores, updated_at = excluded.updated_at",
            (model, profile, json.dumps(scores), time.time()))
