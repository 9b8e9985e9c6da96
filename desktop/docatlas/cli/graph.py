"""The commands that read or curate the graph: export, status and merge suggestions.

Each imports the graph code it needs when it runs: `status` loads no graph, model or export code.
"""

from __future__ import annotations

import argparse
import json
import sys

from docatlas.cli.common import UserError, writing
from docatlas.cli.guards import clean
from docatlas.cli.health import document_health_line
from docatlas.core.base.settings import Settings
from docatlas.core.base.text import json_for_terminal
from docatlas.core.storage import document_list, scan_pages
from docatlas.core.storage import metadata as stored_metadata
from docatlas.core.storage.database import Store
from docatlas.core.storage.health import document_health


def cmd_export(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """Write the graph in one of the export formats; `-` writes it to standard output."""
    from docatlas.core.graph.export import export, write_export

    if str(args.out) == "-":
        if args.format == "csv":
            raise UserError("csv writes a folder of three files, not one stream; give a folder name, "
                            "or use --format json with -.")
        write_export(store, args.format, sys.stdout.buffer)
        sys.stdout.flush()
        return 0
    try:
        out = export(store, args.format, args.out)
    except OSError as exc:
        raise UserError(f"Could not write {clean(args.out)} ({exc.strerror}); choose another place.") from exc
    print(clean(out))
    return 0


def cmd_status(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """Print what the workspace holds."""
    documents = []
    health = document_health(store)
    meta = stored_metadata.all_metadata(store)
    wanted = metadata_filter(store, args.where) if getattr(args, "where", None) else None
    rows = store.documents()
    scans = scan_pages.summaries(store, [doc.id for doc in rows])
    counts = document_list.chunk_totals(store)  # kept per document: no chunk is read
    parents = document_list.parents(store)
    for doc in rows:
        if wanted is not None and doc.id not in wanted:
            continue
        kept = counts.get(doc.id, {})
        documents.append({
            "id": doc.id, "path": doc.path, "title": doc.title, "kind": doc.kind, "status": doc.status,
            "error": doc.error, "chunks": kept.get("chunks", 0), "chunks_done": kept.get("done", 0),
            "health": health.get(doc.id), "metadata": meta.get(doc.id, {}),
            "part_of": parents.get(doc.id),
            "ocr": _ocr_report(store, doc.id) if doc.id in scans else None,
        })
    report = {"workspace": str(store.path.parent), **store.counts(), "documents": documents}
    if args.json:
        print(json_for_terminal(json.dumps(report, indent=2, ensure_ascii=False)))
        return 0
    print(f"Workspace {clean(report['workspace'])}")
    for d in documents:
        line = f"  [{d['id']}] {d['status']:<8} {d['chunks_done']}/{d['chunks']} chunks  {clean(d['path'])}"
        print(line + (f"\n        {clean(d['error'])}" if d["error"] else ""))
        if health_line := document_health_line(d["health"]):
            print(f"        {clean(health_line)}")
        if d["metadata"]:
            print("        " + clean(" · ".join(f"{k}: {v}" for k, v in d["metadata"].items())))
        if d["id"] in scans:
            print(f"        {scans[d['id']].sentence()}")
    unread = f" ({report['concept_entities']} of them names the model has not read yet)" \
        if report["concept_entities"] else ""
    print(f"{report['entities']} entities{unread}, {report['relations']} relations, "
          f"{report['chunks_pending']} chunks pending, {report['chunks_failed']} failed"
          + (f", {report['copies_reused']} copies reused (near-duplicates that took their original's records)."
             if report["copies_reused"] else "."))
    return 0


def metadata_filter(store: Store, where: str) -> set[int]:
    """The documents `--where KEY=TEXT` (or `--where TEXT`, any key) selects."""
    key, _, text = where.partition("=") if "=" in where else ("", "", where)
    return set(stored_metadata.documents_matching(store, key.strip().lower() or None, text.strip()))


def _ocr_report(store: Store, document_id: int) -> dict:
    """OCR's confidence per page of one document, and their mean."""
    pages = scan_pages.pages(store, document_id)
    return {"confidence": round(sum(c for _, c in pages) / len(pages), 4),
            "pages": [{"page": page, "confidence": confidence} for page, confidence in pages]}


def cmd_suggestions(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """List likely duplicate entities, or accept or reject one suggestion."""
    from docatlas.core.graph.suggest import accept, get_suggestion, reject, suggest_merges
    from docatlas.core.graph.summarize import ModelSummarizer
    from docatlas.core.llm.replay import ReplayLLM
    from docatlas.core.prompts import store as prompt_store

    if args.accept or args.reject:
        try:
            with writing(args, store, "suggestions"):
                suggestion = get_suggestion(store, args.accept or args.reject)
                if args.reject:
                    reject(store, suggestion.id)
                    print(clean(f"Kept {suggestion.a_name} and {suggestion.b_name} apart."))
                    return 0
                summarize = ModelSummarizer(ReplayLLM(settings.ollama, store), settings.extraction,
                                            template=prompt_store.merge_template(store, "summarize"))
                survivor = accept(store, suggestion.id, summarize=summarize)
        except ValueError as exc:
            raise UserError(str(exc)) from exc
        kept, gone = ((suggestion.a_name, suggestion.b_name) if survivor == suggestion.a_key
                      else (suggestion.b_name, suggestion.a_name))
        print(clean(f"Merged {gone} into {kept}."))
        return 0
    found = suggest_merges(store)
    if args.json:
        print(json_for_terminal(json.dumps([{"id": s.id, "first": s.a_name, "second": s.b_name, "score": s.score,
                                             "reason": s.reason} for s in found], indent=2, ensure_ascii=False)))
        return 0
    for s in found:
        print(clean(f"  [{s.id}] {s.a_name}  <->  {s.b_name}  ({s.reason}, {s.score:.2f})"))
    print(f"{len(found)} merge suggestions" + ("; accept one with `docatlas suggestions --accept ID`."
                                               if found else "."))
    return 0

