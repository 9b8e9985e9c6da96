"""Layer 3: models. The LLM protocol, the Ollama transport (retries, streaming, cancel,
context sizing), the cache-only replay, and Ollama administration (probe, list, pull)."""
