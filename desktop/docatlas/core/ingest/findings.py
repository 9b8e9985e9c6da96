"""What a chunk's extraction found besides its records, to and from the store.

`record_findings` stores a chunk's health figures, type notes and ungrounded records (call it
before the chunk is marked done, so a finished chunk always has them); `run_totals` sums the
figures of a set of chunks; `grounding_context` gives what grounding needs for a chunk
(the names the user accepted).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

from docatlas.core.base.keys import entity_key
from docatlas.core.base.records import EntityRecord
from docatlas.core.ingest.extract import ChunkExtraction
from docatlas.core.ingest.health import HEALTH_FIELDS, ChunkHealth, HealthTotals, totals
from docatlas.core.storage import health as stored_health
from docatlas.core.storage import ungrounded as stored_ungrounded
from docatlas.core.storage.database import Store


def record_findings(store: Store, chunk_id: int, result: ChunkExtraction) -> None:
    """Store the chunk's figures, the types it remapped and the records its text does not back."""
    rows = []
    for item in result.ungrounded:
        record = item.record
        if isinstance(record, EntityRecord):
            rows.append(("entity", record.name, record.type, "", "", record.description, None, item.reason))
        else:
            rows.append(("relation", record.source, "", record.target, record.keywords, record.description,
                         record.strength, item.reason))
    stored_ungrounded.put_extraction_findings(store, chunk_id, asdict(result.health),
                                              [asdict(n) for n in result.type_notes], rows)


def accepted_keys(store: Store, chunk_id: int) -> set[str]:
    """Entity keys the user accepted for the chunk: grounding counts them as backed."""
    return {entity_key(n) for n in stored_ungrounded.accepted_names(store, chunk_id)}


def run_totals(store: Store, chunk_ids: Sequence[int]) -> HealthTotals:
    """The figures of these chunks summed (chunks without figures are not counted)."""
    figures = stored_health.chunk_health(store, chunk_ids).values()
    return totals(ChunkHealth(**{k: f[k] for k in HEALTH_FIELDS}) for f in figures)
