"""Pure-Python core of DocAtlas: documents, store, LLM client, extraction, pipeline.

Nothing in this package imports Qt; an import-linter contract enforces it.
"""
