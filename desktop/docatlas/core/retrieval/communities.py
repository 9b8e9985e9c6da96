"""Community reports: the communities of the graph, each with a report written by the model.

`refresh_communities` re-detects communities only when the graph changed, keeps every
community whose members and their texts are unchanged (same signature), and asks the
model for reports on new or changed ones, largest first, up to a cap. It is a generator
of `Progress`, cancellable between reports; a stopped run resumes where it left off. The
communities come from `docatlas.core.graph.communities`, the detection the explorer's
colours use too.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

from docatlas.core.base.errors import Cancelled, LLMError, ModelNotFound, OllamaTimeout, OllamaUnreachable
from docatlas.core.base.progress import Progress
from docatlas.core.base.settings import Settings
from docatlas.core.base.tokens import count_tokens
from docatlas.core.graph import communities as detection
from docatlas.core.llm.protocol import LLM
from docatlas.core.prompts.store import query_prompts
from docatlas.core.retrieval.budget import truncate
from docatlas.core.retrieval.jsonreply import parse_json_object, string_list
from docatlas.core.retrieval.templates import fill
from docatlas.core.storage import communities as stored
from docatlas.core.storage.database import Store

log = logging.getLogger("docatlas.retrieval")

REPORT_SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "summary": {"type": "string"},
        "findings": {"type": "array", "items": {
            "type": "object",
            "properties": {"summary": {"type": "string"}, "explanation": {"type": "string"}},
            "required": ["summary", "explanation"]}},
        "rating": {"type": "number"},
        "rating_explanation": {"type": "string"},
    },
    "required": ["title", "summary", "findings", "rating", "rating_explanation"],
}


@dataclass(frozen=True)
class Report:
    """What the model wrote about one community."""

    title: str
    summary: str
    findings: tuple[dict, ...] = field(default=())  # {"summary", "explanation"}
    rating: float | None = None
    rating_explanation: str = ""


def detect(store: Store, min_size: int = 2) -> list[list[str]]:
    """Communities of the relation graph, largest first, members sorted: the one detection
    the explorer colours by too (`docatlas.core.graph.communities`)."""
    return detection.detect(store, min_size)


def signatures(store: Store, groups: list[list[str]]) -> list[str]:
    """A fingerprint per community over its members' texts and its inner relations."""
    where = {key: i for i, group in enumerate(groups) for key in group}
    hashes = [hashlib.sha256() for _ in groups]
    for group, h in zip(groups, hashes):
        h.update("\x1e".join(group).encode("utf-8"))
    for key, name, description in stored.entity_texts(store):
        if key in where:
            hashes[where[key]].update(f"\x1e{key}\x1f{name}\x1f{description}".encode())
    for s, t, kw, desc in stored.relation_texts(store):
        i = where.get(s)
        if i is not None and where.get(t) == i:
            hashes[i].update(f"\x1d{s}\x1f{t}\x1f{kw}\x1f{desc}".encode())
    return [h.hexdigest()[:40] for h in hashes]


def sync_communities(store: Store, min_size: int) -> tuple[int, int]:
    """Re-detect and store communities; return (kept, new). Unchanged ones keep their reports."""
    groups = detect(store, max(2, min_size))
    signs = signatures(store, groups)
    existing = stored.signatures(store)
    wanted = dict(zip(signs, groups))
    stored.replace_communities(store, [cid for sig, cid in existing.items() if sig not in wanted],
                               {sig: group for sig, group in wanted.items() if sig not in existing})
    kept = sum(1 for sig in wanted if sig in existing)
    return kept, len(wanted) - kept


