"""Redraw at most a few times a second: the first call at once, the latest one when the period ends.

A run reports progress for every chunk stored and every file read, tens of times a second; each
report redrew the progress bars, the stage label, the hosts and the status bar, and a progress
bar repaints inside `setValue`. On a busy 2-core laptop that was the window's own share of the
stalls during a run. Ten draws a second still cost the GUI thread an eighth of a core over a
run of 4,500 model calls (bench/gui_responsiveness.py: 20.3 s of its CPU in 152 s); four cost
14.3-14.9 s, and the longest stall fell from 60-125 ms to 44-66 ms. What is drawn is always the
run's current state, so skipping reports between two draws loses nothing, and the last report
is always drawn.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

DRAW_MS = 250  # four redraws a second: the bar still moves, and the window keeps its CPU for the person


class Throttle(QObject):
    """Call `draw` on `poke`, at most once per `period_ms`; a poke inside the period is drawn at its end."""

    def __init__(self, draw: Callable[[], None], parent: QObject, period_ms: int = DRAW_MS):
        super().__init__(parent)
        self._draw = draw
        self._pending = False
        self._timer = QTimer(self, singleShot=True, interval=period_ms)
        self._timer.timeout.connect(self._period_ended)

    def poke(self) -> None:
        """Something changed: draw now, or at the end of the period when a draw was just made."""
        if self._timer.isActive():
            self._pending = True
            return
        self._draw()
        self._timer.start()

    def _period_ended(self) -> None:
        if self._pending:
            self._pending = False
            self._draw()
            self._timer.start()
