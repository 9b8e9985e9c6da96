"""The commands that change the graph: ingest, delete, rebuild, and extracting stale chunks again."""

from __future__ import annotations

import argparse
import sys

from docatlas.cli.common import UserError, writing
from docatlas.cli.progress import run_with_progress
from docatlas.core.base.settings import Settings
from docatlas.core.graph.summarize import ModelSummarizer
from docatlas.core.jobs.ingest import remove_document
from docatlas.core.jobs.reextract import rederive, requeue_chunks
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.llm.replay import ReplayLLM
from docatlas.core.prompts import store as prompt_store
from docatlas.core.storage.database import Store


def cmd_ingest(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """Add documents and extract their graph, with a progress bar on a terminal."""
    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        raise UserError(f"{missing[0]} does not exist; check the path and try again.")
    settings = settings.with_overrides(
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
        last = run_with_progress(store, args.paths, settings)
    if last is None:
        return 0
    for _path, reason in last.failures:
        print(f"failed: {reason}", file=sys.stderr)
    for warning in last.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    counts = store.counts()
    print(
        f"{last.documents_total} documents ({last.documents_skipped} unchanged, {last.documents_failed} failed), "
        f"{last.chunks_done} chunks extracted, {last.chunks_failed} chunks failed, "
        f"{last.calls} model calls ({last.cached_calls} from cache); "
        f"graph: {counts['entities']} entities, {counts['relations']} relations."
    )
    if last.chunks_failed:
        print("Some chunks failed; run the same command again to retry them.", file=sys.stderr)
    return 1 if (last.chunks_failed or last.documents_failed) else 0


def cmd_delete(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """Remove one document and re-derive what it touched."""
    with writing(args, store, "delete"):
        found = store.find_documents(args.document)
        if not found:
            raise UserError(f"No document matches {args.document!r}; `docatlas status` lists them.")
        if len(found) > 1:
            raise UserError(f"{len(found)} documents match {args.document!r}; give its id or full path.")
        remove_document(store, found[0].id)
    print(f"Deleted {found[0].path}.")
    return 0


def cmd_rebuild(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """Re-derive the whole graph from the stored records and cached replies."""
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

