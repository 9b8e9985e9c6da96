"""Choosing what to merge with: a name box that completes existing names, says which entity the
text means, and a confirmation naming both entities before anything changes."""

from __future__ import annotations

from docatlas.gui.graph import query
from docatlas.gui.graph.edited_view import EditedView
from docatlas.gui.graph.model import GraphModel, fold


def named(model: GraphModel, text: str, exclude: str = "") -> str | None:
    """The key of the entity called exactly `text` (case and accents aside), other than `exclude`."""
    wanted = fold(text)
    hits = [model.keys[i] for i, name in enumerate(model.folded) if name == wanted and model.keys[i] != exclude]
    return hits[0] if hits else None


def matches(model: GraphModel, text: str, exclude: str) -> list[str]:
    """Keys the text may mean: the exact name alone if there is one, else every search hit."""
    exact = named(model, text, exclude)
    if exact is not None:
        return [exact]
    return [model.keys[i] for i in query.search(model, text) if model.keys[i] != exclude]


def _label(model: GraphModel, key: str) -> str:
    i = model.index[key]
    return f"{model.names[i]} ({model.types[i]}, {int(model.degree[i])} links)"


def describe(model: GraphModel, text: str, exclude: str) -> str:
    """What the merge box says about the text typed so far."""
    if not text.strip():
        return "Type a name; existing names are offered as you type."
    found = matches(model, text, exclude)
    if not found:
        return f"No entity called “{text.strip()}”."
    if len(found) == 1:
        return f"Will merge with: {_label(model, found[0])}"
    return f"{len(found)} entities match; you will choose one: " + "; ".join(model.names[model.index[k]]
                                                                           for k in found[:4])


def ask_other(explorer: EditedView, key: str) -> str | None:
    """Ask which entity to merge into `key`; None when the user cancels or nothing matches."""
    model, prompter = explorer.model, explorer.prompter
    name = model.names[model.index[key]]
    names = sorted({n for k, n in zip(model.keys, model.names) if k != key}, key=str.casefold)
    text = prompter.entity(explorer, "Merge with…", f"Merge which entity into “{name}”?", names,
                           lambda typed: describe(model, typed, key))
    if not text or not text.strip():
        return None
    found = matches(model, text, key)
    if not found:
        prompter.inform(explorer, "Merge", f"No entity called “{text.strip()}”.")
        return None
    if len(found) > 1:
        labels = [_label(model, k) for k in found]
        chosen = prompter.choose(explorer, "Merge with…", f"Several entities match “{text.strip()}”. Which one?",
                                 labels)
        if chosen is None:
            return None
        found = [found[labels.index(chosen)]]
    other = found[0]
    if not prompter.confirm(explorer, "Merge", f"Merge “{model.names[model.index[other]]}” into “{name}”? "
                            "Its mentions and relations move to it; Undo takes the merge back."):
        return None
    return other
