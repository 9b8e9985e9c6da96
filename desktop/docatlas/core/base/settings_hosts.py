"""The Ollama host setting read as one or several hosts: "http://gpu1:11434*3, 127.0.0.1:11434".

Entries are separated by commas; each is an address and, after `*`, how many calls it may
have in flight at once (without one: the `parallel` setting). `OLLAMA_HOST`, settings.json
and `ingest --host` all use this form. A bad entry gets one sentence that names it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_SLOTS = 16
_COUNT = re.compile(r"^(?P<address>.*?)\s*\*\s*(?P<count>[^*]*)$")


class HostSettingError(ValueError):
    """The host setting has an entry that cannot be used; the message is one sentence."""


@dataclass(frozen=True)
class HostEntry:
    """One host of the setting: its address as written, and its calls in flight (None: `parallel`)."""

    address: str
    slots: int | None = None

    def written(self) -> str:
        """The entry as the setting writes it."""
        return self.address if self.slots is None else f"{self.address}*{self.slots}"


def host_entries(text: str) -> tuple[HostEntry, ...]:
    """The hosts of `text`, in order; raises HostSettingError (one sentence) for a bad entry.

    An empty text is no host at all (the caller falls back to the default).
    """
    entries: list[HostEntry] = []
    for raw in (text or "").split(","):
        item = raw.strip()
        if not item:
            if text.strip() and "," in text:
                raise HostSettingError(f"The Ollama host setting {text.strip()!r} has an empty entry; "
                                       "separate hosts with one comma, e.g. gpu1:11434*3, 127.0.0.1:11434.")
            continue
        slots = None
        found = _COUNT.match(item)
        if found:
            item, count = found["address"].strip(), found["count"].strip()
            if not count.isdigit() or not 1 <= int(count) <= MAX_SLOTS:
                raise HostSettingError(f"The Ollama host entry {raw.strip()!r} must end in * and a whole "
                                       f"number of calls from 1 to {MAX_SLOTS}, e.g. gpu1:11434*3.")
            slots = int(count)
        if not item or any(c.isspace() for c in item):
            raise HostSettingError(f"The Ollama host entry {raw.strip()!r} is not an address; write it as "
                                   "host:port, e.g. 127.0.0.1:11434 or http://gpu1:11434*3.")
        if any(e.address == item for e in entries):
            raise HostSettingError(f"The Ollama host {item} is named twice in the host setting; "
                                   "name it once, with its number of calls after *, e.g. gpu1:11434*3.")
        entries.append(HostEntry(item, slots))
    return tuple(entries)


def host_problem(text: str) -> str | None:
    """The one sentence naming the bad entry of a host setting, or None when every entry is usable."""
    try:
        host_entries(text)
    except HostSettingError as exc:
        return str(exc)
    return None


def hosts_text(entries: tuple[HostEntry, ...] | list[HostEntry]) -> str:
    """The setting's text for `entries` ("a:11434*3, b:11434")."""
    return ", ".join(e.written() for e in entries)


def total_slots(text: str, parallel: int) -> int:
    """Calls in flight over all hosts: each host's count, `parallel` for a host without one.

    With one host and no count this is `parallel`, as before pools existed; a bad setting
    counts as that one host.
    """
    try:
        entries = host_entries(text)
    except HostSettingError:
        return max(1, parallel)
    return max(1, sum(e.slots or parallel for e in entries) if entries else parallel)
