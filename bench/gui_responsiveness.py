"""GUI responsiveness while ingesting: how long is the window's event loop ever blocked?

The real main window ingests about 200 chunks from the test Ollama server (run in its own
process, 0.05 s per model call) while a 5 ms QTimer on the GUI thread records how late each
tick fires. A tick that is late by more than a frame is a stall the person would feel.
Prints JSON: chunks, model calls, wall time, ticks, and the max / p99 / p50 stall in ms.
Target: no stall over 50 ms.

The workspace already holds `--existing-chunks` extracted chunks (100,000 by default, in
documents of `--per-document` chunks, written straight through the store, no model
involved) before the window opens; the run then adds the corpus on top (`--documents 40`, or
about `--chunks` chunks with `--documents 0`). Also measured on that workspace: the window's
open (from building it to its first paint, and to the Documents table's first rows; the
tokenizer and the run's modules, which app.main loads before it builds the window, included),
the longest stall of the event loop while it opens (building the window included), when in
the run the longest stall came, the GUI thread's whole CPU time over the run and its own in
its longest gap (what it did itself, whatever else runs on the machine), and `docatlas
status` in a fresh process (interpreter start included, output to /dev/null; the best and the
median of three; `docatlas --version` beside it is the start-up alone).

    QT_QPA_PLATFORM=offscreen python bench/gui_responsiveness.py [--existing-chunks 100000] [--documents 40]
    QT_QPA_PLATFORM=offscreen python bench/gui_responsiveness.py --existing-chunks 0 --documents 0 --chunks 200

`--trace-stalls 40` samples the GUI thread's stack whenever a tick is 40 ms late and prints
each stall's stacks, collections, imports, which threads were on a CPU and the machine's load
to stderr (bench/stall_trace.py), then every module imported after the run began;
`--reuse-fill DIR` keeps the filled workspace in DIR for the next run of the same size.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "desktop"), str(ROOT / "tests"), str(ROOT / "bench")]

from fixtures.ollama_fixture import default_models
from fixtures.ollama_server import FakeOllama
from fixtures.scripted_model import lightrag_responder
from ingest import corpus
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication

TICK_MS = 5
CHUNK_TOKENS = 300


def serve(latency: float, pipe) -> None:
    """Child process: the test server, so its work does not share the GUI's interpreter."""
    with FakeOllama(default_models()) as server:
        server.responder = lightrag_responder
        server.latency = latency
        pipe.send(server.host)
        pipe.recv()  # "stop"
        pipe.send(len([r for r in server.requests if r["path"] in ("/api/chat", "/api/embed")]))


def cpu_wait_s() -> float | None:
    """Seconds this thread has been ready to run but waited for a CPU (None where /proc has no schedstat)."""
    try:
        with open(f"/proc/self/task/{threading.get_native_id()}/schedstat") as stat:
            return int(stat.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


class StallMeter:
    """A precise 5 ms timer on the GUI thread; records how late every tick fires."""

    def __init__(self, tracer=None) -> None:
        self.stalls_ms: list[float] = []
        self.gui_cpu_ms: list[float] = []  # the GUI thread's own CPU time in each gap (not the machine's load)
        # each lateness less the time the GUI thread was ready to run but had no CPU (Linux schedstat):
        # what the process itself made it wait, its own work and the GIL, on a loaded machine too
        self.own_stalls_ms: list[float] = []
        self.tracer = tracer
        self.timer = QTimer(interval=TICK_MS, timerType=Qt.TimerType.PreciseTimer)
        self.timer.timeout.connect(self._tick)
        self._last = 0.0

    def start(self) -> None:
        """Start measuring."""
        self._last = time.perf_counter()
        self._last_cpu = time.thread_time()
        self._last_wait = cpu_wait_s()
        self.timer.start()

    def stop(self) -> None:
        """Stop measuring."""
        self.timer.stop()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.stalls_ms.append(max(0.0, (now - self._last) * 1000 - TICK_MS))
        self._last = now
        cpu = time.thread_time()
        self.gui_cpu_ms.append((cpu - self._last_cpu) * 1000)
        self._last_cpu = cpu
        waited = cpu_wait_s()
        if waited is not None and self._last_wait is not None:
            self.own_stalls_ms.append(max(0.0, self.stalls_ms[-1] - (waited - self._last_wait) * 1000))
        self._last_wait = waited
        if self.tracer is not None:
            self.tracer.beat()

    def percentile(self, q: float, own: bool = False) -> float:
        """The q-th percentile of the lateness (`own`: less the waits for a CPU), in ms."""
        ordered = sorted(self.own_stalls_ms if own else self.stalls_ms)
        return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))] if ordered else 0.0


