"""The cancel watch cuts a call whose cancel is set, cuts again a connection opened after the cut,
and lets a call end only once a cut under way has finished (the next call never gets the client
being closed). Real threads, real events; no sleeps asserted on."""

from __future__ import annotations

import threading

from docatlas.core.llm.cancel_watch import CancelWatch

WAIT_S = 10


def test_a_call_ending_during_the_cut_waits_until_the_cut_is_done():
    started, may_finish, finished = threading.Event(), threading.Event(), threading.Event()

    def slow_cut() -> None:
        started.set()
        may_finish.wait(WAIT_S)
        finished.set()

    watch = CancelWatch(slow_cut)
    cancel = threading.Event()
    threading.Timer(0.5, may_finish.set).start()  # the cut would end by itself only later
    with watch.watching(cancel):
        cancel.set()
        assert started.wait(WAIT_S)
    assert finished.is_set()  # leaving `watching` waited for the cut


def test_a_cancelled_call_still_in_flight_is_cut_again():
    cut, recut = threading.Event(), threading.Event()
    watch = CancelWatch(cut.set, recut=recut.set)
    cancel = threading.Event()
    with watch.watching(cancel):
        cancel.set()
        assert cut.wait(WAIT_S)
        assert recut.wait(WAIT_S)  # a connection opened just after the first cut is shut too


def test_a_call_not_cancelled_is_never_cut():
    cut = threading.Event()
    watch = CancelWatch(cut.set)
    done = threading.Event()
    with watch.watching(threading.Event()):
        done.wait(0.3)
    assert not cut.is_set()
