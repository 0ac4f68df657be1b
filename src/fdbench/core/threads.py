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

import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["THREADS_ENV", "thread_map", "usable_cpus", "usable_threads"]

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
    function: Callable[[_In], _Out], items: Iterable[_In], *, threads: int
) -> list[_Out]:
    """``[function(item) for item in items]`` on up to ``threads`` threads, in input order.

    With one thread (or one item) the loop runs in the calling thread. The first exception
    raised by ``function``, in input order, is raised here; the pieces already started finish
    first."""
    work = list(items)
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    if threads == 1 or len(work) < 2:
        return [function(item) for item in work]
    with ThreadPoolExecutor(max_workers=min(threads, len(work))) as pool:
        return list(pool.map(function, work))
