"""What a question's budgeted reading gave (`jobs.budgeted`), and how its answer uses it.

The reading extracts the chunks ranked best for the question that the model had not read yet.
When it could store them (no run held the workspace), their records are in the graph like any
run's, and the answer's retrieval finds them; the chunks and relations read are only put first.
When a run held the workspace, the records live in memory for this answer alone: they join its
context as relation lines (labelled like the graph's), beside the passages they came from.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from docatlas.core.base.concepts import CONCEPT, MODEL
from docatlas.core.base.keys import entity_key, relation_pair
from docatlas.core.base.records import RelationRecord
from docatlas.core.base.tokens import count_tokens
from docatlas.core.retrieval.context import Context, RelationItem, render
from docatlas.core.retrieval.retrieve import Found


@dataclass(frozen=True)
class ReadFirst:
    """The chunks a question read within its budget of model calls, and what they gave.

    `chunks`: the chunks read whose records bear on the question, most relevant first;
    `relations`: their relevant records as (chunk id, record), best first; `read`: every chunk
    read; `calls`: model calls answered by the model (a cached reply costs none); `stored`:
    the records are in the graph (False: a run held the workspace, they are in memory only);
    `notes`: what the person should know, one sentence each (the model's failure among them)."""

    budget: int
    calls: int = 0
    read: tuple[int, ...] = ()
    chunks: tuple[int, ...] = ()
    relations: tuple[tuple[int, RelationRecord], ...] = ()
    stored: bool = True
    stopped: bool = False
    notes: tuple[str, ...] = ()
    why: str = ""  # why nothing was read, when the reading knows better than "stopped" or "all read"

    def to_json(self) -> dict:
        """The `reading` of `query --json`."""
        return {"budget": self.budget, "calls": self.calls, "chunks_read": len(self.read),
                "chunks": list(self.read), "stored": self.stored, "stopped": self.stopped}

    def summary(self) -> str:
        """One sentence: what was read for this question, and where its records are."""
        if not self.read:
            why = self.why or ("it was stopped first" if self.stopped else
                               "the model has read every passage that matches it")
            return f"No passage was read for this question: {why}."
        passages = f"{len(self.read):,} passage{'s' if len(self.read) != 1 else ''}"
        spent = f"{self.calls:,} of {self.budget:,} model calls"
        where = ": their records are in the graph now" if self.stored else ""  # else the notes say why not
        stop = " (stopped early)" if self.stopped else ""
        return f"Read {passages} for this question{stop}, {spent}{where}."


def prefer_read(found: Found, read: ReadFirst | None) -> Found:
    """The retrieval with the chunks and relations read for the question first."""
    if read is None or not read.chunks:
        return found
    pairs = [relation_pair(entity_key(r.source), entity_key(r.target)) for _, r in read.relations]
    ends = [k for pair in pairs for k in pair]
    sources = dict(found.sources)
    for (chunk, _), pair in zip(read.relations, pairs):
        sources[pair] = list(dict.fromkeys([chunk, *sources.get(pair, [])]))
    return Found(entities=list(dict.fromkeys([*ends, *found.entities])),
                 relations=list(dict.fromkeys([*pairs, *found.relations])),
                 chunks=list(dict.fromkeys([*read.chunks, *found.chunks])), sources=sources)


def add_unstored(context: Context, read: ReadFirst | None, room: int, relation_budget: int) -> Context:
    """The context with the read records that are not in the graph (a run held it) as relation lines."""
    if read is None or read.stored or not read.relations or context.mode in ("naive", "community"):
        return context
    relations = list(context.relations)
    at = {(r.source_key, r.target_key): i for i, r in enumerate(relations)}
    used = 0
    for chunk, record in read.relations:
        pair = relation_pair(entity_key(record.source), entity_key(record.target))
        if pair in at and relations[at[pair]].layer != CONCEPT:
            continue  # the graph's own relation is there already
        label = relations[at[pair]].label if pair in at else f"R{len(relations) + 1}"
        item = RelationItem(label, pair[0], pair[1], record.source, record.target, record.keywords,
                            record.description, float(record.strength or 1.0), (chunk,), MODEL)
        cost = count_tokens(item.line()) + 1
        if used + cost > relation_budget:
            break
        used += cost
        if pair in at:  # a concept link of the same two names: the record read says more
            relations[at[pair]] = item
        else:
            at[pair] = len(relations)
            relations.append(item)
    chunks = list(context.chunks)
    text = render(context.entities, relations, chunks)
    tokens = count_tokens(text)
    while tokens > room and chunks:  # the read records take the room of the last passages
        chunks.pop()
        text = render(context.entities, relations, chunks)
        tokens = count_tokens(text)
    return replace(context, relations=tuple(relations), chunks=tuple(chunks), text=text, tokens=tokens)
