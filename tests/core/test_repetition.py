"""The loop detector on its own: it stops a repeating stream early and leaves a varied one alone."""

from __future__ import annotations

from docatlas.core.llm.repetition import RepetitionGuard, tail_period, trim_loop

RECORD = '("entity"<|>Marley<|>person<|>Scrooge\'s late partner.)##\n'


def feed(text: str, step: int = 5) -> tuple[bool, int]:
    guard = RepetitionGuard()
    for start in range(0, len(text), step):
        if guard.feed(text[start:start + step]):
            return True, start
    return False, len(text)


def test_a_repeated_record_is_stopped_within_a_few_rounds():
    text = '("entity"<|>Scrooge<|>person<|>A miser.)##\n' + RECORD * 200
    stopped, at = feed(text)
    assert stopped and at < 8 * len(RECORD)  # not 200 rounds
    guard = RepetitionGuard()
    guard.feed(text[:at + 5])
    assert guard.kept_text().count("Marley") == 1  # one round kept for the parser


def test_a_short_cycle_without_newlines_is_caught_by_its_period():
    text = "Scrooge and Marley, " * 60
    assert tail_period(text) % len("Scrooge and Marley, ") == 0
    assert feed(text)[0]
    assert trim_loop(text) == "Scrooge and Marley, "


def test_a_long_varied_reply_is_never_stopped():
    text = "\n".join(f'("entity"<|>Person {i}<|>person<|>Named in line {i} of the passage.)##'
                     for i in range(300))
    assert feed(text, 7) == (False, len(text))
    assert feed("word " * 20) == (False, 100)  # too short to be worth stopping


def test_a_loop_is_caught_however_the_stream_cuts_it():
    # lines split over many pieces are counted once each; a long period is found in the window
    long_record = '("entity"<|>Marley<|>person<|>' + "A partner of many years, " * 14 + ")##"
    assert 300 < len(long_record) < 400
    text = '("entity"<|>Scrooge<|>person<|>A miser.)##\n' + long_record * 30
    assert tail_period(text) == len(long_record)
    for step in (1, 3, 64):
        stopped, at = feed(text, step)
        assert stopped and at < 6 * len(long_record)
    lines = "Scrooge said it again tonight.\n" * 10
    assert feed(lines, 1)[0] and feed(lines, 2)[0]
