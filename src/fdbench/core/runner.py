"""Running a grid of jobs, in this process or on dask.distributed, skipping finished ones."""

from __future__ import annotations

import contextlib
import logging
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fdbench.core.errors import WorkerLost, one_line
from fdbench.core.threads import THREADS_ENV

logger = logging.getLogger("fdbench")


@dataclass(frozen=True)
class Job:
    """One unit of work: ``fn(*args)`` writes ``output`` (and the files ``also``); it is done
    once they exist.

    ``fn`` must be a top-level (picklable) function that writes ``output`` atomically, so an
    interrupted job leaves nothing that looks finished. ``after`` names jobs whose outputs this
    one reads. ``resources`` (name, amount) pairs are what the job needs of a dask worker, e.g.
    ``(("GPU", 1),)``: on a cluster whose workers advertise that resource (``dask worker
    --resources GPU=2``) the job only runs on one with a free unit; a resource no worker
    advertises is ignored (:func:`fdbench.core.resources.usable_resources`).
    With ``verified``, the outputs are files fdbench checksums
    (:func:`fdbench.core.io.atomic_path`, an outputs store): one that fails its checksum is removed
    with a warning and the job runs again (:func:`fdbench.core.io.discard_damaged`); so are
    several output files written as one unit (:func:`fdbench.core.io.atomic_paths`) that do not
    belong together (:func:`fdbench.core.io.discard_mixed`).
    """

    key: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    output: Path
    after: tuple[str, ...] = field(default=())
    also: tuple[Path, ...] = field(default=())
    verified: bool = False
    resources: tuple[tuple[str, float], ...] = field(default=())

    @property
    def outputs(self) -> tuple[Path, ...]:
        return (*self.also, self.output)

    @property
    def done(self) -> bool:
        return all(path.exists() for path in self.outputs)

    def discard_damaged(self) -> None:
        """With ``verified``, remove every output that fails its checksum (warning naming it),
        and files written as one unit that no longer belong together
        (:func:`fdbench.core.io.discard_mixed`)."""
        if self.verified:
            from fdbench.core.io import discard_damaged, discard_mixed

            for path in self.outputs:
                discard_damaged(path)
            discard_mixed(self.outputs)


#: The dask event topic on which a worker reports the epochs of the job it runs.
EPOCH_TOPIC = "fdbench-epoch"
_EPOCH_HOOK: list[Callable[[int, int], None]] = []


def report_epoch(done: int, total: int) -> None:
    """Report that the running job finished epoch ``done`` of ``total`` of a training loop.

    In this process it goes to the ``on_epoch`` of :func:`run_jobs`; in a dask worker it is
    sent to the client as an event of :data:`EPOCH_TOPIC` naming the task; elsewhere it is
    dropped. The training loops call it after every epoch.
    """
    if _EPOCH_HOOK:
        _EPOCH_HOOK[-1](done, total)
        return
    try:
        from distributed import get_worker
        from distributed.worker import thread_state
    except ImportError:
        return
    try:
        worker = get_worker()
    except ValueError:
        return
    key = getattr(thread_state, "key", None)
    if key is not None:
        worker.log_event(EPOCH_TOPIC, {"key": str(key), "done": done, "total": total})


WORKER_ENVIRON = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    THREADS_ENV: "1",
}
"""Environment of local worker processes: one BLAS/OpenMP thread each (dask's default) and one
fdbench thread (:mod:`fdbench.core.threads`: the workers already share the CPUs), but not
dask's ``MALLOC_TRIM_THRESHOLD_=65536``, which makes glibc return memory on nearly every free
and doubled the time of a training job (79 s instead of 39 s) in a worker."""


WORKER_CONFIG = {"distributed.worker.profile.enabled": False}
"""Dask configuration of local worker processes: no statistical profiler. It samples every
worker's stack each 10 ms and keeps the source lines and call trees of the last 1 000 seconds,
for a dashboard that :func:`local_cluster` does not start; in a worker evaluating zoo members
(N = 10 000, K = 100: 12.2 MiB of logits each) it grew the resident memory by ~0.4 MiB per
member, to +29 MiB after 30 members instead of +14 MiB (benchmarks/RESULTS.md)."""


