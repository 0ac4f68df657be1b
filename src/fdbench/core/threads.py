"""How many threads a stage may use, and an ordered map over them.

NumPy releases the GIL in its sorts, gathers and ufuncs on large arrays, so independent pieces
of numeric work (the row blocks of a logit file, the metric suite of each CSF) run side by side
on threads with no copy of their inputs. The results are those of the sequential loop: every
piece is computed by the same code on the same inputs, and :func:`thread_map` returns them in
the order of its inputs.

``FDBENCH_THREADS`` (a whole number >= 1) caps the threads; by default every CPU this process
may run on (``os.sched_getaffinity``) is used.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

__all__ = [
    "THREADS_ENV",
    "beside",
    "second_thread_allowed",
    "thread_map",
    "usable_cpus",
    "usable_threads",
]

#: The environment variable that caps the threads of :func:`usable_threads`.
THREADS_ENV = "FDBENCH_THREADS"

_In = TypeVar("_In")
_Out = TypeVar("_Out")


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def usable_threads() -> int:
    """:func:`usable_cpus`, or ``FDBENCH_THREADS`` where it is set (a whole number >= 1)."""
    value = os.environ.get(THREADS_ENV, "").strip()
    if not value:
        return usable_cpus()
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{THREADS_ENV} must be a whole number >= 1, got {value!r}")
    return int(value)


def thread_map(
    function: Callable[[_In], _Out],
    items: Iterable[_In],
    *,
    threads: int,
    remainder_here: bool = False,
) -> list[_Out]:
    """``[function(item) for item in items]`` on up to ``threads`` threads, in input order.

    With one thread (or one item) the loop runs in the calling thread. With
    ``remainder_here`` and more items than threads, the last ``len(items) % threads`` items
    run one after the other in the calling thread once the pool has done the others: where
    ``function`` hands part of its work to :func:`beside`, each of them then has two CPUs
    instead of one beside idle ones (five suites on two threads: the fifth alone). The first
    exception raised by ``function``, in input order, is raised here; the pieces already
    started finish first."""
    work = list(items)
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    if threads == 1 or len(work) < 2:
        return [function(item) for item in work]
    pooled = len(work)
    if remainder_here and pooled > threads:
        pooled -= pooled % threads
    with ThreadPoolExecutor(max_workers=min(threads, pooled)) as pool:
        done = list(pool.map(function, work[:pooled]))
    return done + [function(item) for item in work[pooled:]]


@functools.cache
def _second_thread() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="fdbench-beside")


def second_thread_allowed() -> bool:
    """Whether a numeric routine may hand a piece of its work to a second thread
    (:func:`beside`): the call comes from the main thread (not from a stage's own threads,
    which already use the CPUs) and the process may use two CPUs (:func:`usable_threads`)."""
    return threading.current_thread() is threading.main_thread() and usable_threads() >= 2


def beside(function: Callable[..., _Out], *args: object, when: bool = True) -> Future[_Out]:
    """``function(*args)`` started on a second thread where ``when`` (the caller's own test,
    e.g. that the work outweighs a thread's hand-over) and :func:`second_thread_allowed`
    (one shared worker; NumPy and compiled kernels release the GIL), else run now in the
    calling thread; either way its future, whose ``result()`` raises what it raised."""
    if when and second_thread_allowed():
        return _second_thread().submit(function, *args)
    done: Future[_Out] = Future()
    try:
        done.set_result(function(*args))
    except BaseException as error:  # handed to the caller by result(), as a thread would
        done.set_exception(error)
    return done
