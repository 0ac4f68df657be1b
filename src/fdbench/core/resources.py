"""What a job needs of a dask worker (GPUs), and which of the worker's devices it runs on.

A job declares its needs as dask resources (:attr:`fdbench.core.runner.Job.resources`, e.g.
``{"GPU": 1}``); workers advertise theirs (``dask worker --resources GPU=2 --nthreads 2``).
The scheduler then runs at most as many GPU jobs on a worker as it has GPUs, and each job
claims its own device indices of the worker (:func:`claim_slots`), which training reads
(:func:`gpu_indices`). A resource that no worker advertises is ignored
(:func:`usable_resources`): on CPU-only machines the declarations are inert.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

__all__ = ["GPU", "claim_slots", "gpu_indices", "job_resources", "usable_resources"]

#: The name of the GPU resource, as workers advertise it (``--resources GPU=N``).
GPU = "GPU"

_LOCK = threading.Lock()
_TAKEN: dict[str, set[int]] = {}
_CLAIMED = threading.local()


def job_resources(gpus: int) -> tuple[tuple[str, float], ...]:
    """The resources of a job that runs on ``gpus`` GPUs (none for 0)."""
    if isinstance(gpus, bool) or not isinstance(gpus, int):
        raise TypeError(f"gpus: expected an integer, got {type(gpus).__name__}")
    if gpus < 0:
        raise ValueError(f"gpus: expected an integer >= 0, got {gpus}")
    return ((GPU, float(gpus)),) if gpus else ()


def usable_resources(client: Any) -> set[str]:
    """The resources some worker of ``client``'s cluster advertises now; the others are dropped
    from the jobs' needs, so that a GPU job still runs on a cluster of CPU-only workers."""
    workers = client.scheduler_info(n_workers=-1).get("workers", {})
    return {name for info in workers.values() for name in info.get("resources", {})}


def _worker_total(name: str) -> int:
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        return 0
    return int(worker.state.total_resources.get(name, 0))


@contextmanager
def claim_slots(needs: Mapping[str, float]) -> Iterator[tuple[int, ...]]:
    """In a dask worker, claim ``needs[GPU]`` of the worker's GPU indices ``0..N-1`` (N: its
    advertised ``GPU`` resource) that no other job of this worker holds, for the duration of
    the block; :func:`gpu_indices` returns them meanwhile. The scheduler never runs more GPU
    jobs on a worker than it has GPUs, so a free index is always there. Without a GPU need
    (or outside a worker) nothing is claimed."""
    wanted = int(needs.get(GPU, 0))
    total = _worker_total(GPU) if wanted else 0
    if not wanted or not total:
        yield ()
        return
    with _LOCK:
        taken = _TAKEN.setdefault(GPU, set())
        free = [i for i in range(total) if i not in taken]
        if len(free) < wanted:
            raise RuntimeError(
                f"this worker advertises {total} GPU(s) but {len(taken)} are held by its "
                f"other jobs; a job needs {wanted}"
            )
        claimed = tuple(free[:wanted])
        taken.update(claimed)
    _CLAIMED.indices = claimed
    try:
        yield claimed
    finally:
        _CLAIMED.indices = ()
        with _LOCK:
            _TAKEN[GPU].difference_update(claimed)


def gpu_indices() -> tuple[int, ...]:
    """The GPU indices the job running in this thread claimed (:func:`claim_slots`); empty
    outside a GPU job of a worker that advertises GPUs (training then uses its default
    device)."""
    return tuple(getattr(_CLAIMED, "indices", ()))
