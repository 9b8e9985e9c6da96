"""Reviewing ungrounded records: accepting one makes it part of the graph.

An accepted entity is added to its chunk's records; an accepted relation is added with
both its ends (an end that was itself ungrounded in that chunk is accepted with it). The
record stays marked accepted, so extracting or re-deriving the chunk again keeps it.
"""

from __future__ import annotations

from docatlas.core.base.keys import entity_key
from docatlas.core.graph.merge import Summarizer, rebuild
from docatlas.core.storage import ungrounded
from docatlas.core.storage.database import Store
from docatlas.core.storage.lock import writes_workspace


class NoSuchRecord(ValueError):
    """The id names no ungrounded record waiting for review."""


@writes_workspace("accept")
def accept_record(store: Store, record_id: int, summarize: Summarizer | None = None) -> ungrounded.UngroundedRow:
    """Accept one ungrounded record into the graph; returns it. Raises NoSuchRecord."""
    record = ungrounded.get_ungrounded(store, record_id)
    if record is None or record.accepted:
        raise NoSuchRecord(f"There is no ungrounded record {record_id} waiting for review; "
                           "`docatlas ungrounded` lists them.")
    if record.kind == "entity":
        entities = [(entity_key(record.name), record.name, record.type, record.description)]
        relation = None
    else:
        ends = {entity_key(record.name), entity_key(record.target)}
        entities = [(entity_key(r.name), r.name, r.type, r.description)
                    for r in ungrounded.chunk_entity_records(store, record.chunk_id)
                    if not r.accepted and entity_key(r.name) in ends]
        relation = (entity_key(record.name), entity_key(record.target))
    ungrounded.accept(store, record, entities, relation)
    touched = {key for key, *_ in entities} | set(relation or ())
    rebuild(store, touched, summarize)
    return record