def local_cluster(workers: int) -> Any:
    """A dask ``LocalCluster`` of ``workers`` single-threaded worker processes (``WORKER_ENVIRON``,
    ``WORKER_CONFIG``, no dashboard).

    Its processes log only critical events: a job's exception reaches the caller through its
    future (and the ``fdbench`` command prints it as one line), so the workers' own "Compute
    Failed" records with the remote traceback would only repeat it. The worker processes never
    act on SIGINT: they start with it blocked (:func:`_sigint_blocked`) and ignore it once they
    are up (:func:`dask_setup`, preloaded), so a Ctrl-C at the terminal, even while they still
    import, interrupts this process only, which stops the cluster, instead of printing a
    traceback from every worker.
    """
    import logging
    import warnings

    import dask
    from dask.distributed import LocalCluster

    with (
        dask.config.set({"distributed.nanny.pre-spawn-environ": WORKER_ENVIRON, **WORKER_CONFIG}),
        warnings.catch_warnings(),
        _sigint_blocked() as started,
    ):
        # another cluster on this machine holds the dashboard's port: dask warns and moves on
        warnings.filterwarnings("ignore", message="Port .* is already in use")
        # nor the value an earlier in-process dask worker left in this process's environment
        inherited = os.environ.pop("MALLOC_TRIM_THRESHOLD_", None)
        try:
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.CRITICAL,
                preload=[__name__],
            )
        finally:
            if inherited is not None:
                os.environ["MALLOC_TRIM_THRESHOLD_"] = inherited
        started.append(cluster)
    return cluster


@contextlib.contextmanager
def _sigint_blocked() -> Iterator[list[Any]]:
    """Block SIGINT in this thread while the block runs; the threads it starts (dask's event
    loop, which spawns the worker processes) and the processes they start inherit the mask,
    so a worker receives no SIGINT while it imports. This process still gets it: through
    another of its threads right away, or, where no other thread can take it, as
    ``KeyboardInterrupt`` when the block ends, after closing the clusters the block appended to
    the list it was given.

    The resource tracker of ``multiprocessing`` is started first: starting it unblocks SIGINT
    in the thread that starts it (CPython's ``resource_tracker.ensure_running``), which would
    otherwise be dask's event loop, spawning the workers next."""
    import signal
    from multiprocessing import resource_tracker

    if not hasattr(signal, "pthread_sigmask"):
        yield []
        return
    resource_tracker.ensure_running()
    started: list[Any] = []
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield started
    finally:
        try:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        except KeyboardInterrupt:
            _quiet_shutdown()
            for cluster in started:
                cluster.close()
            raise


def dask_setup(worker: Any) -> None:
    """Preload hook of :func:`local_cluster`'s worker processes: ignore SIGINT, which the
    terminal sends to the whole process group on Ctrl-C (the parent process stops them), then
    unblock it (the worker process started with it blocked, :func:`_sigint_blocked`; one that
    arrived meanwhile is discarded)."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _call_after(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    outputs: tuple[Path, ...],
    resources: dict[str, float],
    *_dependencies: Any,
) -> Any:
    """A job's task on a dask worker: announce its start (:data:`START_TOPIC`), remove the
    temporary files an earlier, killed attempt left beside its outputs, and run it on the
    worker's resource slots (:func:`fdbench.core.resources.claim_slots`)."""
    from fdbench.core.resources import claim_slots

    _announce_start()
    for path in outputs:
        remove_partial(path)
    with claim_slots(resources):
        return fn(*args)


#: The dask event topic on which a worker announces each job it starts (a second start of a
#: job means its first worker was lost: the client names the job, :func:`_run_on_dask`).
START_TOPIC = "fdbench-start"


