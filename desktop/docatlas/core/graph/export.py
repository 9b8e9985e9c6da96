"""The stored graph as networkx, with its provenance, and export in json/graphml/gexf/csv."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    import networkx as nx

from docatlas.core.base.text import for_spreadsheet, json_for_terminal
from docatlas.core.graph.formats import EXPORT_FORMATS
from docatlas.core.storage import graph as graph_rows
from docatlas.core.storage.database import Store
from docatlas.core.storage.mentions import all_mentions

MENTIONS_PER_ITEM = 20  # quotes per entity or relation in the JSON export, in document order


def entity_sources(store: Store) -> dict[str, list[str]]:
    """For each entity key, the paths of the documents that mention it, in document order."""
    sources: dict[str, list[str]] = {}
    for key, path, *_ in graph_rows.entity_document_paths(store):
        sources.setdefault(key, []).append(path)
    return sources


def relation_sources(store: Store) -> dict[tuple[str, str], list[str]]:
    """For each undirected pair of keys, the paths of the documents that state it."""
    sources: dict[tuple[str, str], list[str]] = {}
    for a, b, path, *_ in graph_rows.relation_document_paths(store):
        sources.setdefault((a, b), []).append(path)
    return sources


def graph_data(store: Store, with_mentions: bool = False) -> dict:
    """The whole graph in the export contract's JSON shape (`mentions` only when asked)."""
    chunk_counts = graph_rows.chunk_counts(store)
    e_sources, r_sources = entity_sources(store), relation_sources(store)
    names = {}
    entities = []
    for row in graph_rows.entities_by_name(store):
        names[row["key"]] = row["name"]
        entities.append({"name": row["name"], "type": row["type"], "description": row["description"],
                         "layer": row["layer"], "sources": e_sources.get(row["key"], [])})
    relation_rows = graph_rows.relations_in_order(store)
    pairs = [(row["source_key"], row["target_key"]) for row in relation_rows]
    relations = [
        {"source": names.get(a, a), "target": names.get(b, b),
         "keywords": row["keywords"], "description": row["description"], "weight": row["weight"],
         "layer": row["layer"], "sources": r_sources.get((a, b), [])}
        for (a, b), row in zip(pairs, relation_rows)
    ]
    documents = [{"id": d.id, "path": d.path, "title": d.title, "chunks": chunk_counts.get(d.id, 0)}
                 for d in store.documents()]
    if with_mentions:
        _add_mentions(store, entities, list(names), relations, pairs)
    return {"documents": documents, "entities": entities, "relations": relations}


def _add_mentions(store: Store, entities: list[dict], keys: list[str], relations: list[dict],
                  pairs: list[tuple[str, str]]) -> None:
    """Give each entity and relation its mentions: `[{document, page, quote}]`."""
    found = all_mentions(store, MENTIONS_PER_ITEM)
    for entity, key in zip(entities, keys):
        entity["mentions"] = found.get((key, ""), [])
    for relation, (a, b) in zip(relations, pairs):
        either = found.get((a, b), []) + [m for m in found.get((b, a), []) if m not in found.get((a, b), [])]
        relation["mentions"] = either[:MENTIONS_PER_ITEM]


def to_networkx(data: dict) -> nx.Graph:
    """An undirected networkx graph of `graph_data` output; nodes keyed by display name."""
    import networkx as nx  # only here: a command that exports no graph file does not load it

    graph = nx.Graph()
    for e in data["entities"]:
        graph.add_node(e["name"], type=e["type"], description=e["description"], layer=e["layer"],
                       sources="; ".join(e["sources"]))
    for r in data["relations"]:
        graph.add_edge(r["source"], r["target"], keywords=r["keywords"], description=r["description"],
                       weight=float(r["weight"]), layer=r["layer"], sources="; ".join(r["sources"]))
    return graph


def export(store: Store, fmt: str, out: Path) -> Path:
    """Write the graph to `out` in `fmt`; csv writes a folder with entities.csv and relations.csv."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"Unknown export format {fmt!r}; choose one of: {', '.join(EXPORT_FORMATS)}.")
    data = graph_data(store, with_mentions=fmt == "json")
    out = Path(out)
    if fmt == "csv":
        out.mkdir(parents=True, exist_ok=True)
        _write_csv(out / "entities.csv", ["name", "type", "description", "layer", "sources"], data["entities"])
        _write_csv(out / "relations.csv", ["source", "target", "keywords", "description", "weight", "layer", "sources"],
                   data["relations"])
        _write_csv(out / "documents.csv", ["id", "path", "title", "chunks"], data["documents"])
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    if fmt == "json":
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    elif fmt == "graphml":
        _networkx().write_graphml(to_networkx(data), tmp)
    else:
        _networkx().write_gexf(to_networkx(data), tmp)
    os.replace(tmp, out)
    return out


def write_export(store: Store, fmt: str, handle: BinaryIO) -> None:
    """Write the graph in `fmt` (json, graphml or gexf: one stream) to an open binary handle."""
    if fmt == "csv" or fmt not in EXPORT_FORMATS:
        raise ValueError(f"{fmt!r} cannot be written to one stream; choose json, graphml or gexf.")
    data = graph_data(store, with_mentions=fmt == "json")
    if fmt == "json":
        text = json_for_terminal(json.dumps(data, ensure_ascii=False, indent=2))  # the same JSON, terminal-safe
        handle.write((text + "\n").encode("utf-8"))
    elif fmt == "graphml":
        _networkx().write_graphml(to_networkx(data), handle)
    else:
        _networkx().write_gexf(to_networkx(data), handle)


def _write_csv(path: Path, columns: list[str], rows: list[dict]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            # a name such as "=HYPERLINK(...)" is text to the reader, never a formula
            writer.writerow({k: for_spreadsheet("; ".join(v) if isinstance(v, list) else v)
                             for k, v in row.items()})


def _networkx():
    import networkx

    return networkx
