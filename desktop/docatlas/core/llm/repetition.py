"""Spotting a reply that has started repeating itself, while it streams.

Small models fall into loops: the same record, or the same few lines, over and over until
the reply limit. `RepetitionGuard` is fed the streamed pieces and says when the tail of the
text is one stretch repeated (a period of 8-400 characters seen `REPEATS` times in a row), or
when one line has come back `LINE_REPEATS` times. Pure: no I/O, no clock.
"""

from __future__ import annotations

REPEATS = 4  # a stretch seen this many times in a row is a loop
LINE_REPEATS = 6  # ... and so is one non-trivial line seen this many times
MIN_PERIOD, MAX_PERIOD = 8, 400
MIN_LOOP_CHARS = 160  # shorter repeats ("ha ha ha") are not worth stopping for
CHECK_EVERY = 48  # characters between two checks
MIN_LINE = 12  # lines shorter than this ("##", "}") repeat in good replies too


class RepetitionGuard:
    """Fed a reply piece by piece; `feed` returns True once the reply is looping."""

    def __init__(self) -> None:
        self.text = ""
        self._checked = 0
        self._lines: dict[str, int] = {}
        self._line_start = 0
        self.looping = False

    def feed(self, piece: str) -> bool:
        """Add a streamed piece; True when the text now ends in a loop."""
        if self.looping:
            return True
        self.text += piece
        if self._count_lines():
            self.looping = True
        elif len(self.text) - self._checked >= CHECK_EVERY:
            self._checked = len(self.text)
            self.looping = tail_period(self.text) is not None
        return self.looping

    def kept_text(self) -> str:
        """The text up to the start of the loop's second round: what is worth parsing."""
        return trim_loop(self.text)

    def _count_lines(self) -> bool:
        end = self.text.rfind("\n")
        if end < self._line_start:
            return False
        for line in self.text[self._line_start:end].split("\n"):
            line = line.strip()
            if len(line) >= MIN_LINE:
                self._lines[line] = self._lines.get(line, 0) + 1
                if self._lines[line] >= LINE_REPEATS:
                    return True
        self._line_start = end + 1
        return False


def tail_period(text: str) -> int | None:
    """The length of a stretch that the end of `text` repeats REPEATS times, or None."""
    tail = text[-(MAX_PERIOD * REPEATS):]
    for period in range(MIN_PERIOD, min(MAX_PERIOD, len(tail) // REPEATS) + 1):
        if period * REPEATS < MIN_LOOP_CHARS:
            continue
        unit = tail[-period:]
        if all(tail[-period * (i + 1):len(tail) - period * i] == unit for i in range(1, REPEATS)):
            return period
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
