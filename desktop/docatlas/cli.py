"""`docatlas`: the same jobs as the window, headless.

User mistakes and failures end with one sentence on stderr and a non-zero exit; the
full detail of anything unexpected goes to the log file, never a traceback on screen.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from docatlas import __version__
from docatlas.core.base import paths
from docatlas.core.base.errors import DocAtlasError
from docatlas.core.base.progress import Progress
from docatlas.core.base.settings import Settings, load_settings
from docatlas.core.base.tokens import count_tokens
from docatlas.core.graph.export import EXPORT_FORMATS, export
from docatlas.core.graph.suggest import accept, get_suggestion, reject, suggest_merges
from docatlas.core.graph.summarize import ModelSummarizer
from docatlas.core.jobs.ingest import index, remove_document
from docatlas.core.jobs.reextract import rederive, requeue_chunks
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.llm.replay import ReplayLLM
from docatlas.core.prompts import store as prompt_store
from docatlas.core.prompts.catalog import available_profiles, catalog, effective_text, prompt_keys, spec
from docatlas.core.prompts.importer import import_file, read_prompt_file
from docatlas.core.retrieval.answer import MODES, ask
from docatlas.core.retrieval.context import page_label
from docatlas.core.storage.database import Store

log = logging.getLogger("docatlas.cli")


class UserError(DocAtlasError):
    """A mistake in what the user asked for."""


def build_parser() -> argparse.ArgumentParser:
    """The command-line grammar."""
    parser = argparse.ArgumentParser(
        prog="docatlas",
        description="Turn private documents into a knowledge graph with a local Ollama model.",
    )
    parser.add_argument("--version", action="version", version=f"DocAtlas {__version__}")
    parser.add_argument("--data-dir", help="workspace folder (default: DOCATLAS_DATA_DIR or the user data dir)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    ingest = sub.add_parser("ingest", help="add documents or folders and extract their graph")
    ingest.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    ingest.add_argument("--profile", choices=available_profiles(), help="extraction prompt profile")
    ingest.add_argument("--model", help="Ollama chat model, e.g. qwen2.5:7b")
    ingest.add_argument("--embed-model", help="Ollama embedding model")
    ingest.add_argument("--parallel", type=_positive, help="model calls in flight at once (default 2)")
    ingest.add_argument("--gleaning", type=_non_negative, help="extra rounds asking for missed records")
    ingest.add_argument("--chunk-tokens", type=_positive, help="tokens per chunk (default 1200)")
    ingest.add_argument("--reports", action="store_true", default=None,
                        help="also write community reports (one model call per topic) for `query --mode community`")
    ingest.add_argument("--overlap-tokens", type=_non_negative, help="tokens shared by neighbouring chunks")
    ingest.add_argument("--entity-types", type=_entity_types, metavar="TYPES",
                        help="comma-separated entity types to ask for, e.g. person,organization,location")
    ingest.add_argument("--language", help="language of names and descriptions (default English)")
    ingest.add_argument("--loop-check", action=argparse.BooleanOptionalAction, default=None,
                        help="ask the model YES/NO before each gleaning round; NO ends them")

    exp = sub.add_parser("export", help="write the graph to a file")
    exp.add_argument("--format", choices=EXPORT_FORMATS, default="json")
    exp.add_argument("out", type=Path, metavar="OUT", help="output file (a folder for csv)")

    delete = sub.add_parser("delete", help="remove a document and what only it supported")
    delete.add_argument("document", metavar="DOC", help="document id, path, file name or title")

    query = sub.add_parser("query", help="ask a question; the answer streams with its sources")
    query.add_argument("text", nargs="+", metavar="TEXT", help="the question")
    query.add_argument("--mode", choices=MODES, help="retrieval mode (default: the setting, mix)")
    query.add_argument("--json", action="store_true", help="print answer, context and references as JSON")

    rebuild = sub.add_parser("rebuild", help="re-derive the graph from stored records; no document is read again")
    rebuild.add_argument("--keep-records", action="store_true",
                         help="do not re-parse the cached replies; only re-key and re-merge")
    rebuild.add_argument("--summarize", action="store_true",
                         help="let the model write the summaries that are not cached yet")

    suggestions = sub.add_parser("suggestions", help="entities that may be the same; nothing merges until accepted")
    decision = suggestions.add_mutually_exclusive_group()
    decision.add_argument("--accept", type=_positive, metavar="ID", help="merge the two entities of suggestion ID")
    decision.add_argument("--reject", type=_positive, metavar="ID", help="keep the two entities of suggestion ID apart")
    suggestions.add_argument("--json", action="store_true", help="machine-readable output")

    status = sub.add_parser("status", help="documents, chunks and graph size")
    status.add_argument("--json", action="store_true", help="machine-readable output")
    _prompts_parser(sub)
    return parser


def _prompts_parser(sub: argparse._SubParsersAction) -> None:
    prompts = sub.add_parser("prompts", help="the prompts DocAtlas sends: list, show, change, reset, share")
    verbs = prompts.add_subparsers(dest="verb", metavar="ACTION", required=True)
    listing = verbs.add_parser("list", help="every prompt, and whether this workspace changed it")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    show = verbs.add_parser("show", help="print a prompt (as used now, unless asked otherwise)")
    show.add_argument("key", metavar="KEY", help="e.g. lightrag/extract, merge/summarize, query/answer "
                                                "(or just extract: the profile in use)")
    which = show.add_mutually_exclusive_group()
    which.add_argument("--default", action="store_true", help="the default (what a reset gives)")
    which.add_argument("--version", type=_positive, metavar="N", help="saved version N")
    which.add_argument("--versions", action="store_true", help="list the saved versions with their notes")
    which.add_argument("--diff", type=_positive, metavar="N", help="what changed from version N to the prompt now")
    put = verbs.add_parser("set", help="change a prompt; the text comes from FILE, or stdin")
    put.add_argument("key", metavar="KEY")
    put.add_argument("file", nargs="?", default="-", metavar="FILE", help="a text file, or - for stdin")
    put.add_argument("--note", default="", help="why it changed (kept with the version)")
    reset = verbs.add_parser("reset", help="go back to the bundled default (kept as a version)")
    reset.add_argument("key", metavar="KEY")
    reset.add_argument("--note", default="")
    imp = verbs.add_parser("import", help="read a prompt set, or a LightRAG/GraphRAG prompt file (never run)")
    imp.add_argument("file", type=Path, metavar="FILE")
    imp.add_argument("--profile", choices=available_profiles(), help="extraction profile for its extraction prompts")
    imp.add_argument("--source", metavar="NAME", help="the dict to read when the file has several")
    imp.add_argument("--dry-run", action="store_true", help="only say what would be imported")
    exp = verbs.add_parser("export", help="write this workspace's prompts to one JSON file")
    exp.add_argument("out", metavar="OUT", help="a .json file, or - for stdout")
    verbs.add_parser("reextract", help="extract again the chunks built with older extraction prompts")


def _positive(text: str) -> int:
    value = _non_negative(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _entity_types(text: str) -> tuple[str, ...]:
    types = tuple(dict.fromkeys(t.strip().lower() for t in text.split(",") if t.strip()))
    if not types:
        raise argparse.ArgumentTypeError("give at least one type, e.g. person,organization")
    return types


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must not be negative")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `docatlas` command; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    log_file = paths.setup_logging()
    if args.command is None:
        return _open_window(args, parser)
    try:
        workspace = paths.data_dir(args.data_dir)
        settings = load_settings(paths.settings_path())
        with Store(paths.database_path(workspace)) as store:
            return COMMANDS[args.command](args, store, settings)
    except KeyboardInterrupt:
        print("Stopped; finished work is kept. Run the same command again to continue.", file=sys.stderr)
        return 130
    except DocAtlasError as exc:
        log.warning("%s failed: %s", args.command, exc.message)
        print(exc.message, file=sys.stderr)
        return 1
    except Exception:  # the last guard: the user gets a sentence, the log gets the detail
        log.exception("unexpected error in %s", args.command)
        print(f"DocAtlas hit an unexpected error; the details are in {log_file}.", file=sys.stderr)
        return 1


def _open_window(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    try:
        from docatlas.gui.app import main as gui_main
    except ImportError:
        parser.print_help()
        return 0
    return gui_main(data_dir=args.data_dir)


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
    last = run_with_progress(store, args.paths, settings)
    if last is None:
        return 0
    for _path, reason in last.failures:
        print(f"failed: {reason}", file=sys.stderr)
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


def cmd_export(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """Write the graph in one of the export formats."""
    try:
        out = export(store, args.format, args.out)
    except OSError as exc:
        raise UserError(f"Could not write {args.out} ({exc.strerror}); choose another place.") from exc
    print(out)
    return 0


def cmd_delete(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """Remove one document and re-derive what it touched."""
    found = store.find_documents(args.document)
    if not found:
        raise UserError(f"No document matches {args.document!r}; `docatlas status` lists them.")
    if len(found) > 1:
        raise UserError(f"{len(found)} documents match {args.document!r}; give its id or full path.")
    remove_document(store, found[0].id)
    print(f"Deleted {found[0].path}.")
    return 0


def cmd_query(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """Answer a question from the graph: streamed text and sources, or JSON."""
    streamed = False

    def show(piece: str) -> None:
        nonlocal streamed
        streamed = True
        sys.stdout.write(piece)
        sys.stdout.flush()

    llm = OllamaLLM(settings.ollama, cache=store)
    try:
        answer = ask(store, llm, " ".join(args.text), settings, mode=args.mode,
                     on_token=None if args.json else show)
    except DocAtlasError:
        if streamed:  # the error sentence goes below the unfinished answer
            print()
        raise
    finally:
        llm.close()
    for warning in answer.warnings:
        print(f"note: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps(answer.to_json(), indent=2, ensure_ascii=False))
        return 0
    print()
    sources = [r for r in answer.references if r.cited] or list(answer.references)
    if sources:
        print("\nSources:")
        for ref in sources:
            label = f"[{ref.label}] " if ref.label else ""
            print(f"  {label}{ref.document}{page_label(ref.page, ref.page_end)} (chunk {ref.chunk})")
    return 0


def cmd_status(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """Print what the workspace holds."""
    documents = []
    for doc in store.documents():
        counts = store.chunk_counts(doc.id)
        documents.append({
            "id": doc.id, "path": doc.path, "title": doc.title, "kind": doc.kind, "status": doc.status,
            "error": doc.error, "chunks": sum(counts.values()),
            "chunks_done": counts.get("done", 0) + counts.get("empty", 0),
        })
    report = {"workspace": str(store.path.parent), **store.counts(), "documents": documents}
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    print(f"Workspace {report['workspace']}")
    for d in documents:
        line = f"  [{d['id']}] {d['status']:<8} {d['chunks_done']}/{d['chunks']} chunks  {d['path']}"
        print(line + (f"\n        {d['error']}" if d["error"] else ""))
    print(f"{report['entities']} entities, {report['relations']} relations, "
          f"{report['chunks_pending']} chunks pending, {report['chunks_failed']} failed.")
    return 0


def cmd_rebuild(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """Re-derive the whole graph from the stored records and cached replies."""
    llm = OllamaLLM(settings.ollama, cache=store) if args.summarize else ReplayLLM(settings.ollama, store)
    summarize = ModelSummarizer(llm, settings.extraction, template=prompt_store.merge_template(store, "summarize"),
                                parallel=settings.ollama.parallel if args.summarize else 1)
    try:
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


def cmd_suggestions(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """List likely duplicate entities, or accept or reject one suggestion."""
    if args.accept or args.reject:
        try:
            suggestion = get_suggestion(store, args.accept or args.reject)
            if args.reject:
                reject(store, suggestion.id)
                print(f"Kept {suggestion.a_name} and {suggestion.b_name} apart.")
                return 0
            summarize = ModelSummarizer(ReplayLLM(settings.ollama, store), settings.extraction,
                                        template=prompt_store.merge_template(store, "summarize"))
            survivor = accept(store, suggestion.id, summarize=summarize)
        except ValueError as exc:
            raise UserError(str(exc)) from exc
        kept, gone = ((suggestion.a_name, suggestion.b_name) if survivor == suggestion.a_key
                      else (suggestion.b_name, suggestion.a_name))
        print(f"Merged {gone} into {kept}.")
        return 0
    found = suggest_merges(store)
    if args.json:
        print(json.dumps([{"id": s.id, "first": s.a_name, "second": s.b_name, "score": s.score,
                           "reason": s.reason} for s in found], indent=2, ensure_ascii=False))
        return 0
    for s in found:
        print(f"  [{s.id}] {s.a_name}  <->  {s.b_name}  ({s.reason}, {s.score:.2f})")
    print(f"{len(found)} merge suggestions" + ("; accept one with `docatlas suggestions --accept ID`."
                                               if found else "."))
    return 0


def cmd_prompts(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """List, show, change, reset, import and export the workspace's prompts."""
    active = settings.extraction.profile
    if args.verb == "list":
        return _prompts_list(args, store, active)
    if args.verb == "export":
        text = json.dumps(prompt_store.export_set(store), indent=2, ensure_ascii=False) + "\n"
        if args.out == "-":
            sys.stdout.write(text)
            return 0
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UserError(f"Could not write {args.out} ({exc.strerror}); choose another place.") from exc
        print(f"Wrote {len(prompt_store.overrides(store))} prompts to {args.out}.")
        return 0
    if args.verb == "import":
        return _prompts_import(args, store, active)
    if args.verb == "reextract":
        return _prompts_reextract(store, settings)
    key = _prompt_key(args.key, active)
    if args.verb == "show":
        return _prompts_show(args, store, key)
    if args.verb == "reset":
        done = prompt_store.reset_prompt(store, key, args.note)
        print(f"{key} is back to its default." if done else f"{key} already was the default.")
    else:
        text = _read_text(args.file)
        try:
            version = prompt_store.save_prompt(store, key, text, args.note)
        except prompt_store.PromptError as exc:
            more = len(exc.problems) - 1
            first = exc.problems[0].message.rstrip(".") if exc.problems else exc.message.rstrip(".")
            raise UserError(f"{key} was not saved: {first}" +
                            (f" (and {more} more problem{'s' if more > 1 else ''})." if more > 0 else ".")) from exc
        print(f"Saved {key} as version {version.id}." if version else f"{key} did not change.")
    _note_stale(store, active, key)
    return 0


