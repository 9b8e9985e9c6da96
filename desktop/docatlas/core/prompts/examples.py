"""The names a profile's own examples use ("Amara Osei", "Rosa Maretti", "Turin", ...).

Small models copy a prompt's example into their reply. Grounding (`ingest.grounding`) lets
such a name into the graph only when the chunk itself contains it word for word, and names
the reason when it does not. Read from the prompts in use (the user's edits included), in
every format the shipped examples are written in.
"""

from __future__ import annotations

import re

from docatlas.core.prompts.catalog import Profile

_DELIM = r"(?:\{tuple_delimiter\}|<\|>|<\|#\|>)"
_TUPLE = re.compile(rf"""["']?(?:entity|relationship|relation)["']?\s*{_DELIM}([^{{}}<\n]+?){_DELIM}"""
                    rf"""(?:([^{{}}<\n]+?){_DELIM})?""", re.IGNORECASE)
_JSON = re.compile(r'"(?:name|source|target)"\s*:\s*"([^"\n]{1,120})"')
_LISTED = re.compile(r"^Example names:[ \t]*(.+)$", re.MULTILINE)  # the typing profile's candidate list
_TYPE_WORDS = re.compile(r"^[a-z_ ]{1,30}$")  # a lower-case slot is a type, not a name


def example_names(profile: Profile) -> frozenset[str]:
    """Entity names (and relation ends) written in the profile's example records."""
    text = "\n".join(profile.prompts.get(name, "") for name in ("examples", "extract"))
    names: set[str] = set()
    for match in _TUPLE.finditer(text):
        for group in match.groups():
            if group and not _TYPE_WORDS.match(group.strip()):
                names.add(group.strip())
    names.update(m.group(1).strip() for m in _JSON.finditer(text))
    names.update(n.strip() for m in _LISTED.finditer(text) for n in m.group(1).split(","))
    return frozenset(n for n in names if n)


def shipped_example_names() -> frozenset[str]:
    """The example names of every bundled profile (a model may echo any it has seen)."""
    global _SHIPPED
    if _SHIPPED is None:
        from docatlas.core.prompts.catalog import available_profiles, load_profile

        _SHIPPED = frozenset().union(*(example_names(load_profile(p)) for p in available_profiles()))
    return _SHIPPED


_SHIPPED: frozenset[str] | None = None