def _announce_start() -> None:
    from distributed import get_worker
    from distributed.worker import thread_state

    worker = get_worker()
    key = getattr(thread_state, "key", None)
    if key is not None:
        worker.log_event(START_TOPIC, {"key": str(key), "worker": worker.address})


def remove_partial(path: Path) -> None:
    """Remove the temporary files :func:`fdbench.core.io.atomic_path` makes beside ``path``
    (``.<name>.*.tmp``) and the temporary directories of an outputs store
    (``.<name>.tmp-*``, :func:`fdbench.outputs.write_outputs`), which a process killed while
    writing leaves behind."""
    import shutil

    for partial in path.parent.glob(f".{path.name}.*.tmp"):
        partial.unlink(missing_ok=True)
    for partial in path.parent.glob(f".{path.name}.tmp-*"):
        if partial.is_dir() and not partial.is_symlink():
            shutil.rmtree(partial, ignore_errors=True)


def _ordered(jobs: Sequence[Job]) -> list[Job]:
    by_key = {job.key: job for job in jobs}
    if len(by_key) != len(jobs):
        raise ValueError("job keys must be unique")
    ordered: list[Job] = []
    state: dict[str, int] = {}

    def visit(job: Job) -> None:
        if state.get(job.key) == 2:
            return
        if state.get(job.key) == 1:
            raise ValueError(f"jobs depend on each other in a cycle through {job.key!r}")
        state[job.key] = 1
        for key in job.after:
            if key not in by_key:
                raise ValueError(f"job {job.key!r} waits for unknown job {key!r}")
            visit(by_key[key])
        state[job.key] = 2
        ordered.append(job)

    for job in jobs:
        visit(job)
    return ordered


def run_jobs(
    jobs: Sequence[Job],
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    on_done: Callable[[Job], None] | None = None,
    on_epoch: Callable[[Job, int, int], None] | None = None,
) -> list[Job]:
    """Run every job that is not done yet, dependencies first; return the jobs that ran.

    ``on_done(job)`` is called as each job finishes, ``on_epoch(job, done, total)`` as a
    running job reports an epoch of its training (:func:`report_epoch`).

    Without ``workers`` or ``scheduler`` the jobs run one after the other in this process. With
    ``workers`` they run on a dask ``LocalCluster`` of that many single-threaded worker
    processes (:func:`local_cluster`); with ``scheduler`` (an address such as
    ``tcp://host:8786``) on an existing dask cluster. A job's result only depends on its
    arguments, so every mode gives the same files. Damaged outputs of ``verified`` jobs are
    removed first, so those jobs run again.
    """
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be >= 1; got {workers}")
    if workers is not None and scheduler is not None:
        raise ValueError("give either workers or scheduler, not both")
    ordered = _ordered(jobs)
    for job in ordered:
        job.discard_damaged()
    pending = [job for job in ordered if not job.done]
    if not pending:
        return []
    if workers is None and scheduler is None:
        for job in pending:
            if on_epoch is not None:
                _EPOCH_HOOK.append(lambda d, t, job=job: on_epoch(job, d, t))
            try:
                job.fn(*job.args)
            finally:
                if on_epoch is not None:
                    _EPOCH_HOOK.pop()
            if on_done is not None:
                on_done(job)
        return pending
    return _run_on_dask(
        pending, workers=workers, scheduler=scheduler, on_done=on_done, on_epoch=on_epoch
    )


_PLAIN = (str, bytes, int, float, bool, type(None), Path, list, tuple, dict, set)

#: How often the jobs left are submitted again after the cluster lost data they need.
RESUBMISSIONS = 3


def _shared_value(value: Any) -> Any:
    return value


