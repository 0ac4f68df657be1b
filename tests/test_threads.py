"""fdbench.core.threads: an ordered map on threads, capped by FDBENCH_THREADS."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from fdbench.core.threads import THREADS_ENV, thread_map, usable_cpus, usable_threads


def test_thread_map_keeps_the_input_order_and_uses_threads():
    seen: set[int] = set()
    barrier = threading.Barrier(2, timeout=10)

    def work(i: int) -> int:
        seen.add(threading.get_ident())
        if i < 2:
            barrier.wait()  # both first items run at the same time, or this times out
        return i * i

    assert thread_map(work, range(7), threads=2) == [i * i for i in range(7)]
    assert len(seen) == 2


def test_one_thread_runs_in_the_caller():
    caller = threading.get_ident()
    assert thread_map(lambda _: threading.get_ident(), range(3), threads=1) == [caller] * 3
    assert thread_map(lambda x: x, [], threads=4) == []


def test_the_first_error_in_input_order_is_raised():
    def work(i: int) -> int:
        if i in (3, 5):
            raise ValueError(f"item {i}")
        return i

    with pytest.raises(ValueError, match="item 3"):
        thread_map(work, range(8), threads=2)
    with pytest.raises(ValueError, match="threads must be >= 1"):
        thread_map(work, range(8), threads=0)


def test_numpy_results_do_not_depend_on_the_threads():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(50_000) for _ in range(6)]
    one = thread_map(lambda a: np.sort(np.exp(a)).tobytes(), arrays, threads=1)
    assert thread_map(lambda a: np.sort(np.exp(a)).tobytes(), arrays, threads=3) == one


def test_usable_threads_reads_the_environment(monkeypatch):
    monkeypatch.delenv(THREADS_ENV, raising=False)
    assert usable_threads() == usable_cpus() >= 1
    monkeypatch.setenv(THREADS_ENV, "3")
    assert usable_threads() == 3
    for bad in ("0", "-1", "two", "1.5"):
        monkeypatch.setenv(THREADS_ENV, bad)
        with pytest.raises(ValueError, match=THREADS_ENV):
            usable_threads()


def test_beside_runs_on_a_second_thread_only_where_allowed(monkeypatch):
    """From the main thread with two CPUs the function runs on the shared second thread;
    with FDBENCH_THREADS=1, or from another thread, in the calling thread; its result and its
    exception come back through the future either way."""
    from concurrent.futures import ThreadPoolExecutor

    from fdbench.core.threads import beside, second_thread_allowed

    def where() -> str:
        return threading.current_thread().name

    def fail() -> None:
        raise KeyError("x")

    monkeypatch.setenv(THREADS_ENV, "2")
    assert second_thread_allowed()
    assert beside(where).result().startswith("fdbench-beside")
    with pytest.raises(KeyError):
        beside(fail).result()
    with ThreadPoolExecutor(1) as pool:
        name = pool.submit(lambda: (threading.current_thread().name, beside(where).result()))
        caller, ran = name.result()
    assert ran == caller
    monkeypatch.setenv(THREADS_ENV, "1")
    assert not second_thread_allowed()
    assert beside(where).result() == threading.current_thread().name
    with pytest.raises(KeyError):
        beside(fail).result()


def test_beside_when_false_runs_in_the_caller(monkeypatch):
    from fdbench.core.threads import beside

    monkeypatch.setenv(THREADS_ENV, "2")
    here = threading.current_thread().name
    assert beside(lambda: threading.current_thread().name, when=False).result() == here
    assert beside(lambda: threading.current_thread().name).result() != here


def test_remainder_here_runs_the_last_items_in_the_caller_after_the_pool():
    """Five items on two threads: four on the pool, the fifth in the calling thread, after
    them; as many items as threads (or fewer) all go to the pool."""
    caller = threading.get_ident()
    finished: list[int] = []
    lock = threading.Lock()

    def work(i: int) -> tuple[int, int]:
        with lock:
            done_before = len(finished)
            finished.append(i)
        return threading.get_ident(), done_before

    got = thread_map(work, range(5), threads=2, remainder_here=True)
    assert [thread for thread, _ in got[:4]].count(caller) == 0
    assert got[4] == (caller, 4)
    assert all(thread != caller for thread, _ in thread_map(work, range(2), threads=2))
    got = thread_map(work, range(2), threads=3, remainder_here=True)
    assert all(thread != caller for thread, _ in got)
    assert thread_map(lambda i: i * i, range(7), threads=3, remainder_here=True) == [
        i * i for i in range(7)
    ]
