"""The window's one background runner: progress, results, failures, pause/resume, cancel, serial
writes, latest-only keys, GUI-thread handlers, and a shutdown that does not hang."""

from __future__ import annotations

import threading

from docatlas.core.base.errors import LLMError
from docatlas.gui.tasks import TaskRunner
from PySide6.QtCore import Qt


def test_generator_progress_and_result_arrive_in_the_gui_thread(qtbot):
    runner = TaskRunner()
    seen: list[tuple[object, bool]] = []
    results = []
    main = threading.current_thread()

    def job(context):
        yield from range(3)
        return "done"

    task = runner.run("counting", job, on_progress=lambda i: seen.append((i, threading.current_thread() is main)),
                      on_success=results.append)
    with qtbot.waitSignal(task.finished, timeout=5000):
        pass
    assert seen == [(0, True), (1, True), (2, True)]
    assert results == ["done"]
    assert runner.active == []


def test_failures_carry_one_sentence_and_unexpected_ones_point_at_the_log(qtbot, caplog):
    runner = TaskRunner()
    failures = []

    def user_error(context):
        raise LLMError("Ollama could not answer; try again.")

    def bug(context):
        raise ZeroDivisionError("boom")

    for job in (user_error, bug):
        task = runner.run("Testing", job, on_failure=failures.append)
        with qtbot.waitSignal(task.finished, timeout=5000):
            pass
    assert failures[0].message == "Ollama could not answer; try again."
    assert "unexpectedly" in failures[1].message and "log" in failures[1].message
    assert "boom" in caplog.text  # the detail went to the log


def test_pause_stops_pulling_and_cancel_wakes_a_paused_job(qtbot):
    runner = TaskRunner()
    pulled: list[int] = []
    gate = threading.Event()

    def job(context):
        for i in range(1000):
            if context.cancel.is_set():
                return "stopped"
            context.cancel.wait(0.002)  # a step of work takes a moment
            pulled.append(i)
            if i == 2:
                gate.set()
            yield i
        return "all"

    results = []
    task = runner.run("long", job, on_success=results.append)
    assert gate.wait(5)
    task.pause()
    count = len(pulled)
    assert task.is_paused
    qtbot.wait(50)  # a negative check needs time to pass: nothing more is pulled meanwhile
    assert len(pulled) <= count + 1  # at most the step that was being pulled
    task.cancel()
    with qtbot.waitSignal(task.finished, timeout=5000):
        pass
    assert results == ["stopped"]
    assert len(pulled) < 1000


def test_plain_function_jobs_report_through_the_context(qtbot):
    runner = TaskRunner()
    pieces = []
    results = []

    def job(context):
        for piece in ("a", "b"):
            context.report(piece)
        return "ab"

    task = runner.run("streaming", job, on_progress=pieces.append, on_success=results.append)
    with qtbot.waitSignal(task.finished, timeout=5000):
        pass
    assert pieces == ["a", "b"] and results == ["ab"]


def _wait_done(qtbot, *tasks) -> None:
    """Until every task has finished (without keeping a reference to them in a blocker)."""
    qtbot.waitUntil(lambda: all(task.is_done for task in tasks), timeout=5000)


def test_writes_run_one_at_a_time_in_order_on_one_thread(qtbot):
    runner = TaskRunner()
    ran: list[tuple[int, str]] = []
    inside = []

    def write(number):
        def job(context):
            inside.append(number)
            assert len(inside) == 1, "two writes at once"
            context.cancel.wait(0.002)  # a write takes a moment
            ran.append((number, threading.current_thread().name))
            inside.remove(number)
            return number
        return job

    tasks = [runner.run(f"write {n}", write(n), writes=True) for n in range(6)]
    _wait_done(qtbot, *tasks)
    assert [n for n, _ in ran] == list(range(6))
    assert {name for _, name in ran} == {"docatlas-writer"}


def test_a_paused_long_write_lets_the_writes_behind_it_through(qtbot):
    runner = TaskRunner()
    steps: list[int] = []
    first, paused = threading.Event(), threading.Event()

    def long_run(context):
        for i in range(5):
            steps.append(i)
            first.set()
            paused.wait(5)  # this step ends only once the test has paused the run
            yield i
        return "ran"

    results = []
    long_task = runner.run("ingestion", long_run, writes=True, on_success=results.append)
    assert first.wait(5)
    long_task.pause()
    paused.set()
    edit = runner.run("an edit", lambda context: "edited", writes=True, on_success=results.append)
    _wait_done(qtbot, edit)
    assert results == ["edited"] and long_task.is_paused and steps == [0]  # nothing pulled while paused
    long_task.resume()
    _wait_done(qtbot, long_task)
    assert results == ["edited", "ran"] and steps == list(range(5))


def test_latest_only_drops_the_waiting_request_with_the_same_key(qtbot):
    runner = TaskRunner()
    gate, started = threading.Event(), threading.Event()
    results = []

    def first(context):
        started.set()
        gate.wait(5)
        return 1

    one = runner.run("draw", first, key="canvas", on_success=results.append)
    assert started.wait(5)
    two = runner.run("draw", lambda context: 2, key="canvas", on_success=results.append)
    three = runner.run("draw", lambda context: 3, key="canvas", on_success=results.append)
    other = runner.run("draw", lambda context: "other", key="minimap", on_success=results.append)
    _wait_done(qtbot, other)  # another key is not held up
    gate.set()
    _wait_done(qtbot, one, two, three)
    assert results == ["other", 1, 3]
    assert two.dropped and not three.dropped


