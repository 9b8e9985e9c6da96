"""Why was the GUI thread late? A watchdog thread that samples its stack while it is.

`StallTracer.beat()` is called on every tick of the GUI thread's timer. A daemon thread
wakes every 2 ms; while the last beat is older than `threshold_ms` it samples the GUI
thread's Python stack (`sys._current_frames()`), the other threads' innermost frames, and
notes any garbage collection that ran (and on which thread). When the beat comes back the
samples become one *episode*; `report()` prints each episode's length and its most common
stacks to stderr. Sampling needs the GIL, so a gap between samples is itself a clue: some
thread held the GIL without letting go.

    python bench/gui_responsiveness.py --trace-stalls 40
"""

from __future__ import annotations

import collections
import gc
import itertools
import sys
import threading
import time
import traceback

SAMPLE_S = 0.002
# a thread whose innermost frame is in one of these is waiting, not working
IDLE = ("threading.py", "selectors.py", "queue.py", "socket.py", "socketserver.py", "_backends/sync.py")


def _stack(frame, limit: int = 14) -> tuple[str, ...]:
    """The innermost `limit` frames of `frame`, as 'file:line function' strings."""
    summary = traceback.extract_stack(frame)[-limit:]
    return tuple(f"{entry.filename.rsplit('/', 2)[-2:]!s}:{entry.lineno} {entry.name}"
                 .replace("['", "").replace("', '", "/").replace("']", "") for entry in summary)


class StallTracer:
    """Samples the GUI thread while its heartbeat is late; see the module docstring."""

    def __init__(self, threshold_ms: float = 40.0) -> None:
        self.threshold = threshold_ms / 1000
        self.main_id = threading.main_thread().ident
        self._beat = time.perf_counter()
        self._schedstat = f"/proc/self/task/{threading.main_thread().native_id}/schedstat"
        self._cpu = self._now_cpu()  # the GUI thread's CPU, its run-queue wait, the process's CPU, at the beat
        self.episodes: list[dict] = []
        self._samples: list[tuple[float, tuple[str, ...], dict[str, tuple[str, ...]]]] = []
        self._gcs: list[tuple[float, int, str, float]] = []  # (start, generation, thread, ms)
        self._gc_started: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="stall-tracer", daemon=True)

    def start(self) -> None:
        """Start watching (and noting collections)."""
        gc.callbacks.append(self._on_gc)
        self._beat = time.perf_counter()
        self._thread.start()

    def stop(self) -> None:
        """Stop watching."""
        self._stop.set()
        self._thread.join(1)
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)

    def beat(self) -> None:
        """Called by the GUI thread on every timer tick."""
        self._cpu = self._now_cpu()
        self._beat = time.perf_counter()

    def _now_cpu(self) -> tuple[float, float, float]:
        """The GUI thread's CPU time, its time waiting for a CPU (the machine's load), the process's CPU."""
        try:
            with open(self._schedstat) as stat:
                waited = int(stat.read().split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            waited = 0.0
        return time.thread_time(), waited, time.process_time()

    def _on_gc(self, phase: str, info: dict) -> None:
        ident = threading.get_ident()
        if phase == "start":
            self._gc_started[ident] = time.perf_counter()
            return
        began = self._gc_started.pop(ident, None)
        if began is not None:
            ms = (time.perf_counter() - began) * 1000
            if ms > 5 or info.get("generation") == 2:
                self._gcs.append((began, info.get("generation", -1), threading.current_thread().name, ms))

    def _watch(self) -> None:
        in_stall_since, cpu_before = None, (0.0, 0.0, 0.0)
        while not self._stop.wait(SAMPLE_S):
            now = time.perf_counter()
            beat, cpu = self._beat, self._cpu
            if now - beat > self.threshold:
                if in_stall_since is None:
                    in_stall_since, cpu_before = beat, cpu
                frames = sys._current_frames()
                main = frames.get(self.main_id)
                others = {}
                for thread in threading.enumerate():
                    if thread.ident != self.main_id and thread.ident in frames and thread.name != "stall-tracer":
                        others[thread.name] = _stack(frames[thread.ident], 6)
                self._samples.append((now, _stack(main) if main is not None else (), others))
            elif in_stall_since is not None:
                self._close(in_stall_since, beat, *(now - then for now, then in zip(cpu, cpu_before)))
                in_stall_since = None

    def _close(self, began: float, ended: float, gui_cpu: float, gui_waited: float, process_cpu: float) -> None:
        samples, self._samples = self._samples, []
        gaps = [b[0] - a[0] for a, b in itertools.pairwise(samples)]
        self.episodes.append({
            "at": began, "ms": (ended - began) * 1000, "samples": samples,
            "gui_cpu_ms": gui_cpu * 1000, "gui_waited_ms": gui_waited * 1000, "process_cpu_ms": process_cpu * 1000,
            "max_gap_ms": max(gaps, default=0.0) * 1000,
            "gcs": [g for g in self._gcs if began - 0.01 <= g[0] <= ended],
        })

    def report(self, origin: float, out=sys.stderr, top: int = 3) -> None:
        """Print every episode: when, how long, its collections and its most common stacks."""
        for episode in self.episodes:
            print(f"\n=== stall {episode['ms']:.0f} ms at +{episode['at'] - origin:.2f} s "
                  f"(GUI thread: CPU {episode['gui_cpu_ms']:.0f} ms, "
                  f"waiting for a CPU {episode['gui_waited_ms']:.0f} ms; "
                  f"process CPU {episode['process_cpu_ms']:.0f} ms), "
                  f"{len(episode['samples'])} samples, longest gap between samples "
                  f"{episode['max_gap_ms']:.0f} ms", file=out)
            for _began, generation, thread, ms in episode["gcs"]:
                print(f"  gc gen{generation} on {thread}: {ms:.1f} ms", file=out)
            counts = collections.Counter(stack for _, stack, _ in episode["samples"])
            for stack, count in counts.most_common(top):
                print(f"  -- GUI thread, {count} samples:", file=out)
                for line in stack:
                    print(f"     {line}", file=out)
            others = collections.Counter()
            for _, _, threads in episode["samples"]:
                for name, stack in threads.items():
                    if stack and not any(idle in stack[-1] for idle in IDLE):
                        others[(name, stack)] += 1
            for (name, stack), count in others.most_common(6):
                print(f"  -- {name}, {count} samples: {' < '.join(reversed(stack))}", file=out)
