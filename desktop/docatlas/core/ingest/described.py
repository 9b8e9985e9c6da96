"""Descriptions from the text: a record the model left undescribed quotes its chunk's sentence.

The `lean` profile asks the model only for names, types and links, the cheapest reply that
still makes a graph; the `typing` profile's records never had model-written descriptions. A
record with no description takes the first sentence of its chunk that names it (a relation:
the first naming both ends), trimmed to `SENTENCE_CHARS`, so the graph, the answer context
and the merge summaries read the document's own words. A record with a description of its
own keeps it; a record no sentence names (found only by a fuzzy match) stays undescribed.
Pure functions, no I/O.
"""

from __future__ import annotations

from dataclasses import replace

from docatlas.core.base.mentions import sentences_naming
from docatlas.core.base.records import EntityRecord, RelationRecord
from docatlas.core.base.sentences import sentence_spans

SENTENCE_CHARS = 300


def first_sentence(chunk: str, spans: list[tuple[int, int]], *groups: list[str]) -> str:
    """The first sentence of the chunk naming every group, trimmed; empty when none does."""
    found = sentences_naming(chunk, *groups, sentences=spans)
    if not found:
        return ""
    start, end = found[0]
    return " ".join(chunk[start:end].split())[:SENTENCE_CHARS]


def describe_from_text(chunk: str, entities: list[EntityRecord],
                       relations: list[RelationRecord]) -> tuple[list[EntityRecord], list[RelationRecord]]:
    """The records, each one without a description given its chunk's sentence naming it."""
    if all(e.description for e in entities) and all(r.description for r in relations):
        return entities, relations
    spans = sentence_spans(chunk)
    entities = [e if e.description else replace(e, description=first_sentence(chunk, spans, [e.name]))
                for e in entities]
    relations = [r if r.description else replace(r, description=first_sentence(chunk, spans, [r.source], [r.target]))
                 for r in relations]
    return entities, relations
