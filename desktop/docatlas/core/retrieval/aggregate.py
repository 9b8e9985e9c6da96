"""Count and list questions answered from the graph itself, not by the model reading excerpts.

"How many organisations did Ardel Voss work with?" / "List everyone who visited Port Lis":
the entity the question names is found in the graph; its relations whose keywords or
description share the question's verb ("work", "visit") are kept, and those whose other
end has the asked type (organisation, person, place); the distinct other ends are the
answer. The answer says how it was computed and cites the relations it counted; the
context holds those relations and the excerpts they were extracted from. A question that
names no entity of the graph, or whose verb matches none of its relations, is left to the
ordinary retrieval (`compute` returns None).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from docatlas.core.base.keys import entity_key
from docatlas.core.base.settings import QuerySettings
from docatlas.core.retrieval.context import Context, assemble
from docatlas.core.retrieval.keywords import content_words, named_things, stem
from docatlas.core.retrieval.retrieve import CHUNKS_PER_ITEM, Found, rank_chunks
from docatlas.core.storage import context as lookups
from docatlas.core.storage.database import Store

COUNT = re.compile(r"\b(how many|number of|count)\b", re.IGNORECASE)
LIST = re.compile(r"^\s*(list|name|enumerate)\b|\b(everyone|everybody)\b"
                  r"|\ball (the |of the )?\w+ (who|whom|that|which)\b", re.IGNORECASE)
TYPE_FAMILIES = {  # a question word or an entity type -> the family it belongs to, by stem
    "organization": ("organi", "compan", "firm", "institut", "agenc", "business"),
    "person": ("person", "people", "everyone", "everybody", "human", "individual"),
    "location": ("locat", "place", "cit", "countr", "town", "region", "geo"),
}
TYPE_LABELS = {"organization": ("organization", "organizations"), "person": ("person", "people"),
               "location": ("place", "places"), None: ("entity", "entities")}
IGNORED = {"many", "number", "count", "everyone", "everybody", "enumerate", "name", "names", "every", "total",
           "connected", "linked", "related", "associated", "involved", "connection", "connections", "relation",
           "relations", "kind", "kinds", "different"}
MAX_RELATIONS = 2000  # relations of one entity read per question; the answer says when there were more


@dataclass(frozen=True)
class Aggregate:
    """The graph's answer to a count or list question."""

    kind: str  # "count" or "list"
    anchor_key: str
    anchor: str
    terms: tuple[str, ...]  # the verb's stems the relations matched
    family: str | None  # the asked type, None for any
    members: tuple[tuple[str, str], ...]  # (key, name) of the distinct other ends, by name
    relations: tuple[tuple[str, str], ...]  # the relations counted
    read: int = 0  # relations of the entity read
    total: int = 0  # relations of the entity in all


def family_of(word: str) -> str | None:
    """The type family a word (question word or entity type) belongs to."""
    w = word.casefold()
    for family, stems in TYPE_FAMILIES.items():
        if any(w.startswith(s) for s in stems):
            return family
    return None


def intent(question: str) -> str | None:
    """"count", "list" or None."""
    if COUNT.search(question):
        return "count"
    return "list" if LIST.search(question) else None


def compute(store: Store, question: str) -> Aggregate | None:
    """The graph's count or list for the question, or None when it is not one the graph can answer."""
    kind = intent(question)
    if kind is None:
        return None
    for name in named_things(question):
        key = entity_key(name)
        if not lookups.entity_texts(store, [key]):
            continue
        rest = [w for w in content_words(question.replace(name, " ")) if w.casefold() not in IGNORED]
        families = [f for w in rest if (f := family_of(w)) is not None]
        if re.search(r"\bwho(m)?\b", question, re.IGNORECASE) and not families:
            families = ["person"]
        terms = tuple(dict.fromkeys(stem(w) for w in rest if family_of(w) is None))
        if not terms:
            continue
        family = families[0] if families else None
        touching = sorted(lookups.relations_touching(store, [key]), key=lambda r: -r[2])
        found = _matching(store, key, [(s, t) for s, t, _ in touching[:MAX_RELATIONS]], terms, family)
        if found is not None:
            members, pairs = found
            return Aggregate(kind, key, lookups.entity_texts(store, [key])[key].name, terms, family, members, pairs,
                             min(len(touching), MAX_RELATIONS), len(touching))
    return None


def _matching(store: Store, key: str, pairs: list[tuple[str, str]], terms: tuple[str, ...],
              family: str | None) -> tuple[tuple, tuple] | None:
    """The members (other ends of the right type) and the relations among `pairs` that match the terms."""
    kept: list[tuple[str, str]] = []
    texts = lookups.relation_texts(store, pairs)
    for s, t in pairs:
        r = texts.get((s, t))
        if r is not None and set(terms) <= {stem(w) for w in re.findall(r"[^\W_]+", f"{r.keywords} {r.description}")}:
            kept.append((s, t))
    others = {(t if s == key else s) for s, t in kept}
    texts = lookups.entity_texts(store, sorted(others))
    members = {k: e.name for k, e in texts.items() if family is None or family_of(e.type) == family}
    kept = [(s, t) for s, t in kept if (t if s == key else s) in members]
    if not kept:
        return None
    return tuple(sorted(members.items(), key=lambda m: m[1].casefold())), tuple(kept)


def answer_text(agg: Aggregate, labels: dict[tuple[str, str], str]) -> str:
    """The answer: the count or the list, each member with the relation it was counted from, and how."""
    one, many = TYPE_LABELS[agg.family]
    cited = []
    for key, name in agg.members:
        refs = [labels[p] for p in agg.relations if key in p and p in labels]
        cited.append(f"{name} [{', '.join(refs)}]" if refs else name)
    n = len(agg.members)
    about = " / ".join(agg.terms)
    head = (f"{n} {one if n == 1 else many}: " if agg.kind == "count" else
            f"The {one if n == 1 else many} ({n}): ")
    return (f"{head}{'; '.join(cited)}.\n\n"
            f"How this was computed: counted in the knowledge graph, not by the model. These are the "
            f"{many} linked to {agg.anchor} by a relation whose keywords or description mention "
            f"\"{about}\"; each relation is cited, with the excerpts it was extracted from. "
            "A fact that extraction missed is not counted."
            + (f" Only the {agg.read} strongest of its {agg.total} relations were read." if agg.total > agg.read
               else ""))


def context_for(store: Store, agg: Aggregate, mode: str, settings: QuerySettings, room: int) -> Context:
    """The context shown with the answer: the entities and relations counted, their excerpts."""
    sources: dict = {p: lookups.relation_chunk_ids(store, p[0], p[1], CHUNKS_PER_ITEM) for p in agg.relations}
    found = Found(entities=[agg.anchor_key, *(k for k, _ in agg.members)], relations=list(agg.relations),
                  chunks=rank_chunks(list(agg.relations), sources), sources=sources)
    return assemble(store, mode, found, settings, room)
