"""The `prompts` command: list, show, change, reset, import and export the workspace's prompts."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from docatlas.cli.common import UserError, writing
from docatlas.cli.guards import clean
from docatlas.cli.ingest import cmd_reextract
from docatlas.core.base.settings import Settings
from docatlas.core.base.text import json_for_terminal
from docatlas.core.base.tokens import count_tokens
from docatlas.core.prompts import store as prompt_store
from docatlas.core.prompts.catalog import catalog, effective_text, prompt_keys, spec
from docatlas.core.prompts.importer import import_file, read_prompt_file
from docatlas.core.storage.database import Store


def cmd_prompts(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """List, show, change, reset, import and export the workspace's prompts."""
    active = settings.extraction.profile
    if args.verb == "list":
        return _prompts_list(args, store, active)
    if args.verb == "export":
        prompt_set = _prompt_set(store, active, changed_only=args.changed)
        text = json.dumps(prompt_set, indent=2, ensure_ascii=False) + "\n"
        if args.out == "-":
            sys.stdout.write(json_for_terminal(text))
            return 0
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UserError(f"Could not write {clean(args.out)} ({exc.strerror}); choose another place.") from exc
        edited = sum(1 for item in prompt_set["prompts"] if item["edited"])
        print(clean(f"Wrote {len(prompt_set['prompts'])} prompts ({edited} changed here) to {args.out}."))
        return 0
    if args.verb == "import":
        if args.dry_run:
            return _prompts_import(args, store, active)
        with writing(args, store, "prompts"):
            return _prompts_import(args, store, active)
    if args.verb == "reextract":
        return cmd_reextract(args, store, settings)
    key = _prompt_key(args.key, active)
    if args.verb == "show":
        return _prompts_show(args, store, key)
    if args.verb == "reset":
        with writing(args, store, "prompts"):
            done = prompt_store.reset_prompt(store, key, args.note)
        print(f"{key} is back to its default." if done else f"{key} already was the default.")
    else:
        text = _read_text(args.file)
        try:
            with writing(args, store, "prompts"):
                version = prompt_store.save_prompt(store, key, text, args.note)
        except prompt_store.PromptError as exc:
            more = len(exc.problems) - 1
            first = exc.problems[0].message.rstrip(".") if exc.problems else exc.message.rstrip(".")
            raise UserError(f"{key} was not saved: {first}" +
                            (f" (and {more} more problem{'s' if more > 1 else ''})." if more > 0 else ".")) from exc
        print(f"Saved {key} as version {version.id}." if version else f"{key} did not change.")
    _note_stale(store, active, key)
    return 0


def _prompt_set(store: Store, active: str, changed_only: bool) -> dict:
    """The prompt set to export: every prompt in use (the active profile's, merge, query), or only edits."""
    prompt_set = prompt_store.export_set(store)
    for item in prompt_set["prompts"]:
        item["edited"] = True
    if changed_only:
        return prompt_set
    mine = prompt_store.overrides(store)
    edited = {item["key"]: item for item in prompt_set["prompts"]}
    prompt_set["prompts"] = [
        edited.get(item.key) or {"key": item.key, "text": effective_text(item.key, mine), "note": "",
                                 "saved_at": None, "edited": False}
        for item in catalog() if not item.extraction or item.group == active or item.key in edited
    ]
    return prompt_set


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
    sys.stdout.write(clean(text if text.endswith("\n") else text + "\n"))
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

