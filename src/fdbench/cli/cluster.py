"""The ``--cluster``/``--cluster-option`` options of ``fdbench benchmark`` and ``fdbench zoo``:
start a cluster (Slurm through dask-jobqueue) for the run and hand its scheduler to the jobs."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Annotated

import typer

ClusterOption = Annotated[
    str | None,
    typer.Option(
        "--cluster",
        help="Start a cluster for this run and run the jobs on it: 'slurm' (dask-jobqueue's "
        "SLURMCluster; see docs/scale.md).",
    ),
]
ClusterSettings = Annotated[
    list[str] | None,
    typer.Option(
        "--cluster-option",
        help="KEY=VALUE for --cluster slurm, repeatable: queue, account, cores, memory, "
        "walltime, gpus (per Slurm job) and jobs (how many at once); defaults from dask's "
        "jobqueue.slurm configuration.",
    ),
]


@contextlib.contextmanager
def cluster_scheduler(
    cluster: str | None, options: list[str] | None, workers: int | None, scheduler: str | None
) -> Iterator[str | None]:
    """The scheduler the run's jobs go to: ``scheduler`` without ``--cluster``, else the
    address of the cluster started for the run (stopped on exit)."""
    if cluster is None:
        if options:
            raise ValueError("--cluster-option needs --cluster")
        yield scheduler
        return
    if scheduler is not None or workers is not None:
        raise ValueError("give --cluster or --workers/--scheduler, not both")
    from fdbench.core.slurm import cluster_scheduler as start
    from fdbench.core.slurm import parse_cluster_options

    settings = parse_cluster_options(options or [])
    with start(cluster, settings) as address:
        yield address
