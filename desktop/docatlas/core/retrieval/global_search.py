"""Community (global) search, map/reduce over community reports.

Map: the reports most related to the question are read in batches that fit the window,
and the model lists the points in them that help, each scored 0-100. Reduce: the best
points, within the context budget, become the material of the ordinary answer prompt.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass

import numpy as np

from docatlas.core.base.errors import Cancelled, LLMError, ModelNotFound, OllamaTimeout, OllamaUnreachable
from docatlas.core.base.settings import Settings
from docatlas.core.base.tokens import count_tokens
from docatlas.core.llm.protocol import LLM
from docatlas.core.prompts.store import query_prompts
from docatlas.core.retrieval import vectors
from docatlas.core.retrieval.budget import free_room, truncate
from docatlas.core.retrieval.context import ChunkItem, PointItem, ReportItem, load_chunks
from docatlas.core.retrieval.jsonreply import parse_json_object, string_list
from docatlas.core.retrieval.keywords import content_words
from docatlas.core.retrieval.search import fuse
from docatlas.core.retrieval.templates import fill
from docatlas.core.storage import communities as stored
from docatlas.core.storage import context as lookups
from docatlas.core.storage.database import Store

log = logging.getLogger("docatlas.retrieval")

MAP_SCHEMA = {
    "type": "object",
    "properties": {"points": {"type": "array", "items": {
        "type": "object",
        "properties": {"point": {"type": "string"}, "score": {"type": "number"},
                       "reports": {"type": "array", "items": {"type": "string"}}},
        "required": ["point", "score"]}}},
    "required": ["points"],
}
MAP_REPLY = 600  # tokens a map reply may take
MAX_MEMBERS = 400  # members read per report when looking for supporting chunks


@dataclass(frozen=True)
class MapResult:
    """What the map step found: the reports read and the points scored above zero."""

    reports: tuple[ReportItem, ...]
    points: tuple[PointItem, ...]
    warnings: tuple[str, ...] = ()


def has_reports(store: Store) -> bool:
    """True when at least one community report is written."""
    return stored.has_reports(store)


def rank_reports(store: Store, question: str, query: np.ndarray | None, model: str, limit: int,
                 min_similarity: float) -> list[stored.ReportRow]:
    """The reports most related to the question: by vector and by shared words, then by rating."""
    rows = stored.written_reports(store)
    by_id = {r.id: r for r in rows}
    by_vector = [int(ref) for ref, _ in vectors.search(store, "community", model, query, limit, min_similarity)
                 if ref.isdigit() and int(ref) in by_id]
    words = {w.casefold() for w in content_words(question)}
    overlap = []
    for r in rows:
        text = {w.casefold() for w in content_words(f"{r.title} {r.summary} {r.findings}")}
        hits = len(words & text)
        if hits:
            overlap.append((hits, r.id))
    by_words = [cid for _, cid in sorted(overlap, key=lambda x: -x[0])]
    chosen = fuse([by_vector, by_words], limit)
    chosen += [r.id for r in rows if r.id not in chosen][: max(0, limit - len(chosen))]
    return [by_id[cid] for cid in chosen]


def report_text(label: str, row: stored.ReportRow, cap: int) -> str:
    """A report as the map prompt shows it."""
    findings = json.loads(row.findings or "[]")
    lines = [f"[{label}] {row.title}", row.summary]
    lines += [f"- {f.get('summary', '')}: {f.get('explanation', '')}".rstrip(": ") for f in findings]
    return truncate("\n".join(line for line in lines if line), cap)


def map_reports(store: Store, llm: LLM, question: str, rows: list[stored.ReportRow], settings: Settings, window: int,
                cancel: threading.Event | None) -> MapResult:
    """Ask the model, batch by batch, for the points of the reports that help answer the question."""
    reports = tuple(ReportItem(f"K{i}", r.id, r.title, r.summary, r.rating,
                               tuple(stored.member_keys(store, r.id, MAX_MEMBERS)))
                    for i, r in enumerate(rows, 1))
    prompts = query_prompts(store)  # the workspace's own map prompt, if the user changed it
    room = free_room(window, [{"role": "user", "content": fill("community_map", prompts, question=question,
                                                               reports="")}],
                     MAP_REPLY)
    texts = [report_text(rep.label, row, max(100, room // 2)) for rep, row in zip(reports, rows)]
    batches: list[list[str]] = [[]]
    used = 0
    for text in texts:
        cost = count_tokens(text) + 2
        if batches[-1] and used + cost > room:
            batches.append([])
            used = 0
        batches[-1].append(text)
        used += cost
    points: list[tuple[str, float, tuple[str, ...]]] = []
    warnings: list[str] = []
    for batch in batches:
        if not batch:
            continue
        prompt = fill("community_map", prompts, question=question, reports="\n\n".join(batch))
        try:
            reply = llm.chat([{"role": "user", "content": prompt}], format=MAP_SCHEMA, num_predict=MAP_REPLY,
                             cancel=cancel)
        except (Cancelled, OllamaUnreachable, OllamaTimeout, ModelNotFound):
            raise
        except LLMError as exc:
            log.warning("a map step failed: %s", exc.message)
            warnings.append(exc.message)
            continue
        points += parse_points(reply.text)
    points.sort(key=lambda p: -p[1])
    items = tuple(PointItem(f"P{i}", text, score, refs) for i, (text, score, refs) in enumerate(points, 1))
    return MapResult(reports, items, tuple(warnings))


def parse_points(reply: str) -> list[tuple[str, float, tuple[str, ...]]]:
    """(point, score, report labels) from a map reply; points scored 0 are dropped."""
    data = parse_json_object(reply) or {}
    raw = data.get("points") or data.get("answer") or []
    out = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict):
            continue
        text = str(item.get("point") or item.get("description") or item.get("text") or "").strip()
        try:
            score = float(item.get("score", 50))
        except (TypeError, ValueError):
            score = 50.0
        if text and score > 0:
            out.append((text, min(score, 100.0), tuple(string_list(item.get("reports")))))
    return out


def supporting_chunks(store: Store, result: MapResult, limit: int, cap: int) -> list[ChunkItem]:
    """Chunks that mention the most members of the reports the kept points came from."""
    used = {label for p in result.points for label in p.reports} or {r.label for r in result.reports}
    keys = list(dict.fromkeys(k for r in result.reports if r.label in used for k in r.member_keys))
    if not keys or limit <= 0:
        return []
    return load_chunks(store, lookups.chunks_mentioning(store, keys, limit), cap)
