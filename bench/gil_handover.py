"""How long a table repaint stalls the window while another thread computes in Python.

A QTableView over a Python model (`--rows` x 8 cells, like the Documents table) is repainted
from the event loop every 20 ms for `--seconds`, while a second thread spins in pure Python
(as a run's thread does when it parses, grounds or packs vectors). Every data() call Qt makes
from its event loop takes the GIL again, so each waits for the spinning thread to hand it
over: at most `sys.getswitchinterval()`. Prints JSON per switch interval (5 ms is CPython's
default, 1 ms is what `gui/app.favour_the_window` sets): repaint ticks, the longest gap
between them and the data() calls served; and the same with no spinning thread.

    QT_QPA_PLATFORM=offscreen python bench/gil_handover.py [--rows 40] [--seconds 1.5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def measure(interval: float, spin: bool, rows: int, seconds: float) -> dict:
    """One measurement in this process (a fresh one per setting: see main)."""
    from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, QTimer
    from PySide6.QtWidgets import QApplication, QTableView

    app = QApplication.instance() or QApplication([])
    served = [0]

    class Model(QAbstractTableModel):
        def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008 - Qt's default
            return rows

        def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008
            return 8

        def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
            served[0] += 1
            return f"{index.row()}, {index.column()}" if role == Qt.ItemDataRole.DisplayRole else None

    view = QTableView()
    model = Model()
    view.setModel(model)
    view.resize(900, 700)
    view.show()
    stop = threading.Event()

    def compute() -> None:
        count = 0
        while not stop.is_set():
            count += 1

    if spin:
        threading.Thread(target=compute, daemon=True).start()
    sys.setswitchinterval(interval)
    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now
        view.viewport().update()

    timer = QTimer(interval=20)
    timer.timeout.connect(tick)
    timer.start()
    QTimer.singleShot(int(seconds * 1000), app.quit)
    app.exec()
    stop.set()
    return {"switch_interval_ms": interval * 1000, "busy_thread": spin, "ticks": len(gaps),
            "longest_gap_ms": round(max(gaps, default=0.0) * 1000, 1), "data_calls": served[0]}


def main() -> int:
    """Measure each setting in a fresh interpreter and print one JSON line per setting."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument("--one", nargs=2, metavar=("INTERVAL", "SPIN"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(float(args.one[0]), args.one[1] == "1", args.rows, args.seconds)))
        return 0
    for interval, spin in ((0.005, False), (0.005, True), (0.001, True), (0.0005, True)):
        subprocess.run([sys.executable, __file__, "--rows", str(args.rows), "--seconds", str(args.seconds),
                        "--one", str(interval), "1" if spin else "0"], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
