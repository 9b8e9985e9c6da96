"""Migration: the entity keys a drop touched, written in the drop's own transaction.

A delete, or the new version of a changed document, removes records in one transaction and
re-derives the graph for the keys they supported in another. `pending_rederive` holds those
keys in between, so a process killed after the drop is healed by the next writing job
(`docatlas.core.jobs.ingest.heal`); the merge that derives a key removes it.
"""

SQL = """
    CREATE TABLE IF NOT EXISTS pending_rederive (key TEXT PRIMARY KEY);
    """
