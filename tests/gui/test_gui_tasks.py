"""The background task runner: progress, results, failures, pause/resume, cancel, GUI-thread handlers."""

from __future__ import annotations

import threading

from docatlas.core.base.errors import LLMError
from docatlas.gui.tasks import TaskRunner


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
