"""Questions the documents cannot answer: "not in your documents", with no references.

Two ways a question is known to be unanswerable:

- every name it asks about (capitalised words, "Zelda Quorn") is in no entity and no
  chunk of the workspace: answered at once, without a model call;
- the model, told to reply "This is not in your documents." when the material does not
  hold the answer, says so and cites nothing: its answer keeps no references, so no
  document is shown as if it supported one.
"""

from __future__ import annotations

import re

from docatlas.core.base.keys import entity_key
from docatlas.core.retrieval.keywords import named_things
from docatlas.core.storage import context as lookups
from docatlas.core.storage import fulltext as stored
from docatlas.core.storage.database import Store

DECLINE_MARK = "not in your documents"
WORD = re.compile(r"[^\W_]+", re.UNICODE)


def _phrase(name: str) -> str | None:
    words = [w.casefold() for w in WORD.findall(name)]
    return '"' + " ".join(words) + '"' if words else None


def is_known(store: Store, name: str) -> bool:
    """True when an entity has this name or a chunk contains it as a phrase."""
    if lookups.entity_texts(store, [entity_key(name)]):
        return True
    phrase = _phrase(name)
    if phrase is None:
        return True
    try:
        return any(stored.count_matches(store, index, phrase, 1) for index in ("chunks_fts", "entities_fts"))
    except stored.ExpressionRefused:
        return True  # cannot tell: let retrieval and the model decide


def unknown_names(store: Store, question: str) -> list[str]:
    """The question's names when it names things and none of them is anywhere in the workspace, else []."""
    names = named_things(question)
    if not names or any(is_known(store, n) for n in names):
        return []
    return names


def absent_answer(names: list[str]) -> str:
    """The fixed answer for names the documents never mention."""
    quoted = ", ".join(f'"{n}"' for n in names)
    return f"This is not in your documents: none of them mentions {quoted}."


def declined(answer: str, cited: list[str]) -> bool:
    """True when the answer says the documents do not hold it and cites nothing."""
    return DECLINE_MARK in answer.casefold() and not cited
