"""Communities of the graph (Louvain) and a report on each, written by the model.

`refresh_communities` re-detects communities only when the graph changed, keeps every
community whose members and their texts are unchanged (same signature), and asks the
model for reports on new or changed ones, largest first, up to a cap. It is a generator
of progress dicts, cancellable between reports; a stopped run resumes where it left off.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import networkx as nx

from docatlas.core.base.errors import Cancelled, LLMError, ModelNotFound, OllamaTimeout, OllamaUnreachable
from docatlas.core.base.settings import Settings
from docatlas.core.base.tokens import count_tokens
from docatlas.core.llm.protocol import LLM
from docatlas.core.prompts.store import query_prompts
from docatlas.core.retrieval.budget import truncate
from docatlas.core.retrieval.jsonreply import parse_json_object, string_list
from docatlas.core.retrieval.templates import fill
from docatlas.core.storage.database import Store

log = logging.getLogger("docatlas.retrieval")

SEED = 7  # Louvain is randomised: a fixed seed keeps communities (and their reports) stable
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
    """Communities of the relation graph, largest first, members sorted.

    Louvain (weighted, seeded) runs on each connected component by itself, built in sorted
    order, so a change in one part of the graph leaves the communities elsewhere as they were.
    """
    whole = nx.Graph()
    whole.add_weighted_edges_from(
        (s, t, max(float(w), 1e-6)) for s, t, w in store.conn.execute(
            "SELECT source_key, target_key, weight FROM relations ORDER BY source_key, target_key"))
    groups: list[list[str]] = []
    for component in nx.connected_components(whole):
        if len(component) < min_size:
            continue
        nodes = sorted(component)
        part = nx.Graph()
        part.add_nodes_from(nodes)
        part.add_weighted_edges_from(sorted((s, t, d["weight"]) for s, t, d in whole.edges(nodes, data=True)))
        found = nx.community.louvain_communities(part, weight="weight", seed=SEED) if len(nodes) > 3 else [nodes]
        groups += [sorted(g) for g in found if len(g) >= min_size]
    return sorted(groups, key=lambda g: (-len(g), g[0]))


def signatures(store: Store, groups: list[list[str]]) -> list[str]:
    """A fingerprint per community over its members' texts and its inner relations."""
    where = {key: i for i, group in enumerate(groups) for key in group}
    hashes = [hashlib.sha256() for _ in groups]
    for group, h in zip(groups, hashes):
        h.update("\x1e".join(group).encode("utf-8"))
    for key, name, description in store.conn.execute("SELECT key, name, description FROM entities ORDER BY key"):
        if key in where:
            hashes[where[key]].update(f"\x1e{key}\x1f{name}\x1f{description}".encode())
    for s, t, kw, desc in store.conn.execute(
            "SELECT source_key, target_key, keywords, description FROM relations ORDER BY source_key, target_key"):
        i = where.get(s)
        if i is not None and where.get(t) == i:
            hashes[i].update(f"\x1d{s}\x1f{t}\x1f{kw}\x1f{desc}".encode())
    return [h.hexdigest()[:40] for h in hashes]


