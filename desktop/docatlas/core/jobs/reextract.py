"""Re-derive the whole graph from what is stored, without asking the model to read anything.

Three steps, each optional to skip and none calling the model:

1. Re-parse: every finished chunk's conversation is replayed from the reply cache through
   the current parser (`ReplayLLM`); a chunk whose records change gets the new ones. The
   replay follows the conversation the chunk really had, whatever the gleaning settings
   say now: gleaning rounds go on while their replies are cached, and loop checks are
   skipped (a round the model was not asked for is simply not in the cache). Grounding
   applies as at ingestion (the names the user accepted count as backed). A chunk
   whose first reply is not cached (other entity types, language or prompt) keeps the
   records it has. A near-duplicate chunk (`ingest.copies`) is not replayed: it takes its
   original's records again once the original is re-parsed.
2. Re-key: every record's key is computed again from the name the model wrote, with the
   current normalisation and the accepted merges (`entity_aliases`).
3. Re-merge: `rebuild` over all keys, with the summariser given (cached summaries cost
   nothing; a cache-only summariser joins the descriptions it finds no summary for).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from docatlas.core.base.keys import entity_key
from docatlas.core.base.records import EntityRecord, RelationRecord
from docatlas.core.base.settings import Settings
from docatlas.core.graph.merge import Summarizer, aliases, rebuild
from docatlas.core.ingest import copies
from docatlas.core.ingest.extract import extract_chunk, settle_records
from docatlas.core.ingest.findings import accepted_keys, record_findings
from docatlas.core.llm.replay import NotCached, ReplayLLM
from docatlas.core.prompts.catalog import Profile
from docatlas.core.prompts.store import extraction_profile
from docatlas.core.storage import duplicates, health, records, ungrounded
from docatlas.core.storage.database import Store
from docatlas.core.storage.lock import writes_workspace
from docatlas.core.storage.mentions import relocate_all

REPLAY_ROUNDS = 16  # gleaning rounds a replay may follow (each one only if it is cached)


@dataclass
class RederiveReport:
    """What a re-derivation did."""

    chunks: int = 0  # finished chunks looked at
    reparsed: int = 0  # chunks whose conversation was replayed from the cache
    changed: int = 0  # of those, chunks whose records changed
    kept: int = 0  # chunks with no cached reply: records kept as they were
    rekeyed: int = 0  # records filed under a new key
    entities: int = 0
    relations: int = 0


@writes_workspace("rebuild")
def rederive(store: Store, settings: Settings, *, summarize: Summarizer | None = None,
             reparse: bool = True) -> RederiveReport:
    """Re-parse (optional), re-key and re-merge the whole graph; no model call is made here."""
    report = RederiveReport()
    if reparse:
        reparse_chunks(store, settings, report)
    else:
        report.chunks = records.finished_count(store)
    report.rekeyed = rekey(store)
    relocate_all(store)  # mentions follow the records, found again in each chunk's text
    rebuild(store, None, summarize)
    counts = store.counts()
    report.entities, report.relations = counts["entities"], counts["relations"]
    return report


def reparse_chunks(store: Store, settings: Settings, report: RederiveReport | None = None) -> RederiveReport:
    """Replay every finished chunk's cached replies through the current parser; store changes."""
    report = report or RederiveReport()
    profiles: dict[str, Profile | None] = {}
    replay = replace(settings.extraction, gleaning=REPLAY_ROUNDS, loop_check=False)
    copied = duplicates.all_copies(store)
    for row in records.finished_chunks(store):
        report.chunks += 1
        if row.id in copied:
            continue  # follows its original, below
        profile = _profile(store, profiles, row.profile or settings.extraction.profile)
        llm = ReplayLLM(settings.ollama, store, model=row.model or settings.ollama.model)
        try:
            if profile is None:
                raise NotCached("a profile this version no longer ships")
            result = extract_chunk(llm, profile, row.text, replay, accepted=accepted_keys(store, row.id))
        except NotCached:
            report.kept += 1
            _ground_kept(store, row, profile, replay, report)
            continue
        report.reparsed += 1
        record_findings(store, row.id, result)  # grounding holds for re-derived records too
        if records.chunk_records(store, row.id) == _records(result.entities, result.relations):
            continue
        report.changed += 1
        store.finish_chunk(
            row.id, result.entities, result.relations, status=result.status, profile=profile.name,
            model=llm.model, calls=0, keys=[entity_key(e.name) for e in result.entities],
            relation_keys=[(entity_key(r.source), entity_key(r.target)) for r in result.relations],
        )
    _follow_originals(store, copied, profiles, settings, report)
    return report


