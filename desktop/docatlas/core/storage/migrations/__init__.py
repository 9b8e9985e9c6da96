"""The schema as numbered steps: `MIGRATIONS[i]` takes a workspace from version i to i + 1.

One module a step, never edited once released; a new table or column is a new module.
"""

from docatlas.core.storage.migrations import (
    m001_documents,
    m002_retrieval,
    m003_merge_suggestions,
    m004_prompts,
    m005_graph_explorer,
    m006_extraction_health,
    m007_pending_rederive,
    m008_document_path_bytes,
    m009_chunk_spans,
    m010_document_metadata,
    m011_sources,
    m012_scan_pages,
    m013_vector_keys,
    m014_document_counts,
    m015_concept_layer,
    m016_near_duplicates,
    m017_wanted_chunks,
    m018_graph_view_documents,
)

MIGRATIONS: list = [  # SQL text, or a module with `apply(conn, statements)`
    m001_documents.SQL,
    m002_retrieval.SQL,
    m003_merge_suggestions.SQL,
    m004_prompts.SQL,
    m005_graph_explorer.SQL,
    m006_extraction_health.SQL,
    m007_pending_rederive.SQL,
    m008_document_path_bytes.SQL,
    m009_chunk_spans,
    m010_document_metadata.SQL,
    m011_sources.SQL,
    m012_scan_pages.SQL,
    m013_vector_keys,
    m014_document_counts.SQL,
    m015_concept_layer,
    m016_near_duplicates.SQL,
    m017_wanted_chunks.SQL,
    m018_graph_view_documents.SQL,
]
SCHEMA_VERSION = len(MIGRATIONS)
