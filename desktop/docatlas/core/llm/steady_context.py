"""The context a model is asked for never shrinks while DocAtlas runs (per host and model).

Ollama reloads a model whenever a call asks for another `num_ctx` than the one it was loaded
with (its scheduler compares the runner's options): seconds on a real model, and with calls of
several sizes in flight it loads the model back and forth. So each call asks for the largest
context already asked of that model on that host in this process; a longer prompt raises it,
once. A question's short keyword call then asks what the last answer did, and a chunk's first
pass what its gleaning did.
"""

from __future__ import annotations

import threading

_lock = threading.Lock()
_asked: dict[tuple[str, str], int] = {}


def steady_context(host: str, model: str, wanted: int, cap: int) -> int:
    """The `num_ctx` to ask of `model` on `host`: `wanted`, or more if more was asked before (never over `cap`)."""
    key = (host, model)
    with _lock:
        asked = min(cap, max(wanted, _asked.get(key, 0)))
        _asked[key] = max(asked, _asked.get(key, 0))
    return asked


def forget() -> None:
    """Forget what was asked (a test's fresh start)."""
    with _lock:
        _asked.clear()
