"""cl100k_base tokens in plain Python, for a process that counts little.

tiktoken's encoder takes 50-90 ms to build (its CoreBPE copies the 100,256 ranks while holding
the GIL) and keeps that copy; a `docatlas query` counts a few tens of thousands of characters in
all, which this does in less: `bench/handwritten.py question` measures the command 70 ms faster
and its peak RSS 21 MB lower than with tiktoken alone. Once warm tiktoken is twice as fast, so
`tokens` hands over to it after PYTHON_CHARS. Same algorithm as tiktoken's: the text is split
by cl100k's pattern, a piece that is a token is one, any other is merged pair by pair, the
lowest-ranked pair first (the leftmost of equals). The result is tiktoken's, token for token
(tests compare them on real text).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise

NO_RANK = 1 << 62  # above every rank: the pair is no token


class PythonBPE:
    """Counts and token bytes from the ranks, caching each distinct piece's tokens."""

    def __init__(self, ranks: dict[bytes, int], pattern: str) -> None:
        import regex  # tiktoken's own dependency; the pattern's \p{L} and possessive forms need it

        self.ranks = ranks
        self._split: Callable[[str], list[str]] = regex.compile(pattern).findall
        self._pieces: dict[str, tuple[bytes, ...]] = {}

    def tokens(self, text: str) -> list[bytes]:
        """The bytes of each token of `text`, in order."""
        return [token for piece in self._split(_encodable(text)) for token in self._parts(piece)]

    def count(self, text: str) -> int:
        """How many tokens `text` has."""
        return sum(len(self._parts(piece)) for piece in self._split(_encodable(text)))

    def _parts(self, piece: str) -> tuple[bytes, ...]:
        """The tokens of one piece of the split, merged once a process."""
        parts = self._pieces.get(piece)
        if parts is None:
            parts = self._pieces[piece] = self._merge(piece.encode("utf-8"))
        return parts

    def _merge(self, piece: bytes) -> tuple[bytes, ...]:
        """Byte-pair merge of one piece into tokens.

        `starts` holds where each part begins; `pair[i]` is the rank of parts i and i+1 joined
        (NO_RANK when that is no token). A merge changes only the two pairs beside it."""
        ranks = self.ranks
        if piece in ranks:
            return (piece,)
        starts = list(range(len(piece) + 1))
        pair = [ranks.get(piece[i:i + 2], NO_RANK) for i in range(len(piece) - 1)]
        while pair:
            lowest = min(pair)
            if lowest == NO_RANK:
                break
            i = pair.index(lowest)  # the leftmost of equals, as tiktoken
            del starts[i + 1], pair[i]
            if i > 0:
                pair[i - 1] = ranks.get(piece[starts[i - 1]:starts[i + 1]], NO_RANK)
            if i < len(pair):
                pair[i] = ranks.get(piece[starts[i]:starts[i + 2]], NO_RANK)
        return tuple(piece[a:b] for a, b in pairwise(starts))


def _encodable(text: str) -> str:
    """The text with lone surrogates replaced, as tiktoken's encode does before trying again."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text
