"""A dask cluster of Slurm jobs (dask-jobqueue's ``SLURMCluster``) for ``--cluster slurm``.

Each Slurm job runs one dask worker with ``cores`` threads, ``memory`` and ``gpus`` GPUs
(``--gres=gpu:N``; the worker advertises ``GPU=N``, :mod:`fdbench.core.resources`) for at
most ``walltime``, on ``queue`` (partition) charged to ``account``. Settings not given come
from dask's configuration (``jobqueue.slurm`` in ``~/.config/dask/jobqueue.yaml``), as for any
``SLURMCluster``. The job paths fdbench sends are absolute, so the workers need the run
folder and the data on a file system they share with this machine.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any

__all__ = ["CLUSTERS", "SlurmSettings", "cluster_scheduler", "parse_cluster_options"]

#: Values of ``--cluster``.
CLUSTERS = ("slurm",)


@dataclass(frozen=True)
class SlurmSettings:
    """What each Slurm job of the cluster asks for, and how many jobs run at once."""

    queue: str | None = None
    account: str | None = None
    cores: int = 1
    memory: str = "4GiB"
    walltime: str = "01:00:00"
    gpus: int = 0
    jobs: int = 1

    def __post_init__(self) -> None:
        for name in ("cores", "jobs"):
            if getattr(self, name) < 1:
                raise ValueError(f"--cluster-option {name}: expected an integer >= 1")
        if self.gpus < 0:
            raise ValueError("--cluster-option gpus: expected an integer >= 0")
        if not re.fullmatch(r"(\d+-)?\d+(:\d\d){0,2}", self.walltime):
            raise ValueError(
                f"--cluster-option walltime: expected Slurm's [D-]HH:MM:SS, got {self.walltime!r}"
            )


_INTEGERS = {"cores", "gpus", "jobs"}


def parse_cluster_options(options: Sequence[str]) -> SlurmSettings:
    """``--cluster-option KEY=VALUE`` values (keys: the fields of :class:`SlurmSettings`) as
    settings; a ``ValueError`` names a bad option."""
    known = {f.name for f in fields(SlurmSettings)}
    values: dict[str, Any] = {}
    for option in options:
        key, sep, value = option.partition("=")
        if not sep or key not in known:
            raise ValueError(
                f"--cluster-option: expected KEY=VALUE with KEY one of {sorted(known)}, "
                f"got {option!r}"
            )
        if key in _INTEGERS:
            try:
                values[key] = int(value)
            except ValueError:
                raise ValueError(
                    f"--cluster-option {key}: expected an integer, got {value!r}"
                ) from None
        else:
            values[key] = value
    return SlurmSettings(**values)


def slurm_cluster(settings: SlurmSettings) -> Any:
    """An (unscaled) ``dask_jobqueue.SLURMCluster`` for ``settings``: one worker process per
    Slurm job, ``cores`` threads, ``GPU=gpus`` advertised and requested with ``--gres``."""
    try:
        from dask_jobqueue import SLURMCluster
    except ImportError:
        raise ValueError(
            "--cluster slurm needs dask-jobqueue: pip install 'fdbench[cluster]'"
        ) from None
    gpus = settings.gpus
    return SLURMCluster(
        queue=settings.queue,
        account=settings.account,
        cores=settings.cores,
        processes=1,
        memory=settings.memory,
        walltime=settings.walltime,
        job_extra_directives=[f"--gres=gpu:{gpus}"] if gpus else [],
        worker_extra_args=["--resources", f"GPU={gpus}"] if gpus else [],
        scheduler_options={"dashboard_address": ":0"},
    )


@contextmanager
def cluster_scheduler(kind: str, settings: SlurmSettings) -> Iterator[str]:
    """Start a cluster of ``kind`` (``"slurm"``) with ``settings.jobs`` jobs and yield its
    scheduler's address for the runner; the jobs are cancelled on exit."""
    if kind not in CLUSTERS:
        raise ValueError(f"--cluster: expected one of {list(CLUSTERS)}, got {kind!r}")
    with slurm_cluster(settings) as cluster:
        cluster.scale(jobs=settings.jobs)
        yield cluster.scheduler_address
