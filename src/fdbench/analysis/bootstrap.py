"""Paired bootstrap of many runs × studies × CSFs, in this process or on dask.distributed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

BOOTSTRAP_COLUMNS = ("dataset", "method", "seed", "csf", "study", "metric", "resample", "value")


@dataclass(frozen=True)
class StudySamples:
    """The per-sample inputs of one run (dataset, method, seed) on one study.

    ``residuals`` (N, 1 = failure) are shared by every CSF; ``confidences`` maps CSF names to
    float confidences of length N.
    """

    dataset: str
    method: str
    seed: int
    study: str
    residuals: np.ndarray
    confidences: Mapping[str, np.ndarray] = field(default_factory=dict)


def bootstrap_study(
    samples: StudySamples, metrics: Sequence[str], n_resamples: int, seed: int
) -> pd.DataFrame:
    """Bootstrap every CSF of one run × study on the same resamples.

    Calls ``fdbench.metrics.bootstrap`` with the mapping of all CSFs, so one draw of multinomial
    counts serves every CSF. The counts depend only on (N, ``seed``): the runs of one study
    (same test set, same N) share them too, which makes values paired across CSFs and runs.
    """
    from fdbench import metrics as M

    if not samples.confidences:
        raise ValueError(f"study {samples.study!r} of seed {samples.seed} has no CSF")
    table = M.bootstrap(
        samples.residuals,
        dict(samples.confidences),
        metrics=list(metrics),
        n_resamples=n_resamples,
        seed=seed,
    )
    table = table.assign(
        dataset=samples.dataset, method=samples.method, seed=samples.seed, study=samples.study
    )
    return table[list(BOOTSTRAP_COLUMNS)]


def bootstrap_analysis(
    tasks: Sequence[StudySamples],
    *,
    metrics: Sequence[str] = ("aurc", "augrc"),
    n_resamples: int = 500,
    seed: int = 0,
    client: Any = None,
    workers: int | None = None,
    scheduler: str | None = None,
) -> pd.DataFrame:
    """The bootstrap table of every run × study × CSF (Traub et al., NeurIPS 2024 protocol).

    Each task (:class:`StudySamples`) is bootstrapped by :func:`bootstrap_study` with the same
    ``seed``, so within a study the resamples are paired across CSFs and runs, as the
    rank-then-aggregate ranking and the Wilcoxon maps need. Without ``client``, ``workers`` or
    ``scheduler`` the tasks run here; with a ``dask.distributed.Client`` they are submitted to
    it; ``workers`` starts a ``LocalCluster`` of that many single-threaded processes,
    ``scheduler`` connects to a running cluster (address such as ``tcp://host:8786``). The
    result does not depend on where it ran: rows come back in task order.

    Returns the tidy bootstrap table (columns ``BOOTSTRAP_COLUMNS``).
    """
    if not tasks:
        raise ValueError("tasks must hold at least one StudySamples")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1; got {n_resamples}")
    if sum(x is not None for x in (client, workers, scheduler)) > 1:
        raise ValueError("give at most one of client, workers, scheduler")
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be >= 1; got {workers}")
    metrics = list(metrics)
    from fdbench.metrics.bootstrap import check_memory

    n_values = sum(len(task.confidences) for task in tasks) * len(metrics)
    # the tidy table: 8 columns of 8 bytes per value, about twice while concatenating
    check_memory(
        2 * 64 * n_resamples * n_values,
        f"n_resamples: {n_resamples} resamples of {n_values} run × study × CSF × metric values",
    )
    if client is None and workers is None and scheduler is None:
        frames = [bootstrap_study(task, metrics, n_resamples, seed) for task in tasks]
    else:
        frames = _on_dask(tasks, metrics, n_resamples, seed, client, workers, scheduler)
    return pd.concat(frames, ignore_index=True)


def _on_dask(
    tasks: Sequence[StudySamples],
    metrics: list[str],
    n_resamples: int,
    seed: int,
    client: Any,
    workers: int | None,
    scheduler: str | None,
) -> list[pd.DataFrame]:
    from dask.distributed import Client

    from fdbench.core.runner import large_graphs_allowed, local_cluster

    cluster = None
    own = client is None
    if own and scheduler is None:
        cluster = local_cluster(workers)
        client = Client(cluster)
    elif own:
        client = Client(scheduler)
    try:
        with large_graphs_allowed():
            futures = [
                client.submit(bootstrap_study, task, metrics, n_resamples, seed, pure=False)
                for task in tasks
            ]
        return client.gather(futures)
    finally:
        if own:
            client.close()
        if cluster is not None:
            cluster.close()
