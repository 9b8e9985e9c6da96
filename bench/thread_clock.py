"""Which threads ran, and who waited for a CPU: per-thread scheduler clocks read from /proc (Linux).

`ThreadClocks.snapshot()` reads every thread's /proc/self/task/<tid>/schedstat (time on a CPU,
time ready but waiting for one) through kept file descriptors, about 60 us for 20 threads, and
the machine's /proc/stat line (busy and stolen CPU) and CPU pressure (/proc/pressure/cpu: time
some task waited for a CPU). `difference()` turns two snapshots into per-thread milliseconds, so
a stall of the GUI thread can say which thread was running while the GUI thread was not: with
the GIL only one of them runs Python at a time. Where /proc has none of this, snapshots are empty.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

TASKS = "/proc/self/task"
TICK_S = 1 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0.01


@dataclass(frozen=True)
class Snapshot:
    """Scheduler clocks at one moment: per thread (ran ns, waited ns), the machine's CPU ticks."""

    at: float
    threads: dict[int, tuple[int, int]] = field(default_factory=dict)
    machine_busy_s: float = 0.0  # all CPUs, user+system+irq, excluding idle, I/O wait and steal
    machine_steal_s: float = 0.0  # taken by the hypervisor
    pressure_s: float = 0.0  # /proc/pressure/cpu "some": time at least one task waited for a CPU


@dataclass(frozen=True)
class ThreadTime:
    """What one thread did between two snapshots, in ms."""

    name: str
    ran_ms: float
    waited_ms: float  # ready to run, no CPU free


def _read(fd: int) -> bytes:
    return os.pread(fd, 256, 0)


class ThreadClocks:
    """Keeps a descriptor per thread's schedstat file and reads them all on `snapshot()`."""

    def __init__(self) -> None:
        self._fds: dict[int, int] = {}
        self._names: dict[int, str] = {}
        self._stat = self._open("/proc/stat")
        self._pressure = self._open("/proc/pressure/cpu")

    @staticmethod
    def _open(path: str) -> int | None:
        try:
            return os.open(path, os.O_RDONLY)
        except OSError:
            return None

    def _refresh(self) -> None:
        try:
            alive = {int(tid) for tid in os.listdir(TASKS)}
        except OSError:
            return
        for tid in set(self._fds) - alive:
            os.close(self._fds.pop(tid))
        for tid in alive - set(self._fds):
            fd = self._open(f"{TASKS}/{tid}/schedstat")
            if fd is not None:
                self._fds[tid] = fd

    def snapshot(self) -> Snapshot:
        """Every thread's clocks and the machine's, now."""
        self._refresh()
        threads = {}
        for tid, fd in list(self._fds.items()):
            try:
                ran, waited = _read(fd).split()[:2]
                threads[tid] = (int(ran), int(waited))
            except (OSError, ValueError):
                continue
        busy = steal = pressure = 0.0
        if self._stat is not None:
            ticks = [int(v) for v in _read(self._stat).split(b"\n", 1)[0].split()[1:]]
            # user nice system idle iowait irq softirq steal ...
            busy = (sum(ticks[:3]) + sum(ticks[5:7])) * TICK_S
            steal = ticks[7] * TICK_S if len(ticks) > 7 else 0.0
        if self._pressure is not None:
            some = _read(self._pressure).split(b"\n", 1)[0]
            pressure = int(some.rsplit(b"total=", 1)[1]) / 1e6
        return Snapshot(time.perf_counter(), threads, busy, steal, pressure)

    def name(self, tid: int) -> str:
        """The thread's Python name, else its kernel name (Qt's and native threads)."""
        for thread in threading.enumerate():
            if thread.native_id == tid:
                return thread.name
        if tid not in self._names:
            try:
                with open(f"{TASKS}/{tid}/comm") as comm:
                    self._names[tid] = f"[{comm.read().strip()}]"
            except OSError:
                self._names[tid] = f"[{tid}]"
        return self._names[tid]

    def difference(self, before: Snapshot, after: Snapshot) -> list[ThreadTime]:
        """Per thread, what it did from `before` to `after`, busiest first."""
        spent = []
        for tid, (ran, waited) in after.threads.items():
            ran0, waited0 = before.threads.get(tid, (0, 0))
            spent.append(ThreadTime(self.name(tid), (ran - ran0) / 1e6, (waited - waited0) / 1e6))
        return sorted(spent, key=lambda t: -t.ran_ms)

    def close(self) -> None:
        """Close the kept descriptors."""
        for fd in [*self._fds.values(), self._stat, self._pressure]:
            if fd is not None:
                os.close(fd)
        self._fds.clear()