def _prompt_key(name: str, profile: str) -> str:
    """A full key from `lightrag/extract`, or a short name: `extract` (profile in use), `summarize`, `answer`."""
    keys = prompt_keys()
    for candidate in (name, f"{profile}/{name}", f"merge/{name}", f"query/{name}"):
        if candidate in keys:
            return candidate
    try:
        spec(name)
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    return name


def _read_text(file: str) -> str:
    try:
        return sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
        raise UserError(f"{file} could not be read ({reason}); check the path and try again.") from exc


def _prompts_list(args: argparse.Namespace, store: Store, active: str) -> int:
    mine = prompt_store.overrides(store)
    rows = []
    for item in catalog():
        text = effective_text(item.key, mine)
        rows.append({"key": item.key, "title": item.title, "edited": item.key in mine,
                     "versions": len(prompt_store.versions(store, item.key)), "tokens": count_tokens(text),
                     "in_use": not item.extraction or item.group == active})
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    for row in rows:
        state = "edited " if row["edited"] else "default"
        history = f"{row['versions']} versions" if row["versions"] else ""
        print(f"  {row['key']:<28} {state}  {row['tokens']:>5} tokens  {history}")
    print(f"{len(mine)} of {len(rows)} prompts changed; extraction uses the {active} profile.")
    _note_stale(store, active, None)
    return 0