def sync_communities(store: Store, min_size: int) -> tuple[int, int]:
    """Re-detect and store communities; return (kept, new). Unchanged ones keep their reports."""
    groups = detect(store, max(2, min_size))
    signs = signatures(store, groups)
    existing = {r["signature"]: r["id"] for r in store.query("SELECT id, signature FROM communities")}
    wanted = dict(zip(signs, groups))
    now = time.time()
    with store.transaction() as conn:
        stale = [(cid,) for sig, cid in existing.items() if sig not in wanted]
        conn.executemany("DELETE FROM communities WHERE id = ?", stale)
        for sig, group in wanted.items():
            if sig in existing:
                continue
            cid = conn.execute("INSERT INTO communities(signature, size, updated_at) VALUES (?, ?, ?)",
                               (sig, len(group), now)).lastrowid
            conn.executemany("INSERT INTO community_members(community_id, key) VALUES (?, ?)",
                             [(cid, key) for key in group])
        conn.execute("INSERT INTO meta(key, value) VALUES ('communities_version', ?) "
                     "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                     (store.get_meta("graph_version", "0"),))
    kept = sum(1 for sig in wanted if sig in existing)
    return kept, len(wanted) - kept


def report_prompt(store: Store, community_id: int, settings: Settings) -> str:
    """The report prompt for one community: its best-connected entities and strongest relations."""
    budget = settings.query.report_budget
    relations = store.query(
        "SELECT r.source_key, r.target_key, r.keywords, r.description, r.weight, a.name AS s, b.name AS t "
        "FROM relations r JOIN community_members m1 ON m1.key = r.source_key AND m1.community_id = ? "
        "JOIN community_members m2 ON m2.key = r.target_key AND m2.community_id = ? "
        "LEFT JOIN entities a ON a.key = r.source_key LEFT JOIN entities b ON b.key = r.target_key "
        "ORDER BY r.weight DESC", (community_id, community_id))
    degree: dict[str, int] = {}
    for r in relations:
        degree[r["source_key"]] = degree.get(r["source_key"], 0) + 1
        degree[r["target_key"]] = degree.get(r["target_key"], 0) + 1
    entities = store.query("SELECT e.key, e.name, e.type, e.description FROM community_members m "
                           "JOIN entities e ON e.key = m.key WHERE m.community_id = ?", (community_id,))
    entities.sort(key=lambda e: (-degree.get(e["key"], 0), e["name"]))
    entity_lines = _within([f"- {e['name']} ({e['type']}): {' '.join(e['description'].split())}"
                            for e in entities], budget // 2)
    relation_lines = _within([f"- {r['s'] or r['source_key']} -- {r['t'] or r['target_key']} "
                              f"({r['keywords']}): {' '.join(r['description'].split())}" for r in relations],
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
    rows = store.query(
        "SELECT e.name FROM community_members m JOIN entities e ON e.key = m.key WHERE m.community_id = ? "
        "ORDER BY e.mentions DESC, e.name LIMIT 3", (community_id,))
    return ", ".join(r["name"] for r in rows) or f"Community {community_id}"


def write_report(store: Store, community_id: int, report: Report, model: str) -> None:
    """Store a finished report."""
    with store.transaction() as conn:
        conn.execute(
            "UPDATE communities SET status = 'done', title = ?, summary = ?, findings = ?, rating = ?, "
            "rating_explanation = ?, model = ?, error = NULL, updated_at = ? WHERE id = ?",
            (report.title, report.summary, json.dumps(list(report.findings), ensure_ascii=False),
             report.rating, report.rating_explanation, model, time.time(), community_id))


def refresh_communities(store: Store, llm: LLM, settings: Settings,
                        cancel: threading.Event | None = None) -> Iterator[dict]:
    """Bring communities and their reports up to date; yield {stage, done, total, message[, error]}.

    Yields nothing when the graph has not changed and every report (within the cap) exists.
    """
    q = settings.query
    detected = False
    if store.get_meta("communities_version") != store.get_meta("graph_version", "0"):
        yield {"stage": "communities", "done": 0, "total": 0, "message": "Finding communities"}
        kept, new = sync_communities(store, q.community_min_size)
        detected = True
        log.info("communities: %d kept, %d new", kept, new)
    todo = [r["id"] for r in store.query(
        "SELECT id, status FROM (SELECT id, status FROM communities ORDER BY size DESC, id LIMIT ?) "
        "WHERE status != 'done'", (max(0, q.community_max_reports),))]
    if not todo:
        if detected:
            yield {"stage": "reports", "done": 0, "total": 0, "message": "Community reports are up to date"}
        return
    total = len(todo)
    yield {"stage": "reports", "done": 0, "total": total, "message": f"{total} community reports to write"}
    for done, community_id in enumerate(todo, 1):
        if cancel is not None and cancel.is_set():
            yield {"stage": "cancelled", "done": done - 1, "total": total,
                   "message": "Stopped; the other reports are written next time."}
            return
        try:
            reply = llm.chat([{"role": "user", "content": report_prompt(store, community_id, settings)}],
                             format=REPORT_SCHEMA, num_predict=1024, cancel=cancel)
        except Cancelled:
            yield {"stage": "cancelled", "done": done - 1, "total": total,
                   "message": "Stopped; the other reports are written next time."}
            return
        except (OllamaUnreachable, OllamaTimeout, ModelNotFound) as exc:
            yield {"stage": "reports", "done": done - 1, "total": total, "message": exc.message,
                   "error": exc.message}
            return
        except LLMError as exc:
            with store.transaction() as conn:
                conn.execute("UPDATE communities SET status = 'failed', error = ? WHERE id = ?",
                             (exc.message, community_id))
            yield {"stage": "reports", "done": done, "total": total, "message": exc.message}
            continue
        write_report(store, community_id, parse_report(reply.text, _fallback_title(store, community_id)),
                     llm.model)
        yield {"stage": "reports", "done": done, "total": total,
               "message": f"Wrote community report {done} of {total}"}