def write_corpus(folder: Path, target: int) -> int:
    """Write documents that cut into about `target` chunks; return the exact count."""
    import shutil

    from docatlas.core.ingest.chunking import chunk_document
    from docatlas.core.ingest.loaders import load_document

    asked = target
    for _ in range(3):
        shutil.rmtree(folder, ignore_errors=True)
        corpus(folder, asked, CHUNK_TOKENS)
        count = sum(len(chunk_document(load_document(p), CHUNK_TOKENS, CHUNK_TOKENS // 10))
                    for p in folder.iterdir())
        if abs(count - target) <= target // 20:
            break
        asked = max(10, round(asked * target / count))
    return count


class FirstPaint(QObject):
    """Notes when a widget is first painted."""

    def __init__(self) -> None:
        super().__init__()
        self.at: float | None = None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Record the first paint event."""
        if self.at is None and event.type() == QEvent.Type.Paint:
            self.at = time.perf_counter()
        return False


def status_seconds(data_dir: str, runs: int = 3, command: tuple[str, ...] = ("status",)) -> list[float]:
    """Wall time of `docatlas status` (or another command) in a fresh interpreter, `runs` times."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "desktop"), os.environ.get("PYTHONPATH", "")])}
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "docatlas", "--data-dir", data_dir, *command], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"docatlas status failed: {done.stderr.decode(errors='replace')}")
    return times


def fill_existing(db_path: Path, chunks: int, per_document: int = 100) -> int:
    """Write `chunks` extracted chunks into the workspace before the window opens; return the documents."""
    if chunks <= 0:
        return 0
    from docatlas.core.base.settings import Settings
    from docatlas.core.prompts.store import fingerprint, profile_for
    from docatlas.core.storage.database import Store
    from fixtures.big_workspace import fill_workspace

    with Store(db_path) as store:
        profile = Settings().extraction.profile  # stamped as a run stamps them: not stale
        return fill_workspace(store, chunks, per_document=per_document, profile=profile,
                              prompt_hash=fingerprint(profile_for(store, profile)))