def _prompts_show(args: argparse.Namespace, store: Store, key: str) -> int:
    if args.versions:
        found = prompt_store.versions(store, key)
        for v in found:
            print(f"  v{v.id}  {v.when}  {'[default] ' if v.is_reset else ''}{v.note}")
        print(f"{len(found)} saved version{'' if len(found) == 1 else 's'} of {key}.")
        return 0
    current = prompt_store.effective(store, key)
    if args.default:
        text = prompt_store.default_for(store, key)
    elif args.version or args.diff:
        number = args.version or args.diff
        chosen = next((v for v in prompt_store.versions(store, key) if v.id == number), None)
        if chosen is None:
            raise UserError(f"{key} has no version {number}; `docatlas prompts show {key} --versions` lists them.")
        text = chosen.text if chosen.text is not None else spec(key).default_text()
        if args.diff:
            text = prompt_store.diff_texts(text, current, f"{key} v{number}", f"{key} now") or "No difference.\n"
    else:
        text = current
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def _prompts_import(args: argparse.Namespace, store: Store, active: str) -> int:
    try:
        if args.dry_run:
            report, saved = read_prompt_file(args.file, profile=args.profile, source=args.source), []
        else:
            report, saved = import_file(store, args.file, profile=args.profile, source=args.source)
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    print(report.text())
    if not report.prompts:
        raise UserError(f"Nothing in {args.file.name} could be used as a DocAtlas prompt; see the report above.")
    if not args.dry_run:
        print(f"Imported {len(saved)} prompts.")
        if report.profile and report.profile != active:
            print(f"note: extraction uses the {active} profile; the imported extraction prompts take effect "
                  f"with `ingest --profile {report.profile}`.", file=sys.stderr)
        _note_stale(store, active, None)
    return 0