def report_prompt(store: Store, community_id: int, settings: Settings) -> str:
    """The report prompt for one community: its best-connected entities and strongest relations."""
    budget = settings.query.report_budget
    relations = stored.inner_relations(store, community_id)
    degree: dict[str, int] = {}
    for r in relations:
        degree[r.source_key] = degree.get(r.source_key, 0) + 1
        degree[r.target_key] = degree.get(r.target_key, 0) + 1
    entities = stored.member_entities(store, community_id)
    entities.sort(key=lambda e: (-degree.get(e.key, 0), e.name))
    entity_lines = _within([f"- {e.name} ({e.type}): {' '.join(e.description.split())}" for e in entities],
                           budget // 2)
    relation_lines = _within([f"- {r.source or r.source_key} -- {r.target or r.target_key} "
                              f"({r.keywords}): {' '.join(r.description.split())}" for r in relations],
                             budget // 2)
    return fill("community_report", query_prompts(store), entities="\n".join(entity_lines) or "(none)",
                relations="\n".join(relation_lines) or "(none)", language=settings.extraction.language)


def _within(lines: list[str], budget: int) -> list[str]:
    out, used = [], 0
    for line in lines:
        line = truncate(line, max(40, budget // 4))
        cost = count_tokens(line) + 1
        if used + cost > budget:
            break
        out.append(line)
        used += cost
    return out


def parse_report(reply: str, fallback_title: str) -> Report:
    """A report from the model's reply; whatever is missing falls back to something plain."""
    data = parse_json_object(reply) or {}
    findings = []
    raw = data.get("findings") or data.get("key_findings") or []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict):
            summary = str(item.get("summary") or item.get("title") or "").strip()
            explanation = str(item.get("explanation") or item.get("detail") or "").strip()
        else:
            summary, explanation = str(item).strip(), ""
        if summary or explanation:
            findings.append({"summary": summary, "explanation": explanation})
    try:
        rating = float(data["rating"]) if data.get("rating") is not None else None
    except (TypeError, ValueError):
        rating = None
    summary = str(data.get("summary") or "").strip()
    if not data:
        summary = " ".join(reply.split())[:600]
    return Report(
        title=str(data.get("title") or "").strip() or fallback_title,
        summary=summary,
        findings=tuple(findings),
        rating=rating if rating is None else max(0.0, min(10.0, rating)),
        rating_explanation=" ".join(string_list(data.get("rating_explanation"))) if data else "",
    )


def _fallback_title(store: Store, community_id: int) -> str:
    return ", ".join(stored.best_known_names(store, community_id, 3)) or f"Community {community_id}"


def write_report(store: Store, community_id: int, report: Report, model: str) -> None:
    """Store a finished report."""
    stored.write_report(store, community_id, stored.ReportText(
        report.title, report.summary, json.dumps(list(report.findings), ensure_ascii=False), report.rating,
        report.rating_explanation), model)


def refresh_communities(store: Store, llm: LLM, settings: Settings,
                        cancel: threading.Event | None = None) -> Iterator[Progress]:
    """Bring communities and their reports up to date; yield Progress (stage "communities",
    step_done of step_total reports; "cancelled" when stopped, a failure as a warning).

    Yields nothing when the graph has not changed and every report (within the cap) exists.
    """
    q = settings.query
    detected = False
    if store.get_meta("communities_version") != store.get_meta("graph_version", "0"):
        yield Progress(stage="communities", message="Finding communities")
        kept, new = sync_communities(store, q.community_min_size)
        detected = True
        log.info("communities: %d kept, %d new", kept, new)
    todo = stored.reports_to_write(store, q.community_max_reports)
    if not todo:
        if detected:
            yield Progress(stage="communities", message="Community reports are up to date")
        return
    total = len(todo)

    def progress(done: int, message: str, stage: str = "communities", warning: str = "") -> Progress:
        return Progress(stage=stage, step_done=done, step_total=total, message=message,
                        warnings=(warning,) if warning else ())

    yield progress(0, f"{total} community reports to write")
    stopped = "Stopped; the other reports are written next time."
    for done, community_id in enumerate(todo, 1):
        if cancel is not None and cancel.is_set():
            yield progress(done - 1, stopped, "cancelled")
            return
        try:
            reply = llm.chat([{"role": "user", "content": report_prompt(store, community_id, settings)}],
                             format=REPORT_SCHEMA, num_predict=1024, cancel=cancel)
        except Cancelled:
            yield progress(done - 1, stopped, "cancelled")
            return
        except (OllamaUnreachable, OllamaTimeout, ModelNotFound) as exc:
            yield progress(done - 1, exc.message, warning=exc.message)
            return
        except LLMError as exc:
            stored.fail_report(store, community_id, exc.message)
            yield progress(done, exc.message)
            continue
        write_report(store, community_id, parse_report(reply.text, _fallback_title(store, community_id)),
                     llm.model)
        yield progress(done, f"Wrote community report {done} of {total}")
