"""The extraction-health lines `ingest` ends with and `status` shows per document."""

from __future__ import annotations

import sys

MOSTLY_EMPTY_EXIT = 3  # the run finished, but most chunks gave no entity: not a plain success


def print_run_health(store, printed: list[str] | tuple[str, ...] = ()) -> int:
    """Print the last run's health summary; the exit code it calls for (0, or MOSTLY_EMPTY_EXIT).

    `printed` holds the warnings already shown, so the verdict is not said twice."""
    from docatlas.core.jobs.run_health import last_run_health  # not for `status`, which only needs the lines

    summary = last_run_health(store)
    if not summary or not summary.get("chunks"):
        return 0
    print(f"Extraction health: {summary['chunks'] - summary['no_entity']} of {summary['chunks']} chunks gave "
          f"entities; {summary['grounded']} records grounded in the text, {summary['ungrounded']} held back "
          f"for review, {summary['remapped']} types remapped, {summary['cut']} replies cut off, "
          f"{summary['retries']} asked again (profile {summary['profile']}).")
    if summary.get("warning") and summary["warning"] not in printed:
        print(summary["warning"], file=sys.stderr)
    return MOSTLY_EMPTY_EXIT if summary.get("mostly_empty") else 0


def document_health_line(figures: dict | None) -> str:
    """`health: 3 of 4 chunks gave entities, ...` for `status`, or "" before any figures."""
    if not figures or not figures.get("chunks"):
        return ""
    line = (f"health: {figures['chunks'] - figures['no_entity']} of {figures['chunks']} chunks gave entities, "
            f"{figures['grounded']} grounded, {figures['ungrounded']} ungrounded, {figures['remapped']} types "
            f"remapped, {figures['cut']} cut, {figures['retries']} retries, replies: {figures['formats'] or '-'}")
    return line
