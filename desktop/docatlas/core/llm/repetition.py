"""Spotting a reply that has started repeating itself, while it streams.

Small models fall into loops: the same record, or the same few lines, over and over until
the reply limit. `RepetitionGuard` is fed the streamed pieces and says when the tail of the
text is one stretch repeated (a period of 8-400 characters seen `REPEATS` times in a row), or
when one line has come back `LINE_REPEATS` times. Pure: no I/O, no clock.

It runs on every streamed piece of every call, so it is incremental: a piece is looked at
once (lines are counted as they end), the period check runs every `CHECK_EVERY` characters
on the last `WINDOW` characters only, and finds its candidate periods with `str.rfind` (a
loop of period p has its last 8 characters again p characters earlier) instead of trying
all 400 of them.
"""

from __future__ import annotations

REPEATS = 4  # a stretch seen this many times in a row is a loop
LINE_REPEATS = 6  # ... and so is one non-trivial line seen this many times
MIN_PERIOD, MAX_PERIOD = 8, 400
MIN_LOOP_CHARS = 160  # shorter repeats ("ha ha ha") are not worth stopping for
CHECK_EVERY = 48  # characters between two checks
MIN_LINE = 12  # lines shorter than this ("##", "}") repeat in good replies too
WINDOW = MAX_PERIOD * REPEATS  # the longest loop tail_period can see


class RepetitionGuard:
    """Fed a reply piece by piece; `feed` returns True once the reply is looping."""

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._tail = ""  # at least the last WINDOW characters
        self._unchecked = 0  # characters since the last period check
        self._line: list[str] = []  # the pieces of the line being streamed
        self._lines: dict[str, int] = {}
        self.looping = False

    @property
    def text(self) -> str:
        """Everything fed so far."""
        return "".join(self._pieces)

    def feed(self, piece: str) -> bool:
        """Add a streamed piece; True when the text now ends in a loop."""
        if self.looping:
            return True
        self._pieces.append(piece)
        self._tail += piece
        if len(self._tail) > 2 * WINDOW:
            self._tail = self._tail[-WINDOW:]
        if "\n" not in piece:
            self._line.append(piece)
        elif self._count_lines(piece):
            self.looping = True
            return True
        self._unchecked += len(piece)
        if self._unchecked >= CHECK_EVERY:
            self._unchecked = 0
            self.looping = tail_period(self._tail) is not None
        return self.looping

    def kept_text(self) -> str:
        """The text up to the start of the loop's second round: what is worth parsing."""
        return trim_loop(self.text)

    def _count_lines(self, piece: str) -> bool:
        """Count the lines `piece` ends; True when one has come back LINE_REPEATS times."""
        first, *rest = piece.split("\n")
        self._line.append(first)
        ended = ["".join(self._line), *rest[:-1]]
        self._line = [rest[-1]]
        for line in ended:
            line = line.strip()
            if len(line) >= MIN_LINE:
                seen = self._lines[line] = self._lines.get(line, 0) + 1
                if seen >= LINE_REPEATS:
                    return True
        return False


def tail_period(text: str) -> int | None:
    """The length of the shortest stretch that the end of `text` repeats REPEATS times, or None."""
    tail = text[-WINDOW:]
    size = len(tail)
    low = max(MIN_PERIOD, -(-MIN_LOOP_CHARS // REPEATS))
    high = min(MAX_PERIOD, size // REPEATS)
    if high < low:
        return None
    probe = tail[-MIN_PERIOD:]
    # a loop of period p has `probe` again ending p characters before the end (at size - p)
    start, end = size - MIN_PERIOD - high, size - low
    while (found := tail.rfind(probe, start, end)) >= 0:
        period = size - MIN_PERIOD - found
        if tail[-REPEATS * period:-period] == tail[-(REPEATS - 1) * period:]:
            return period
        end = found + MIN_PERIOD - 1  # the next candidate: a longer period
    return None


def trim_loop(text: str) -> str:
    """`text` without the repeats at its end (one round of the loop is kept)."""
    period = tail_period(text)
    if period is not None:
        unit = text[-period:]
        period = next((q for q in range(MIN_PERIOD, period) if period % q == 0
                       and unit == text[-q:] * (period // q)), period)  # the shortest round
        while len(text) >= 2 * period and text[-period:] == text[-2 * period:-period]:
            text = text[:-period]
        head, _, last = text.rpartition("\n")
        if head and last.strip() and any(line.strip().startswith(last.strip()) for line in head.split("\n")):
            text = head + "\n"  # the start of one more round, where the stream was stopped
        return text
    seen: set[str] = set()
    kept: list[str] = []
    lines = text.split("\n")
    for number, line in enumerate(lines):
        key = line.strip()
        repeat = len(key) >= MIN_LINE and key in seen
        cut_repeat = number == len(lines) - 1 and key and any(s.startswith(key) for s in seen)
        if repeat or cut_repeat:  # a repeat, or the start of one where the stream was stopped
            continue
        seen.add(key)
        kept.append(line)
    return "\n".join(kept)