def main() -> int:
    """Ingest with the window open and report the event loop's stalls."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--existing-chunks", type=int, default=100_000,
                        help="extracted chunks already in the workspace when the window opens")
    parser.add_argument("--per-document", type=int, default=20, help="chunks per existing document")
    parser.add_argument("--documents", type=int, default=40,
                        help="add this many documents (about ten chunks each) instead of about --chunks chunks")
    parser.add_argument("--trace-stalls", type=float, default=0, metavar="MS",
                        help="sample the GUI thread's stack whenever a tick is this many ms late; print to stderr")
    parser.add_argument("--reuse-fill", type=Path, metavar="DIR",
                        help="keep the filled workspace in DIR and copy it from there next time (same sizes)")
    args = parser.parse_args()

    here, there = multiprocessing.Pipe()
    child = multiprocessing.Process(target=serve, args=(args.latency, there), daemon=True)
    child.start()
    host = here.recv()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(DOCATLAS_DATA_DIR=f"{tmp}/ws", DOCATLAS_CONFIG_DIR=f"{tmp}/cfg",
                          DOCATLAS_LOG_DIR=f"{tmp}/log")
        from docatlas.core.base import paths
        from docatlas.core.base.settings import Settings, save_settings
        from docatlas.gui.app import favour_the_window, load_run_modules, load_tokenizer, settle_memory
        from docatlas.gui.main_window import MainWindow

        docs = Path(tmp) / "docs"
        if args.documents:
            corpus(docs, args.documents * 10, CHUNK_TOKENS)  # about ten chunks each
        else:
            write_corpus(docs, args.chunks)
        filling = time.perf_counter()
        kept = args.reuse_fill / f"{args.existing_chunks}-{args.per_document}" if args.reuse_fill else None
        copied = kept is not None and (kept / "documents").is_file()
        if copied:
            import shutil
            shutil.copytree(kept / "ws", paths.data_dir(), dirs_exist_ok=True)
            existing_documents = int((kept / "documents").read_text())
        else:
            existing_documents = fill_existing(paths.database_path(paths.data_dir()), args.existing_chunks,
                                               args.per_document)
            if kept is not None:
                import shutil
                shutil.copytree(paths.data_dir(), kept / "ws", dirs_exist_ok=True)
                (kept / "documents").write_text(str(existing_documents))
        fill_s = time.perf_counter() - filling
        status_s = status_seconds(str(paths.data_dir()))
        version_s = status_seconds(str(paths.data_dir()), command=("--version",))  # the start-up alone
        settings = Settings().with_overrides(
            ollama__host=host, ollama__parallel=args.parallel, chunking__chunk_tokens=CHUNK_TOKENS,
            chunking__overlap_tokens=CHUNK_TOKENS // 10)
        save_settings(settings, paths.settings_path())
        app = QApplication.instance() or QApplication(sys.argv[:1])
        tracer = None
        if args.trace_stalls:
            from stall_trace import StallTracer
            tracer = StallTracer(args.trace_stalls)
            tracer.start()
        origin = time.perf_counter()
        opening = StallMeter(tracer)
        first_paint = FirstPaint()
        opened = time.perf_counter()
        load_tokenizer()  # as app.main does before it builds the window (in the open time, before the loop)
        load_run_modules()
        opening.start()
        window = MainWindow(paths.data_dir(), settings=settings)
        window.installEventFilter(first_paint)
        rows_shown = {"at": None}
        window.ingestion.reader.rows_read.connect(
            lambda found: rows_shown.update(at=rows_shown["at"] or time.perf_counter()) if found.whole else None)
        window.resize(1280, 800)
        window.show()
        settle_memory()  # as app.main does once the window is up
        favour_the_window()
        meter = StallMeter(tracer)
        run_end = {"tick": None}  # how many meter ticks came before the run's last progress report
        window.ingestion.progressed.connect(lambda item: run_end.update(tick=len(meter.stalls_ms)) if getattr(
            item, "stage", "") in ("done", "cancelled") else None)
        window.ingestion.state_changed.connect(lambda: None if window.ingestion.busy else app.quit())
        started = time.perf_counter()

        def begin() -> None:
            if window.documents_panel.reading:  # the workspace is still being read: wait for it
                QTimer.singleShot(50, begin)
                return
            opening.stop()
            meter.start()
            window.documents_panel.add_paths([docs])

        QTimer.singleShot(200, begin)
        app.exec()
        wall = time.perf_counter() - started - 0.2
        meter.stop()
        last = window.ingestion.last_progress
        window.shutdown()
        window.close()
        here.send("stop")
        calls = here.recv()
        child.join()
    if tracer is not None:
        tracer.stop()
        print(f"run started at +{started - origin:.2f} s", file=sys.stderr)
        tracer.report(origin)
        late = tracer.imports_since(started)
        print(f"\n{sum(1 for i in late if i[2] == 'import')} imports, "
              f"{sum(1 for i in late if i[2] == 'compile')} compiles after the run began:", file=sys.stderr)
        for when, thread, kind, what in late:
            print(f"  +{when - origin:.3f} s {thread} {kind} {what}", file=sys.stderr)
    stalls = meter.stalls_ms
    print(json.dumps({
        "existing_chunks": args.existing_chunks,
        "existing_documents": existing_documents,
        "fill_copied_s" if copied else "fill_s": round(fill_s, 1),
        "open_to_first_paint_s": round(first_paint.at - opened, 3) if first_paint.at else None,
        "open_to_rows_shown_s": round(rows_shown["at"] - opened, 3) if rows_shown["at"] else None,
        "open_stall_max_ms": round(max(opening.stalls_ms, default=0.0), 1),
        "open_gui_cpu_max_ms": round(max(opening.gui_cpu_ms, default=0.0), 1),
        **({"open_stall_max_less_cpu_wait_ms": round(max(opening.own_stalls_ms), 1)} if opening.own_stalls_ms else {}),
        "status_best_s": round(min(status_s), 3),
        "status_median_s": round(statistics.median(status_s), 3),
        "version_best_s": round(min(version_s), 3),
        "documents_added": last.documents_total if last else 0,
        "chunks": last.chunks_total if last else 0,
        "chunks_done": last.chunks_done if last else 0,
        "model_calls": calls,
        "latency_s": args.latency,
        "parallel": args.parallel,
        "wall_s": round(wall, 2),
        "ticks": len(stalls),
        "stall_max_ms": round(max(stalls, default=0.0), 1),
        # when the longest stall came (the tick's end, in seconds from the run's start)
        "stall_max_at_s": round(sum(TICK_MS + s for s in stalls[:stalls.index(max(stalls)) + 1]) / 1000, 2)
        if stalls else None,
        "stall_p99_ms": round(meter.percentile(99), 1),
        "stall_p50_ms": round(meter.percentile(50), 1),
        "stalls_over_50ms": sum(1 for s in stalls if s > 50),
        # the GUI thread's own CPU time in its longest gap: what it did itself, whatever the machine's load
        "gui_cpu_max_ms": round(max(meter.gui_cpu_ms, default=0.0), 1),
        "gui_cpu_over_50ms": sum(1 for c in meter.gui_cpu_ms if c > 50),
        "gui_cpu_total_s": round(sum(meter.gui_cpu_ms) / 1000, 2),  # all the GUI thread did during the run
        **({"stall_max_less_cpu_wait_ms": round(max(meter.own_stalls_ms), 1),
            "stall_p99_less_cpu_wait_ms": round(meter.percentile(99, own=True), 1),
            "stalls_over_50ms_less_cpu_wait": sum(1 for s in meter.own_stalls_ms if s > 50)}
           if meter.own_stalls_ms else {}),
        # the same maximum until the run's last report, and from it to the run's end (views refreshing)
        "stall_max_until_done_ms": round(max(stalls[:run_end["tick"]], default=0.0), 1),
        "stall_max_after_done_ms": round(max(stalls[run_end["tick"]:], default=0.0), 1)
        if run_end["tick"] is not None else None,
        "target_met": max(stalls, default=0.0) <= 50 and min(status_s) <= 1.0
        and first_paint.at is not None and first_paint.at - opened <= 2.0,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
