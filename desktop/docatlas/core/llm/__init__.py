"""Layer 3: models. The LLM protocol, the Ollama transport (retries, streaming, cancel,
context sizing), the cache-only replay, and Ollama administration (probe, list, pull)."""

import sys

# httpx imports its command-line tool at import time (click, rich and pygments when they are
# installed: about 0.1 s of every model-calling command's start). DocAtlas never runs it, and
# a None entry makes httpx take its own fallback for a missing tool.
sys.modules.setdefault("httpx._main", None)