def _submit_shared(client: Any, pending: Sequence[Job], token: str) -> dict[int, Any]:
    """Send every argument that is not a plain value or container (an experiment's arrays, a
    config) to the cluster once, so that the jobs sharing it refer to one copy instead of each
    carrying it in its task; return the futures by ``id`` of the object.

    Each object is the result of a task whose definition holds it (kept by the scheduler), not
    scattered data: when the worker holding it dies, the scheduler computes it again on
    another worker, so no job's input is lost with a worker. Dask's warning about a large
    task graph is silenced for these tasks: the object is sent once, as with ``scatter``.
    """
    objects = {id(arg): arg for job in pending for arg in job.args if not isinstance(arg, _PLAIN)}
    with large_graphs_allowed():
        return {
            key: client.submit(_shared_value, obj, key=f"fdbench-shared-{i}-{token}", pure=False)
            for i, (key, obj) in enumerate(objects.items())
        }


@contextlib.contextmanager
def large_graphs_allowed() -> Iterator[None]:
    """Submit tasks that carry their own data without dask's "Sending large graph" warning.

    Dask warns (six lines each time) when a task's definition holds over 10 MiB and advises
    sending shared data once; fdbench's tasks that carry data hold each piece once (an
    argument shared by several jobs goes through :func:`_submit_shared`), so the warning would
    only flood a run's log.
    """
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sending large graph")
        yield


def _result(future: Any, job: Job) -> Any:
    """The result of ``job``'s future; a job that ended the workers it ran on (dask's
    ``KilledWorker``) raises :class:`WorkerLost` naming the job, not dask's traceback."""
    from dask.distributed import KilledWorker

    try:
        return future.result()
    except KilledWorker as error:
        raise WorkerLost(
            f"job {job.key} ended the worker process it ran on, each time it ran (the machine "
            "ran out of memory, or native code crashed); the jobs finished before it are kept: "
            "run the same command with --workers 0 to run the jobs left in this process and "
            "see the error"
        ) from error


def _quiet_shutdown() -> None:
    """On Ctrl-C: the cluster is closed with futures still running; dask's logging and
    warnings about them (cancelled tasks, lost workers) are expected, so they are silenced."""
    import logging
    import warnings

    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")


def _run_on_dask(
    pending: list[Job],
    *,
    workers: int | None,
    scheduler: str | None,
    on_done: Callable[[Job], None] | None,
    on_epoch: Callable[[Job, int, int], None] | None = None,
) -> list[Job]:
    """Run ``pending`` on a local cluster of ``workers`` processes or on ``scheduler``.

    A job whose worker is lost runs again on another worker (dask reschedules it; its outputs
    are written atomically, so the lost attempt leaves nothing) and a warning names it and the
    workers. Should the cluster lose an input the jobs share (every worker holding it died),
    the jobs not finished are submitted again, up to :data:`RESUBMISSIONS` times.
    """
    from concurrent.futures import CancelledError

    from dask.distributed import Client

    cluster = None
    if scheduler is None:
        cluster = local_cluster(workers)
        client = Client(cluster)
    else:
        client = Client(scheduler)
    finished: set[str] = set()
    try:
        for attempt in range(RESUBMISSIONS + 1):
            left = [job for job in pending if job.key not in finished]
            try:
                _submit_and_wait(client, left, finished, on_done, on_epoch)
                break
            except CancelledError as error:
                if attempt == RESUBMISSIONS:
                    raise
                names = ", ".join(job.key for job in left if job.key not in finished)
                logger.warning(
                    "fdbench: the cluster lost data the jobs need (%s); submitting the jobs "
                    "left again: %s",
                    one_line(error),
                    names,
                )
    except KeyboardInterrupt:
        _quiet_shutdown()
        raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return pending


