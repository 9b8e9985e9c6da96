"""The command-line grammar of `docatlas`: every command, its options and their checks."""

from __future__ import annotations

import argparse
from pathlib import Path

from docatlas import __version__
from docatlas.core.graph.formats import EXPORT_FORMATS
from docatlas.core.prompts.catalog import ANSWER_MODES as MODES  # not retrieval.answer: it loads ollama
from docatlas.core.prompts.catalog import available_profiles

WAIT_HELP = "if another DocAtlas process is writing to the workspace, wait for it to finish instead of stopping"


def build_parser() -> argparse.ArgumentParser:
    """The command-line grammar."""
    parser = argparse.ArgumentParser(
        prog="docatlas",
        description="Turn private documents into a knowledge graph with a local Ollama model.",
    )
    parser.add_argument("--version", action="version", version=f"DocAtlas {__version__}")
    parser.add_argument("--data-dir", help="workspace folder (default: DOCATLAS_DATA_DIR or the user data dir)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    writes = _writer_options()

    ingest = sub.add_parser("ingest", parents=[writes], help="add documents or folders and extract their graph")
    ingest.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    ingest.add_argument("--profile", choices=[*available_profiles(), "auto"],
                        help="extraction prompt profile; auto tries each on the first chunks and keeps "
                             "the best for the model")
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
    _host_option(ingest)

    exp = sub.add_parser("export", help="write the graph to a file")
    exp.add_argument("--format", choices=EXPORT_FORMATS, default="json")
    exp.add_argument("out", type=Path, metavar="OUT", help="output file (a folder for csv), or - for standard output")

    delete = sub.add_parser("delete", parents=[writes], help="remove a document and what only it supported")
    delete.add_argument("document", metavar="DOC", help="document id, path, file name or title")

    query = sub.add_parser("query", help="ask a question; the answer streams with its sources")
    query.add_argument("text", nargs="+", metavar="TEXT", help="the question")
    query.add_argument("--mode", choices=MODES, help="retrieval mode (default: the setting, mix)")
    query.add_argument("--json", action="store_true", help="print answer, context and references as JSON")
    query.add_argument("--budget", type=_non_negative, metavar="N",
                       help="model calls the question may spend first reading the passages it needs that the "
                            "model has not read yet (0: off; default: the query.read_budget setting)")
    _model_options(query)
    _host_option(query)

    rebuild = sub.add_parser("rebuild", parents=[writes],
                             help="re-derive the graph from stored records; no document is read again")
    rebuild.add_argument("--keep-records", action="store_true",
                         help="do not re-parse the cached replies; only re-key and re-merge")
    rebuild.add_argument("--summarize", action="store_true",
                         help="let the model write the summaries that are not cached yet")
    _model_options(rebuild)

    suggestions = sub.add_parser("suggestions", parents=[writes],
                                 help="entities that may be the same; nothing merges until accepted")
    decision = suggestions.add_mutually_exclusive_group()
    decision.add_argument("--accept", type=_positive, metavar="ID", help="merge the two entities of suggestion ID")
    decision.add_argument("--reject", type=_positive, metavar="ID", help="keep the two entities of suggestion ID apart")
    suggestions.add_argument("--json", action="store_true", help="machine-readable output")

    status = sub.add_parser("status", help="documents, chunks and graph size")
    status.add_argument("--json", action="store_true", help="machine-readable output")
    status.add_argument("--where", metavar="KEY=TEXT",
                        help="only documents whose metadata has TEXT (under KEY: author, from, date, ...)")
    _prompts_parser(sub, writes)
    ungrounded = sub.add_parser("ungrounded", parents=[writes],
                                help="records the model gave that their text does not contain; accept one to keep it")
    ungrounded.add_argument("--accept", type=_positive, metavar="ID", help="add record ID to the graph")
    ungrounded.add_argument("--json", action="store_true", help="machine-readable output")
    evaluate = sub.add_parser("evaluate", help="ask a saved question set in every mode; score each mode")
    evaluate.add_argument("questions", type=Path, metavar="QUESTIONS",
                          help='a JSON-lines file: {"question": ..., "answer": ... | "documents": [...] | '
                               '"absent": true} a line')
    evaluate.add_argument("--modes", type=_modes, metavar="MODES",
                          help="comma-separated modes (default: naive,local,global,hybrid,mix)")
    evaluate.add_argument("--json", action="store_true", help="machine-readable output")
    _sync_parser(sub, writes)
    return parser


def _sync_parser(sub: argparse._SubParsersAction, writes: argparse.ArgumentParser) -> None:
    sync = sub.add_parser("sync", parents=[writes],
                          help="link folders in place and ingest what is new or changed in the linked folders")
    sync.add_argument("folders", nargs="*", type=Path, metavar="FOLDER",
                      help="folders to link (default: sync every linked folder)")
    gone = sync.add_mutually_exclusive_group()
    gone.add_argument("--remove-gone", dest="gone", action="store_const", const="remove",
                      help="take documents whose files are gone out of the graph")
    gone.add_argument("--keep-gone", dest="gone", action="store_const", const="keep",
                      help="keep documents whose files are gone (default: the sync.gone_files setting)")
    sync.add_argument("--list", action="store_true", help="list the linked folders")
    sync.add_argument("--unlink", type=Path, metavar="FOLDER", help="stop following FOLDER (its documents stay)")
    _model_options(sync)


def _prompts_parser(sub: argparse._SubParsersAction, writes: argparse.ArgumentParser) -> None:
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
    put = verbs.add_parser("set", parents=[writes], help="change a prompt; the text comes from FILE, or stdin")
    put.add_argument("key", metavar="KEY")
    put.add_argument("file", nargs="?", default="-", metavar="FILE", help="a text file, or - for stdin")
    put.add_argument("--note", default="", help="why it changed (kept with the version)")
    reset = verbs.add_parser("reset", parents=[writes], help="go back to the bundled default (kept as a version)")
    reset.add_argument("key", metavar="KEY")
    reset.add_argument("--note", default="")
    imp = verbs.add_parser("import", parents=[writes],
                           help="read a prompt set, or a LightRAG/GraphRAG prompt file (never run)")
    imp.add_argument("file", type=Path, metavar="FILE")
    imp.add_argument("--profile", choices=available_profiles(), help="extraction profile for its extraction prompts")
    imp.add_argument("--source", metavar="NAME", help="the dict to read when the file has several")
    imp.add_argument("--dry-run", action="store_true", help="only say what would be imported")
    exp = verbs.add_parser("export", help="write every prompt in use to one JSON file (a prompt set)")
    exp.add_argument("out", metavar="OUT", help="a .json file, or - for standard output")
    exp.add_argument("--changed", action="store_true", help="only the prompts this workspace changed")
    reextract = verbs.add_parser("reextract", parents=[writes],
                                 help="extract again the chunks built with older extraction prompts")
    _model_options(reextract)


def _model_options(command: argparse.ArgumentParser) -> None:
    """--model and --embed-model for a command that reads a built workspace."""
    command.add_argument("--model", help="Ollama chat model (default: the one the workspace was built with)")
    command.add_argument("--embed-model", help="Ollama embedding model (default: the one the workspace was built with)")


def _writer_options() -> argparse.ArgumentParser:
    """The options of every command that writes to the workspace."""
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("--wait", action="store_true", help=WAIT_HELP)
    return options


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


def _modes(text: str) -> tuple[str, ...]:
    modes = tuple(dict.fromkeys(m.strip().lower() for m in text.split(",") if m.strip()))
    unknown = [m for m in modes if m not in MODES]
    if not modes or unknown:
        raise argparse.ArgumentTypeError(f"choose from {', '.join(MODES)}")
    return modes


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must not be negative")
    return value


def _host_option(command: argparse.ArgumentParser) -> None:
    """--host URL, repeatable: the Ollama hosts of this run instead of the setting (a pool when several)."""
    command.add_argument("--host", action="append", metavar="URL",
                         help="an Ollama host for this run, e.g. http://gpu1:11434*3 (*N: its calls in flight); "
                              "repeat it to spread the work over several hosts")