def _follow_originals(store: Store, copied: dict[int, tuple[int, ...]], profiles: dict[str, Profile | None],
                      settings: Settings, report: RederiveReport) -> None:
    """Each finished copy takes its finished originals' records again (they may have changed)."""
    finished = {i for i, status in duplicates.statuses(store, copied).items() if status in duplicates.FINISHED}
    for copy_id, sources in copied.items():
        original = duplicates.finished_originals(store, sources) if copy_id in finished else None
        if original is None:
            continue
        report.reparsed += 1
        profile = _profile(store, profiles, original.profile or settings.extraction.profile)
        result, _ = copies.copy_result(store, copy_id, original, profile, settings.extraction)
        mine = duplicates.finished_original(store, copy_id)  # its model records (its own names aside)
        if mine is not None and (mine.entities, mine.relations) == _records(result.entities, result.relations):
            continue
        report.changed += 1
        copies.follow(store, copy_id, original, profile, settings.extraction)


def _ground_kept(store: Store, row: records.FinishedChunk, profile: Profile | None, extraction,
                 report: RederiveReport) -> None:
    """Records kept without a cached reply, stored before grounding existed, are grounded now.

    A chunk with health figures was grounded when it was extracted: it is left as it is (its
    held-back records stay)."""
    if health.chunk_health(store, [row.id]):
        return
    entities, relations = records.chunk_records(store, row.id)
    result = settle_records(profile, row.text, extraction, [EntityRecord(*e) for e in entities],
                            [RelationRecord(*r) for r in relations], accepted_keys(store, row.id))
    record_findings(store, row.id, result)
    if (entities, relations) == _records(result.entities, result.relations):
        return
    report.changed += 1
    store.finish_chunk(
        row.id, result.entities, result.relations, status=result.status, profile=row.profile or "",
        model=row.model or "", calls=0, keys=[entity_key(e.name) for e in result.entities],
        relation_keys=[(entity_key(r.source), entity_key(r.target)) for r in result.relations],
    )


def rekey(store: Store) -> int:
    """File every per-chunk record under the key its name gives now (accepted merges applied).

    Returns how many record keys changed."""
    alias_of = aliases(store)

    def canonical(name: str) -> str:
        key = entity_key(name)
        return alias_of.get(key, key)

    entity_updates = [
        (canonical(name), rowid)
        for rowid, key, name in records.entity_record_names(store)
        if canonical(name) != key
    ]
    relation_updates = []
    for rowid, sk, tk, source, target in records.relation_record_names(store):
        new = (canonical(source), canonical(target))
        if new != (sk, tk):
            relation_updates.append((*new, rowid))
    records.refile_records(store, entity_updates, relation_updates)
    return len(entity_updates) + len(relation_updates)


def _profile(store: Store, cache: dict[str, Profile | None], name: str) -> Profile | None:
    """The profile with the workspace's prompts (a replay matches replies to the prompts in use)."""
    if name not in cache:
        try:
            cache[name] = extraction_profile(store, name)
        except ValueError:
            cache[name] = None  # a profile this version no longer ships
    return cache[name]


def _records(entities: list, relations: list) -> tuple[list[tuple], list[tuple]]:
    return ([(e.name, e.type, e.description) for e in entities],
            [(r.source, r.target, r.keywords, r.description, r.strength) for r in relations])


@writes_workspace("re-extract")
def requeue_chunks(store: Store, chunk_ids: Iterable[int], summarize: Summarizer | None = None) -> set[str]:
    """Send chunks back to `pending` without their records, and re-derive what those supported.

    The next run (ingestion, or Resume) extracts them again. Returns the entity keys touched.
    """
    ids = [int(i) for i in chunk_ids]
    if not ids:
        return set()
    touched, documents = records.requeue(store, ids)
    ungrounded.clear_ungrounded(store, ids)
    for document_id in documents:
        store.refresh_document_status(document_id)
    rebuild(store, touched, summarize)
    return touched