def _submit_and_wait(
    client: Any,
    jobs: list[Job],
    finished: set[str],
    on_done: Callable[[Job], None] | None,
    on_epoch: Callable[[Job, int, int], None] | None,
) -> None:
    """Submit ``jobs`` (dependencies on jobs in ``finished`` dropped) and wait for them, adding
    each finished job's key to ``finished``."""
    from dask.distributed import as_completed

    from fdbench.core.resources import usable_resources

    token = uuid.uuid4().hex[:8]  # keys of this submission only: none of an earlier client's
    shared = _submit_shared(client, jobs, token)
    offered = usable_resources(client)
    futures: dict[str, Any] = {}
    for job in jobs:
        deps = [futures[key] for key in job.after if key in futures]
        args = tuple(shared.get(id(arg), arg) for arg in job.args)
        needs = {name: amount for name, amount in job.resources if name in offered}
        futures[job.key] = client.submit(
            _call_after,
            job.fn,
            args,
            job.outputs,
            needs,
            *deps,
            key=f"fdbench-{job.key}-{token}",
            pure=False,
            resources=needs or None,
        )
    by_future = {futures[job.key].key: job for job in jobs}
    started: dict[str, str] = {}

    def start(event: tuple[float, dict[str, Any]]) -> None:
        message = event[1]
        job = by_future.get(message.get("key"))
        if job is None:
            return
        where = str(message.get("worker"))
        if job.key in started:
            logger.warning(
                "fdbench: job %s was lost with its worker %s; it runs again on %s",
                job.key,
                started[job.key],
                where,
            )
        started[job.key] = where

    client.subscribe_topic(START_TOPIC, start)
    if on_epoch is not None:

        def epoch(event: tuple[float, dict[str, Any]]) -> None:
            message = event[1]
            job = by_future.get(message.get("key"))
            if job is not None:
                on_epoch(job, int(message["done"]), int(message["total"]))

        client.subscribe_topic(EPOCH_TOPIC, epoch)
    try:
        for future in as_completed(list(futures.values())):
            job = by_future[future.key]
            _result(future, job)
            finished.add(job.key)
            if on_done is not None:
                on_done(job)
    finally:
        client.unsubscribe_topic(START_TOPIC)
        if on_epoch is not None:
            client.unsubscribe_topic(EPOCH_TOPIC)
        client.cancel([f for k, f in futures.items() if k not in finished])


def resolve_workers(workers: int | None, scheduler: str | None, default: int) -> int | None:
    """The worker processes a job's stages run on: ``workers`` when given, else ``default``
    (the config's) unless a ``scheduler`` is given; ``0`` and ``None`` mean this process
    (``None`` is returned)."""
    if workers is not None and workers < 0:
        raise ValueError(f"workers: expected an integer >= 0, got {workers}")
    if workers is None and scheduler is None:
        workers = default
    return workers or None


def run_stage(
    stage: str,
    jobs: Sequence[Job],
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[Job]:
    """Run the ``jobs`` of one stage of a job (:func:`run_jobs`) and return those that ran.

    Damaged outputs of ``verified`` jobs are removed first; ``progress(stage, done, total)`` is
    called once with the jobs already done, then each time one finishes or a running job
    reports a training epoch (:func:`report_epoch`; ``done`` then adds the running jobs' share
    of their epochs).
    """
    for job in jobs:
        job.discard_damaged()
    counter = _StageProgress(stage, len(jobs), sum(job.done for job in jobs), progress)
    return run_jobs(
        jobs,
        workers=workers,
        scheduler=scheduler,
        on_done=counter.job_done,
        on_epoch=counter.epoch_done,
    )


class _StageProgress:
    """Counts the finished jobs of a stage for ``progress(stage, done, total)``, the running
    jobs adding the share of their training epochs done (:func:`report_epoch`; below 1 until
    the job finishes, and a job of several training loops never goes back when the next loop
    starts)."""

    def __init__(
        self,
        stage: str,
        total: int,
        done: int,
        progress: Callable[[str, int, int], None] | None,
    ) -> None:
        self.stage, self.total, self.done, self.progress = stage, total, done, progress
        self.running: dict[str, float] = {}
        self._report()

    def _report(self) -> None:
        if self.progress is not None:
            self.progress(self.stage, self.done + sum(self.running.values()), self.total)

    def job_done(self, job: Job) -> None:
        self.done += 1
        self.running.pop(job.key, None)
        self._report()

    def epoch_done(self, job: Job, epoch: int, epochs: int) -> None:
        share = min(epoch / max(epochs, 1), 0.99)
        self.running[job.key] = max(self.running.get(job.key, 0.0), share)
        self._report()
