"""Why was the GUI thread late? A watchdog thread that samples its stack while it is.

`StallTracer.beat()` is called on every tick of the GUI thread's timer. A daemon thread
wakes every 2 ms; while the last beat is older than `threshold_ms` it samples the GUI
thread's Python stack (`sys._current_frames()`), the other threads' innermost frames, and
notes any garbage collection that ran (and on which thread). When the beat comes back the
samples become one *episode*; `report()` prints each episode's length and its most common
stacks to stderr. Sampling needs the GIL, so a gap between samples is itself a clue: some
thread held the GIL without letting go; the other threads' stacks in the sample right after
the longest gap show where the holder was when it let go. Every 10 ms the watchdog also
notes each thread's scheduler clocks (bench/thread_clock.py), so an episode says which
threads were on a CPU while the GUI thread was not (with the GIL, only one runs Python at a
time), which waited for a CPU, and how busy the whole machine was (another process's load,
the hypervisor's steal).

    python bench/gui_responsiveness.py --trace-stalls 40
"""

from __future__ import annotations

import collections
import gc
import itertools
import os
import sys
import threading
import time
import traceback

from thread_clock import Snapshot, ThreadClocks

SAMPLE_S = 0.002
CLOCKS_EVERY = 5  # samples: read the threads' clocks every 10 ms outside a stall
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
        self._imports: list[tuple[float, str, str, str]] = []  # (when, thread, "import"/"compile", module/file)
        self._auditing = False
        self._clocks = ThreadClocks()
        self._recent: collections.deque[Snapshot] = collections.deque(maxlen=100)  # the last second
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="stall-tracer", daemon=True)

    def start(self) -> None:
        """Start watching (and noting collections)."""
        gc.callbacks.append(self._on_gc)
        self._auditing = True
        if not getattr(StallTracer, "_hooked", False):  # an audit hook stays for the process's life
            sys.addaudithook(StallTracer._on_audit)
            StallTracer._hooked = True
        StallTracer._current = self
        self._beat = time.perf_counter()
        self._thread.start()

    def stop(self) -> None:
        """Stop watching."""
        self._stop.set()
        self._thread.join(1)
        self._clocks.close()
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)
        self._auditing = False

    @staticmethod
    def _on_audit(event: str, args: tuple) -> None:
        """Note every module imported and every source compiled (CPython compiles a module whose
        .pyc is missing or stale while holding the GIL: an import on a worker thread can stall the window)."""
        if event not in ("import", "compile"):
            return
        tracer = getattr(StallTracer, "_current", None)
        if tracer is not None and tracer._auditing:
            what = args[0] if event == "import" else str(args[1])
            tracer._imports.append((time.perf_counter(), threading.current_thread().name, event, what))

    def imports_since(self, began: float) -> list[tuple[float, str, str, str]]:
        """Imports and compiles noted since `began` (perf_counter), in order."""
        return [entry for entry in self._imports if entry[0] >= began]

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
        in_stall_since, cpu_before, rounds = None, (0.0, 0.0, 0.0), 0
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
                        others[thread.name] = _stack(frames[thread.ident], 10)
                self._samples.append((now, _stack(main) if main is not None else (), others))
            else:
                if in_stall_since is not None:
                    self._close(in_stall_since, beat, *(now - then for now, then in zip(cpu, cpu_before)))
                    in_stall_since = None
                rounds += 1
                if rounds % CLOCKS_EVERY == 0:
                    self._recent.append(self._clocks.snapshot())

    def _clocks_since(self, began: float) -> tuple[Snapshot, Snapshot] | None:
        """The last clocks read before `began`, and the clocks now."""
        before = [snap for snap in self._recent if snap.at <= began]
        return (before[-1], self._clocks.snapshot()) if before else None

    def _close(self, began: float, ended: float, gui_cpu: float, gui_waited: float, process_cpu: float) -> None:
        samples, self._samples = self._samples, []
        gaps = [b[0] - a[0] for a, b in itertools.pairwise(samples)]
        longest = max(range(len(gaps)), key=gaps.__getitem__) + 1 if gaps else 0
        clocks = self._clocks_since(began)
        self.episodes.append({
            "at": began, "ms": (ended - began) * 1000, "samples": samples,
            "gui_cpu_ms": gui_cpu * 1000, "gui_waited_ms": gui_waited * 1000, "process_cpu_ms": process_cpu * 1000,
            "max_gap_ms": max(gaps, default=0.0) * 1000,
            "after_gap": samples[longest][2] if samples else {},
            "gcs": [g for g in self._gcs if began - 0.01 <= g[0] <= ended],
            "imports": [i for i in self._imports if began - 0.02 <= i[0] <= ended],  # started just before too
            "clocks": clocks and (clocks[1].at - clocks[0].at, self._clocks.difference(*clocks), *clocks),
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
            imported = collections.Counter((thread, kind) for _, thread, kind, _ in episode["imports"])
            for (thread, kind), count in imported.items():
                names = [what.rsplit("/", 1)[-1] if kind == "compile" else what
                         for _, who, how, what in episode["imports"] if (who, how) == (thread, kind)]
                print(f"  {kind} on {thread} ({count}): {', '.join(names[:12])}{' ...' if count > 12 else ''}",
                      file=out)
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
            if episode["max_gap_ms"] > 10:
                print(f"  right after the longest gap ({episode['max_gap_ms']:.0f} ms):", file=out)
                for name, stack in episode["after_gap"].items():
                    if stack and not any(idle in stack[-1] for idle in IDLE):
                        print(f"     {name}: {' < '.join(reversed(stack))}", file=out)
            if episode["clocks"]:
                _print_clocks(*episode["clocks"], out)


def _print_clocks(span_s: float, spent, before: Snapshot, after: Snapshot, out) -> None:
    """Which threads were on a CPU over the episode (from the clocks read just before it)."""
    cores = os.cpu_count() or 1
    print(f"  over {span_s * 1000:.0f} ms from the clocks before it: machine busy "
          f"{(after.machine_busy_s - before.machine_busy_s) * 1000:.0f} ms of {span_s * 1000 * cores:.0f} "
          f"({cores} CPUs), stolen {(after.machine_steal_s - before.machine_steal_s) * 1000:.0f} ms, "
          f"some task waiting for a CPU {(after.pressure_s - before.pressure_s) * 1000:.0f} ms", file=out)
    for thread in spent:
        if thread.ran_ms >= 1 or thread.waited_ms >= 1:
            print(f"     {thread.name}: on a CPU {thread.ran_ms:.0f} ms, waiting for one {thread.waited_ms:.0f} ms",
                  file=out)