def _note_stale(store: Store, profile: str, key: str | None) -> None:
    """Say when the graph was extracted with other prompts than the profile's prompts now."""
    if key is not None and not key.startswith(f"{profile}/"):
        return
    stale, finished = prompt_store.staleness(store, profile)
    if stale:
        print(f"note: {stale} of {finished} extracted chunks were built with other extraction prompts; "
              "`docatlas prompts reextract` extracts them again (unchanged work comes from the cache).",
              file=sys.stderr)


def _prompts_reextract(store: Store, settings: Settings) -> int:
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


COMMANDS = {"ingest": cmd_ingest, "export": cmd_export, "delete": cmd_delete, "query": cmd_query,
            "status": cmd_status, "rebuild": cmd_rebuild, "suggestions": cmd_suggestions, "prompts": cmd_prompts}


def run_with_progress(store: Store, paths: Sequence[Path], settings: Settings) -> Progress | None:
    """Run the ingestion pipeline with a progress bar on stderr; the last event, if any.

    Ctrl-C closes the generator, which stops the calls in flight; finished work is kept.
    """
    bar = ProgressLine(sys.stderr)
    last: Progress | None = None
    run = index(store, paths, settings)
    try:
        for last in run:
            bar.show(last)
    finally:
        run.close()
        bar.finish()
    return last


class ProgressLine:
    """A one-line progress bar on a terminal; plain lines per document elsewhere."""

    def __init__(self, stream):
        self.stream = stream
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self._last_stage = ""

    def show(self, p: Progress) -> None:
        """Draw the current state."""
        if self.tty:
            total = max(1, p.chunks_total)
            done = p.chunks_done + p.chunks_failed
            filled = int(30 * done / total) if p.stage in ("extract", "merge", "done") else 0
            eta = f" ETA {_duration(p.eta)}" if p.eta else ""
            text = (f"\r[{'#' * filled}{'.' * (30 - filled)}] {p.stage:<7} docs {p.documents_done}/"
                    f"{p.documents_total} chunks {done}/{p.chunks_total} calls {p.calls}{eta}")
            self.stream.write(text.ljust(100)[:100])
            self.stream.flush()
        elif p.stage != self._last_stage:
            self.stream.write(f"{p.stage}: {p.message}\n" if p.message else f"{p.stage}\n")
        self._last_stage = p.stage

    def finish(self) -> None:
        """End the bar's line."""
        if self.tty:
            self.stream.write("\n")


def _duration(seconds: float | None) -> str:
    seconds = int(seconds or 0)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


if __name__ == "__main__":
    sys.exit(main())
