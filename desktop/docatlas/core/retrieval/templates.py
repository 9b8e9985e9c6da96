"""The query prompts (`resources/prompts/query/*.txt`): loaded once, filled by placeholder."""

from __future__ import annotations

import functools

from docatlas.core.prompts import prompts_root, render

QUERY_PROMPTS = ("keywords", "answer", "community_report", "community_map")


@functools.cache
def template(name: str) -> str:
    """The bundled text of one query prompt."""
    if name not in QUERY_PROMPTS:
        raise ValueError(f"There is no query prompt called {name!r}.")
    return (prompts_root() / "query" / f"{name}.txt").read_text(encoding="utf-8")


def fill(name: str, **values: str) -> str:
    """Render a query prompt with its placeholders filled."""
    return render(template(name), values)
