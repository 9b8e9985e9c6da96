"""Replies this process cached lately, per workspace and cache key: looked up again once a call has its slot.

A call prepared for a slot looks up the reply cache before it waits (`OllamaLLM.chat`); when a
question's budgeted reading asks the same call meanwhile (`jobs.budgeted`: the same chunk, the
same prompt), its reply lands in the cache while the run's call still waits. This memory (a few
hundred replies, no store, no lock but its own) lets the waiting call take that reply instead of
asking the model again, without reading the store while it holds a slot.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

KEPT = 512  # replies remembered


class RecentReplies:
    """The last `KEPT` replies put in a reply cache by this process."""

    def __init__(self, kept: int = KEPT):
        self._kept = kept
        self._replies: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, cache: Any, key: str, reply: str) -> None:
        """Remember a reply that was just put in `cache` (a workspace's store: known by its path)."""
        where = (_place(cache), key)
        with self._lock:
            self._replies[where] = reply
            self._replies.move_to_end(where)
            while len(self._replies) > self._kept:
                self._replies.popitem(last=False)

    def get(self, cache: Any, key: str) -> str | None:
        """The reply put in `cache` (or another store on the same workspace) lately under `key`, if any."""
        with self._lock:
            return self._replies.get((_place(cache), key))


def _place(cache: Any) -> str:
    """A cache's workspace: its database path (each thread's store on one workspace shares it)."""
    path = getattr(cache, "path", None)
    return str(path) if path is not None else f"cache-{id(cache)}"


RECENT = RecentReplies()
