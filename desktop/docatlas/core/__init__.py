"""Pure-Python core of DocAtlas, in layers that only import downward.

base < storage < llm < prompts < ingest < graph < retrieval < jobs (import-linter's
`layers` contract enforces the order; nothing here imports Qt).
"""
