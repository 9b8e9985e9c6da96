"""The context of one question: typed items within token budgets, and its prompt text.

Items carry labels (E1, R1, C1, K1, P1) that the answer prompt asks the model to cite,
and that references and the GUI use to point back at the sources.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace

from docatlas.core.base.concepts import MODEL
from docatlas.core.base.settings import QuerySettings
from docatlas.core.base.tokens import count_tokens
from docatlas.core.retrieval.budget import split, truncate
from docatlas.core.retrieval.keywords import Keywords
from docatlas.core.retrieval.retrieve import PROVENANCE, Found, retrieve
from docatlas.core.retrieval.search import QueryVectors
from docatlas.core.storage import context as lookups
from docatlas.core.storage.database import Store


def _one_line(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class EntityItem:
    """An entity in the context; `chunk_ids` are chunks it was extracted from."""

    label: str
    key: str
    name: str
    type: str
    description: str
    chunk_ids: tuple[int, ...] = ()
    layer: str = MODEL  # CONCEPT: a name found in text the model has not read yet

    def line(self) -> str:
        """How the prompt shows it."""
        return f"[{self.label}] {self.name} ({self.type}): {_one_line(self.description)}"


@dataclass(frozen=True)
class RelationItem:
    """A relation in the context; `chunk_ids` are chunks that state it."""

    label: str
    source_key: str
    target_key: str
    source: str
    target: str
    keywords: str
    description: str
    weight: float
    chunk_ids: tuple[int, ...] = ()
    layer: str = MODEL  # CONCEPT: two names one sentence names, in text the model has not read yet

    def line(self) -> str:
        """How the prompt shows it."""
        return (f"[{self.label}] {self.source} -- {self.target} ({_one_line(self.keywords)}): "
                f"{_one_line(self.description)}")


@dataclass(frozen=True)
class ChunkItem:
    """A document excerpt in the context, with where it comes from."""

    label: str
    id: int
    document_id: int
    path: str
    title: str
    idx: int
    page_start: int | None
    page_end: int | None
    text: str
    tokens: int = 0  # of the text, as stored at chunking time

    def line(self) -> str:
        """How the prompt shows it."""
        return f"[{self.label}] {self.title}{page_label(self.page_start, self.page_end)}:\n{self.text.strip()}"


@dataclass(frozen=True)
class ReportItem:
    """A community report read by a community (map/reduce) question."""

    label: str
    id: int
    title: str
    summary: str
    rating: float | None
    member_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class PointItem:
    """A point a map step found in the reports, with its score (0-100)."""

    label: str
    text: str
    score: float
    reports: tuple[str, ...] = ()

    def line(self) -> str:
        """How the prompt shows it."""
        sources = f" (from {', '.join(self.reports)})" if self.reports else ""
        return f"[{self.label}] {_one_line(self.text)}{sources}"


@dataclass(frozen=True)
class Context:
    """Everything the answer prompt receives for one question."""

    mode: str
    entities: tuple[EntityItem, ...] = ()
    relations: tuple[RelationItem, ...] = ()
    chunks: tuple[ChunkItem, ...] = ()
    reports: tuple[ReportItem, ...] = ()
    points: tuple[PointItem, ...] = ()
    text: str = ""
    tokens: int = 0
    notes: tuple[str, ...] = field(default=())

    @property
    def empty(self) -> bool:
        """True when nothing was found for the prompt."""
        return not self.text.strip()

    def to_json(self) -> dict:
        """The `context` of `query --json` (reports and points only in community mode)."""
        data: dict = {
            "entities": [asdict(e) for e in self.entities],
            "relations": [asdict(r) for r in self.relations],
            "chunks": [asdict(c) for c in self.chunks],
        }
        if self.reports or self.points:
            data["reports"] = [asdict(r) for r in self.reports]
            data["points"] = [asdict(p) for p in self.points]
        return data

    @classmethod
    def from_json(cls, mode: str, data: dict, text: str = "", tokens: int = 0) -> Context:
        """Rebuild a context from `to_json` output (the answer cache)."""
        def items(kind: type, rows: list[dict], tuples: Sequence[str]) -> tuple:
            return tuple(kind(**{k: tuple(v) if k in tuples else v for k, v in row.items()}) for row in rows)

        return cls(
            mode=mode,
            entities=items(EntityItem, data.get("entities", []), ("chunk_ids",)),
            relations=items(RelationItem, data.get("relations", []), ("chunk_ids",)),
            chunks=items(ChunkItem, data.get("chunks", []), ()),
            reports=items(ReportItem, data.get("reports", []), ("member_keys",)),
            points=items(PointItem, data.get("points", []), ("reports",)),
            text=text, tokens=tokens,
        )


def page_label(start: int | None, end: int | None) -> str:
    """", page 3" or ", pages 3-4" (nothing for unpaged text)."""
    if start is None:
        return ""
    return f", page {start}" if end in (None, start) else f", pages {start}-{end}"


def render(entities: Sequence[EntityItem], relations: Sequence[RelationItem], chunks: Sequence[ChunkItem],
           points: Sequence[PointItem] = ()) -> str:
    """The context as the answer prompt shows it."""
    parts = []
    if points:
        parts.append("Findings from the community reports:\n" + "\n".join(p.line() for p in points))
    if entities:
        parts.append("Entities:\n" + "\n".join(e.line() for e in entities))
    if relations:
        parts.append("Relations:\n" + "\n".join(r.line() for r in relations))
    if chunks:
        parts.append("Excerpts from the documents:\n" + "\n\n".join(c.line() for c in chunks))
    return "\n\n".join(parts)


def fill_budget(items: Sequence, budget: int, relabel: Callable[[object, int], object],
                skip_misfits: bool = False) -> tuple[list, int]:
    """Take items in order while their lines fit `budget`; return them (relabelled) and tokens used.

    The first item that does not fit ends the list, unless `skip_misfits` (then a shorter
    one further down may still get in).
    """
    taken: list = []
    used = 0
    for item in items:
        candidate = relabel(item, len(taken) + 1)
        cost = _cost(candidate)
        if used + cost > budget:
            if skip_misfits:
                continue
            break
        taken.append(candidate)
        used += cost
    return taken, used


def _cost(item: object) -> int:
    """Tokens of an item's line; a chunk's stored count spares encoding its text again."""
    if isinstance(item, ChunkItem) and item.tokens:
        header = f"[{item.label}] {item.title}{page_label(item.page_start, item.page_end)}:"
        return item.tokens + count_tokens(header) + 3
    return count_tokens(item.line()) + 1  # type: ignore[attr-defined]


def build_context(store: Store, mode: str, question: str, keywords: Keywords | None,
                  vectors: QueryVectors, settings: QuerySettings, room: int) -> Context:
    """Retrieve for `mode` and assemble the context within `room` tokens (and the part budgets)."""
    found = retrieve(store, mode, question, keywords, vectors, settings)
    return assemble(store, mode, found, settings, room)


def assemble(store: Store, mode: str, found: Found, settings: QuerySettings, room: int) -> Context:
    """Turn ranked ids into a context that fits: entities, relations, then chunks with the rest."""
    budgets = split(settings, mode, room)
    entity_cap = max(32, budgets.entities // 3)  # no single description takes the whole part
    entities, e_used = fill_budget(
        load_entities(store, found.entities[: settings.top_k * 2], found.sources, entity_cap),
        budgets.entities, lambda e, n: _relabel(e, f"E{n}"))
    relation_cap = max(32, budgets.relations // 3)
    relations, r_used = fill_budget(
        load_relations(store, found.relations[: settings.top_k * 2], found.sources, relation_cap),
        budgets.relations, lambda r, n: _relabel(r, f"R{n}"))
    chunk_room = min(room - e_used - r_used, budgets.total - e_used - r_used)
    chunk_cap = max(64, budgets.chunks // 2)
    chunks, _ = fill_budget(load_chunks(store, found.chunks[: settings.chunk_top_k * 3], chunk_cap),
                            chunk_room, lambda c, n: _relabel(c, f"C{n}"), skip_misfits=True)
    text = render(entities, relations, chunks)
    tokens = count_tokens(text)
    while tokens > room and (chunks or relations or entities):  # rounding slack: drop from the end
        (chunks or relations or entities).pop()
        text = render(entities, relations, chunks)
        tokens = count_tokens(text)
    return Context(mode, tuple(entities), tuple(relations), tuple(chunks), text=text, tokens=tokens)


def _relabel(item, label: str):
    return replace(item, label=label)


def load_entities(store: Store, keys: Sequence[str], sources: dict, cap: int) -> list[EntityItem]:
    """Entity items in the order of `keys` (missing ones skipped), descriptions cut to `cap` tokens."""
    rows = lookups.entity_texts(store, keys)
    return [EntityItem("", k, rows[k].name, rows[k].type, truncate(rows[k].description, cap),
                       _provenance(sources, k, lambda: lookups.entity_chunk_ids(store, k, PROVENANCE)),
                       rows[k].layer) for k in keys if k in rows]


def load_relations(store: Store, pairs: Sequence[tuple[str, str]], sources: dict, cap: int) -> list[RelationItem]:
    """Relation items in the order of `pairs`, with endpoint names, descriptions cut to `cap` tokens."""
    texts = lookups.relation_texts(store, pairs)
    out = []
    for s, t in pairs:
        r = texts.get((s, t))
        if r is not None:
            out.append(RelationItem("", s, t, r.source, r.target, r.keywords, truncate(r.description, cap),
                                    r.weight,
                                    _provenance(sources, (s, t), lambda: lookups.relation_chunk_ids(store, s, t,
                                                                                                    PROVENANCE)),
                                    r.layer))
    return out


def _provenance(sources: dict, item: object, look_up) -> tuple[int, ...]:
    """The chunks an item was extracted from: the retrieval's own, else read now (a neighbour or
    a first-hop relation the retrieval ranked without reading its chunks), so a cited item
    always leads to the sentence that states it."""
    found = sources.get(item)
    return tuple((found if found else look_up())[:PROVENANCE])


def load_chunks(store: Store, ids: Sequence[int], cap: int) -> list[ChunkItem]:
    """Chunk items in the order of `ids`, with their document, text cut to `cap` tokens."""
    rows = lookups.chunk_sources(store, ids)
    out = []
    for i in ids:
        if i in rows:
            r = rows[i]
            text, tokens = r.text, r.tokens
            if not tokens or tokens > cap:
                text = truncate(text, cap)
                tokens = count_tokens(text)
            out.append(ChunkItem("", i, r.document_id, r.path, r.title, r.idx, r.page_start, r.page_end,
                                 text, tokens))
    return out
