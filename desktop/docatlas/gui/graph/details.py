"""What the side panel shows about an entity or a relation: read models of the storage layer.

The queries live in `docatlas.core.storage.graph_reads`; the explorer imports them from here.
"""

from __future__ import annotations

from docatlas.core.storage.graph_reads import (
    EXCERPT_CHARS,
    NEIGHBOUR_LIMIT,
    PASSAGE_LIMIT,
    EntityDetails,
    Passage,
    RelationDetails,
    entity_details,
    relation_details,
)

__all__ = ["EXCERPT_CHARS", "NEIGHBOUR_LIMIT", "PASSAGE_LIMIT", "EntityDetails", "Passage", "RelationDetails",
           "entity_details", "relation_details"]
