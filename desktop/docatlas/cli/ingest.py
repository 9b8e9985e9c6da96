"""The commands that change the graph: ingest, delete, rebuild, and extracting stale chunks again."""

from __future__ import annotations

import argparse
import sys

from docatlas.cli.common import UserError, remember_models, workspace_models, writing
from docatlas.cli.guards import clean
from docatlas.cli.health import print_run_health
from docatlas.cli.progress import run_with_progress
from docatlas.core.base.progress import Progress
from docatlas.core.base.settings import Settings
from docatlas.core.graph.summarize import ModelSummarizer
from docatlas.core.ingest.loaders import SUPPORTED_SUFFIXES, walk
from docatlas.core.jobs.ingest import remove_document
from docatlas.core.jobs.reextract import rederive, requeue_chunks
from docatlas.core.prompts import store as prompt_store
from docatlas.core.storage.database import Store
from docatlas.core.storage.read_models import chunk_failure_reasons

# The model client (httpx) and the vector code (numpy) are imported by the
# commands that use them: `ingest` loads them while its first file is read (`jobs.ingest`).


def check_ingest(args: argparse.Namespace) -> None:
    """Refuse paths that do not exist, or hold no document DocAtlas reads, before anything is created."""
    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        raise UserError(f"{clean(missing[0])} does not exist; check the path and try again.")
    if next(walk(list(args.paths)), None) is None:  # walked only as far as the first entry
        shown = ", ".join(clean(p) for p in args.paths[:3]) + (" ..." if len(args.paths) > 3 else "")
        raise UserError(f"{shown} holds no document DocAtlas reads ({', '.join(sorted(SUPPORTED_SUFFIXES))}); "
                        "give a folder or file with one of these.")


def cmd_ingest(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """Add documents and extract their graph, with a progress bar on a terminal."""
    settings = settings.with_overrides(
        query__community_reports=args.reports,
        profile=args.profile, model=args.model, embed_model=args.embed_model,
        parallel=args.parallel, gleaning=args.gleaning, chunk_tokens=args.chunk_tokens,
        overlap_tokens=args.overlap_tokens, extraction__entity_types=args.entity_types,
        extraction__language=args.language, extraction__loop_check=args.loop_check,
    )
    chunking = settings.chunking
    if args.overlap_tokens is None and chunking.overlap_tokens * 2 >= chunking.chunk_tokens:
        settings = settings.with_overrides(overlap_tokens=chunking.chunk_tokens // 10)
    elif chunking.chunk_tokens < 50 or chunking.overlap_tokens * 2 >= chunking.chunk_tokens:
        raise UserError("Chunks need at least 50 tokens and an overlap under half a chunk; "
                        "change --chunk-tokens or --overlap-tokens.")
    with writing(args, store, "ingest"):
        remember_models(store, settings)
        last = run_with_progress(store, args.paths, settings)
    if last is None:
        return 0
    _print_failures(store, last)
    unfinished_embeddings = _print_warnings(store, last)
    counts = store.counts()
    print(
        f"{last.documents_total} documents ({last.documents_skipped} unchanged, {last.documents_failed} failed), "
        f"{last.chunks_done} chunks extracted"
        + (f" ({last.chunks_copied} copies reused, no call)" if last.chunks_copied else "")
        + f", {last.chunks_failed} chunks failed, "
        f"{last.calls} model calls ({last.cached_calls} from cache); "
        f"graph: {counts['entities']} entities, {counts['relations']} relations."
    )
    if last.chunks_failed:
        print("Some chunks failed (the reasons are above); run the same command again to retry them.",
              file=sys.stderr)
    health_exit = print_run_health(store, printed=[clean(w) for w in last.warnings] + list(last.warnings))
    return 1 if (last.chunks_failed or last.documents_failed or unfinished_embeddings) else health_exit


def _print_failures(store: Store, last: Progress) -> None:
    """Each document that failed, then why chunks failed, grouped by reason (this run's and earlier ones)."""
    for _path, reason in last.failures:
        print(f"failed: {clean(reason)}", file=sys.stderr)
    for reason, count in chunk_failure_reasons(store):
        chunks = f"{count} chunk{'' if count == 1 else 's'}"
        print(f"{chunks} failed: {clean(reason) or 'no reason was recorded'}", file=sys.stderr)


def _print_warnings(store: Store, last: Progress) -> bool:
    """Print the run's warnings at the end; True when embeddings were left undone by one."""
    for warning in last.warnings:
        print(f"warning: {clean(warning)}", file=sys.stderr)
    if not (last.warnings and last.stage == "done"):
        return False
    from docatlas.core.retrieval.embed import pending_count

    return pending_count(store) > 0


def cmd_delete(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """Remove one document and re-derive what it touched."""
    with writing(args, store, "delete"):
        found = store.find_documents(args.document)
        if not found:
            raise UserError(f"No document matches {clean(repr(args.document))}; `docatlas status` lists them.")
        if len(found) > 1:
            raise UserError(f"{len(found)} documents match {clean(repr(args.document))}; give its id or full path.")
        remove_document(store, found[0].id)
    print(f"Deleted {clean(found[0].path)}.")
    return 0


def cmd_rebuild(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """Re-derive the whole graph from the stored records and cached replies."""
    from docatlas.core.llm.ollama import OllamaLLM
    from docatlas.core.llm.replay import ReplayLLM

    settings = workspace_models(args, store, settings)
    llm = OllamaLLM(settings.ollama, cache=store) if args.summarize else ReplayLLM(settings.ollama, store)
    summarize = ModelSummarizer(llm, settings.extraction, template=prompt_store.merge_template(store, "summarize"),
                                parallel=settings.ollama.parallel if args.summarize else 1)
    try:
        with writing(args, store, "rebuild"):
            report = rederive(store, settings, summarize=summarize, reparse=not args.keep_records)
    finally:
        if isinstance(llm, OllamaLLM):
            llm.close()
    print(f"Re-derived the graph from {report.chunks} chunks ({report.reparsed} re-read from cached replies, "
          f"{report.changed} changed, {report.kept} kept their records); "
          f"graph: {report.entities} entities, {report.relations} relations.")
    if summarize.calls or summarize.cached:
        print(f"{summarize.cached} summaries from the cache, {summarize.calls} written by the model.")
    if summarize.skipped:
        print(f"{summarize.skipped} long descriptions were joined, not summarised; run "
              "`docatlas rebuild --summarize` with Ollama running to summarise them.", file=sys.stderr)
    return 0


def cmd_reextract(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """Extract again the chunks built with other extraction prompts than the ones in use."""
    from docatlas.core.llm.ollama import OllamaLLM

    settings = workspace_models(args, store, settings)
    with writing(args, store, "re-extract"):
        ids = prompt_store.stale_chunks(store, settings.extraction.profile)
        if not ids:
            print("Every extracted chunk was built with the extraction prompts in use; nothing to do.")
            return 0
        summarize = ModelSummarizer(lambda: OllamaLLM(settings.ollama, cache=store), settings.extraction,
                                    template=prompt_store.merge_template(store, "summarize"))
        requeue_chunks(store, ids, summarize)
        last = run_with_progress(store, [], settings)
    done = last.chunks_done if last is not None else 0
    print(f"Extracted {done} of {len(ids)} chunks again with the prompts in use.")
    return 0 if done == len(ids) else 1