def test_resume_continues_a_paused_generator_to_its_end(qtbot):
    runner = TaskRunner()
    third = threading.Event()

    def job(context):
        for i in range(20):
            if i == 3:
                third.set()
            yield i
        return "all"

    seen, results = [], []
    task = runner.run("long", job, on_progress=seen.append, on_success=results.append)
    task.pause()
    task.resume()
    _wait_done(qtbot, task)
    assert seen == list(range(20)) and results == ["all"]


def test_a_cancelled_waiting_task_never_starts_and_says_so(qtbot):
    runner = TaskRunner()
    gate, started = threading.Event(), threading.Event()
    ran, failures = [], []

    def blocker(context):
        started.set()
        gate.wait(5)

    first = runner.run("first write", blocker, writes=True)
    assert started.wait(5)
    waiting = runner.run("Saving the prompt", lambda context: ran.append(1), writes=True, on_failure=failures.append)
    waiting.cancel()
    gate.set()
    _wait_done(qtbot, first, waiting)
    assert ran == []
    assert failures[0].cancelled and failures[0].message == "Saving the prompt was cancelled before it started."


def test_every_handler_runs_in_the_gui_thread(qtbot):
    runner = TaskRunner()
    main = threading.current_thread()
    threads: list[tuple[str, bool]] = []

    def job(context):
        context.report("a token")
        yield "a step"
        return "result"

    def bug(context):
        raise ZeroDivisionError("boom")

    tasks = [runner.run(name, fn, writes=writes,
                        on_progress=lambda _item: threads.append(("progress", threading.current_thread() is main)),
                        on_success=lambda _result: threads.append(("success", threading.current_thread() is main)),
                        on_failure=lambda _failure: threads.append(("failure", threading.current_thread() is main)),
                        on_finished=lambda: threads.append(("finished", threading.current_thread() is main)))
             for name, fn, writes in (("read", job, False), ("write", job, True), ("bug", bug, False))]
    _wait_done(qtbot, *tasks)
    assert sorted({kind for kind, _ in threads}) == ["failure", "finished", "progress", "success"]
    assert all(in_main for _, in_main in threads)


def test_workers_emit_only_a_payload_free_signal_and_the_gui_thread_frees_jobs_and_results(qtbot):
    from docatlas.gui.tasks import BackgroundTask, _Mailbox

    runner = TaskRunner()
    meta = _Mailbox.staticMetaObject
    own = [meta.method(i) for i in range(meta.methodOffset(), meta.methodCount())]
    assert [(bytes(m.name()).decode(), m.parameterCount()) for m in own] == [("ready", 0)]
    assert runner.lanes._notify == runner._mailbox.ready.emit  # the only call from the workers to Qt

    main = threading.current_thread()
    emitted_in: list[bool] = []
    freed_in: list[str] = []

    class Tracked:
        def __init__(self, name):
            self.name = name

        def __del__(self):
            freed_in.append(f"{self.name} {'gui' if threading.current_thread() is main else 'worker'}")

    def make_job():
        captured = Tracked("job")

        def job(context):
            yield captured.name
            return Tracked("result")
        return job

    results = []
    task = runner.run("tracked", make_job(), on_success=results.append)
    direct = Qt.ConnectionType.DirectConnection  # a direct slot runs in the emitting thread
    for signal in (task.progressed, task.succeeded, task.finished):
        signal.connect(lambda *_: emitted_in.append(threading.current_thread() is main), direct)
    assert isinstance(task, BackgroundTask)
    _wait_done(qtbot, task)
    assert emitted_in == [True, True, True]
    results.clear()
    del task
    qtbot.waitUntil(lambda: len(freed_in) == 2, timeout=5000)
    assert sorted(freed_in) == ["job gui", "result gui"]


def test_shutdown_cancels_and_does_not_wait_for_a_slow_call(qtbot):
    runner = TaskRunner()
    in_call, gate = threading.Event(), threading.Event()
    saw_cancel = []

    def slow_model_call(context):
        in_call.set()
        gate.wait(30)  # a model call that does not look at the cancel flag
        saw_cancel.append(context.cancel.is_set())

    task = runner.run("Answering", slow_model_call)
    assert in_call.wait(5)
    assert runner.shutdown(timeout_ms=0) is False  # returns at once: the call is still running
    assert task.cancel_event.is_set()
    gate.set()
    assert task.wait(5000)
    assert saw_cancel == [True] and runner.active == []


def test_a_job_marked_as_writing_the_workspace_goes_to_the_writer(qtbot, tmp_path):
    from docatlas.core.storage.database import Store
    from docatlas.gui.jobs import write_job

    runner = TaskRunner()
    names = []
    with Store(tmp_path / "workspace.db"):
        pass
    write = write_job(tmp_path / "workspace.db", lambda store: names.append(threading.current_thread().name))
    read = runner.run("a read", lambda context: names.append(threading.current_thread().name))
    _wait_done(qtbot, read, runner.run("a write", write))
    assert sorted(names) == ["docatlas-reader-1", "docatlas-writer"]


def test_idle_comes_when_the_last_counted_task_has_finished(qtbot):
    runner = TaskRunner()
    gate = threading.Event()
    drawing = runner.run("draw", lambda context: gate.wait(5), key="canvas")  # view work is not counted
    with qtbot.waitSignal(runner.idle, timeout=5000):
        runner.run("a write", lambda context: None, writes=True)
    assert runner.active == [] and not drawing.is_done
    gate.set()
    _wait_done(qtbot, drawing)


def test_the_window_and_its_graph_tab_share_one_runner(qtbot, make_window):
    window = make_window()
    explorer = window.graph_tab
    users = (explorer, explorer.editor, explorer.canvas.renderer, explorer.minimap)
    assert all(user.tasks is window.tasks for user in users)
    with qtbot.waitSignal(explorer.loaded, timeout=20_000):
        window.tabs.setCurrentWidget(explorer)
        explorer.reload()
