"""The shown part of the graph (the canvas's filters applied) as GraphML or GEXF, for Gephi and friends.

Qt-free: it reads the model and the look and writes XML with `xml.etree`, which escapes
every name. Positions and colours go along, so Gephi opens the file looking like the view.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from docatlas.gui.graph.model import GraphModel
from docatlas.gui.graph.query import Look, edges_among

SHOWN_FORMATS = ("graphml", "gexf")


def _parts(model: GraphModel, look: Look) -> tuple[np.ndarray, np.ndarray]:
    return np.nonzero(look.shown)[0], np.nonzero(edges_among(model, look.shown))[0]


def _graphml(model: GraphModel, look: Look) -> ET.Element:
    root = ET.Element("graphml", xmlns="http://graphml.graphdrawing.org/xmlns")
    for key, target, kind in (("name", "node", "string"), ("type", "node", "string"), ("community", "node", "int"),
                              ("x", "node", "double"), ("y", "node", "double"), ("weight", "edge", "double"),
                              ("keywords", "edge", "string")):
        ET.SubElement(root, "key", {"id": key, "for": target, "attr.name": key, "attr.type": kind})
    graph = ET.SubElement(root, "graph", edgedefault="undirected")
    nodes, edges = _parts(model, look)
    for i in nodes.tolist():
        node = ET.SubElement(graph, "node", id=model.keys[i])
        values = (model.names[i], model.types[i], int(model.community[i]), *model.xy[i].tolist())
        for key, value in zip(("name", "type", "community", "x", "y"), values):
            ET.SubElement(node, "data", key=key).text = str(value)
    for e in edges.tolist():
        edge = ET.SubElement(graph, "edge", source=model.keys[model.sources[e]], target=model.keys[model.targets[e]])
        ET.SubElement(edge, "data", key="weight").text = repr(float(model.weights[e]))
        ET.SubElement(edge, "data", key="keywords").text = model.keywords[e]
    return root


def _gexf(model: GraphModel, look: Look) -> ET.Element:
    root = ET.Element("gexf", {"xmlns": "http://gexf.net/1.3", "xmlns:viz": "http://gexf.net/1.3/viz",
                               "version": "1.3"})
    graph = ET.SubElement(root, "graph", defaultedgetype="undirected")
    attributes = ET.SubElement(graph, "attributes", {"class": "node"})
    ET.SubElement(attributes, "attribute", id="type", title="type", type="string")
    ET.SubElement(attributes, "attribute", id="community", title="community", type="integer")
    nodes_el, edges_el = ET.SubElement(graph, "nodes"), ET.SubElement(graph, "edges")
    nodes, edges = _parts(model, look)
    for i in nodes.tolist():
        node = ET.SubElement(nodes_el, "node", id=model.keys[i], label=model.names[i])
        values = ET.SubElement(node, "attvalues")
        ET.SubElement(values, "attvalue", {"for": "type", "value": model.types[i]})
        ET.SubElement(values, "attvalue", {"for": "community", "value": str(int(model.community[i]))})
        colour = look.colours[int(look.colour_class[i])]
        ET.SubElement(node, "viz:color", r=str(int(colour[1:3], 16)), g=str(int(colour[3:5], 16)),
                      b=str(int(colour[5:7], 16)))
        x, y = model.xy[i].tolist()
        ET.SubElement(node, "viz:position", x=repr(x), y=repr(-y), z="0.0")
        ET.SubElement(node, "viz:size", value=repr(float(look.radius[i])))
    for n, e in enumerate(edges.tolist()):
        ET.SubElement(edges_el, "edge", id=str(n), source=model.keys[model.sources[e]],
                      target=model.keys[model.targets[e]], weight=repr(float(model.weights[e])),
                      label=model.keywords[e])
    return root


def write_shown(model: GraphModel, look: Look, fmt: str, path: Path) -> Path:
    """Write the shown nodes and the edges among them to `path`; returns it."""
    if fmt not in SHOWN_FORMATS:
        raise ValueError(f"Unknown format {fmt!r}.")
    tree = ET.ElementTree(_graphml(model, look) if fmt == "graphml" else _gexf(model, look))
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)
    return Path(path)
