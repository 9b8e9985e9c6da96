"""The query prompts: the bundled `resources/prompts/query/*.txt`, or the workspace's own.

`fill(name, **values)` renders the bundled text; given `prompts` (the workspace's texts,
from `docatlas.core.prompts.store.query_prompts`), it renders the user's text instead.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from docatlas.core.prompts.catalog import prompts_root, render

QUERY_PROMPTS = ("keywords", "answer", "community_report", "community_map")


@functools.cache
def template(name: str) -> str:
    """The bundled text of one query prompt."""
    if name not in QUERY_PROMPTS:
        raise ValueError(f"There is no query prompt called {name!r}.")
    return (prompts_root() / "query" / f"{name}.txt").read_text(encoding="utf-8")


def fill(name: str, prompts: Mapping[str, str] | None = None, **values: str) -> str:
    """Render a query prompt (the workspace's text when `prompts` holds it) with its placeholders filled."""
    text = prompts[name] if prompts is not None and name in prompts else template(name)
    return render(text, values)
