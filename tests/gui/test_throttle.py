"""Run redraws are throttled: the first at once, the latest at the end of the period, none lost."""

from __future__ import annotations

from docatlas.gui.throttle import Throttle
from PySide6.QtCore import QObject


def test_pokes_inside_a_period_are_drawn_once_at_its_end(qtbot):
    owner = QObject()
    drawn: list[int] = []
    state = {"value": 0}
    throttle = Throttle(lambda: drawn.append(state["value"]), owner, period_ms=50)
    for value in (1, 2, 3):
        state["value"] = value
        throttle.poke()
    assert drawn == [1]  # the first at once; 2 and 3 wait for the period's end
    qtbot.waitUntil(lambda: len(drawn) == 2, timeout=2000)
    assert drawn == [1, 3]  # the latest state, once
    qtbot.wait(120)
    assert drawn == [1, 3]  # nothing more was poked: nothing more is drawn
