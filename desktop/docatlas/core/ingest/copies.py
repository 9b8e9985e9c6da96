"""A near-duplicate chunk takes its original's records instead of a model call, grounded in its own text.

A copy (`storage.duplicates`: a chunk whose shingles are at least 0.8 alike with a stored
original's) gets its OWN records: the original's model records held to the same rules as a
reply's (`extract.settle_records`: types held to the list, each entity grounded in the copy's
text, a relation only with both ends there), stored for the copy's chunk with mentions located
in the copy's text, so references quote the copy. A name of the copy that its original does not
have (a forwarding line, a new footer) stays a concept-layer name: the model never read it.
What the original's records hold that the copy's text does not back is left out, not held for
review (it is the original's to review). The copy is stamped with the original's profile and
model, so a prompt change finds both stale, and a re-extraction of the original is followed.
"""

from __future__ import annotations

from docatlas.core.base.concepts import find_concepts
from docatlas.core.base.keys import entity_key
from docatlas.core.base.records import EntityRecord, RelationRecord
from docatlas.core.base.settings import ExtractionSettings
from docatlas.core.ingest.extract import ChunkExtraction, settle_records
from docatlas.core.ingest.findings import accepted_keys, record_findings
from docatlas.core.prompts.catalog import Profile
from docatlas.core.storage import duplicates
from docatlas.core.storage.database import Store

COPY_FORMAT = "copy"  # the health figures' reply format of a chunk that took its original's records


def copy_result(store: Store, copy_id: int, original: duplicates.Original, profile: Profile | None,
                settings: ExtractionSettings) -> tuple[ChunkExtraction, str]:
    """The copy's records from its finished original (nothing stored); and the copy's text."""
    text = store.chunk_text(copy_id)
    result = settle_records(profile, text, settings, [EntityRecord(*e) for e in original.entities],
                            [RelationRecord(*r) for r in original.relations], accepted_keys(store, copy_id))
    result.health.reply_format = COPY_FORMAT
    result.health.ungrounded = 0
    result.ungrounded = []  # the original's records this text does not back stay the original's
    return result, text


def follow(store: Store, copy_id: int, original: duplicates.Original, profile: Profile | None,
           settings: ExtractionSettings) -> tuple[ChunkExtraction, set[str]]:
    """Store the copy's own records from its finished original; (the result, the keys owed a merge)."""
    result, text = copy_result(store, copy_id, original, profile, settings)
    keys = [entity_key(e.name) for e in result.entities]
    own = set(find_concepts(text).names) - set(find_concepts(original.text).names) - set(keys)
    record_findings(store, copy_id, result)  # first: a finished chunk always has its findings
    owed = store.finish_chunk(
        copy_id, result.entities, result.relations, status=result.status, profile=original.profile or "",
        model=original.model or "", calls=0, keys=keys,
        relation_keys=[(entity_key(r.source), entity_key(r.target)) for r in result.relations],
        keep_concepts=own)
    return result, owed
