"""Layer 7: answers from the graph: keywords, embeddings, full-text search, context per mode,
community reports, global (map/reduce) search, the answer with references.

Entry points (import them from their modules):

- `answer.ask(store, llm, question, settings, ...) -> Answer`
- `embed.embed_pending(store, llm, settings, cancel) -> Iterator[dict]`
- `communities.refresh_communities(store, llm, settings, cancel) -> Iterator[dict]`
- `context.build_context(...)` for the context of one mode without any model call.
"""
