"""The paired bootstrap over runs × studies × CSFs, here and on dask.distributed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fdbench import metrics as M
from fdbench.analysis import BOOTSTRAP_COLUMNS, StudySamples, bootstrap_analysis


def _tasks() -> list[StudySamples]:
    tasks = []
    for s, study in enumerate(("iid", "shift")):
        for seed in range(2):
            rng = np.random.default_rng([s, seed])
            r = (rng.uniform(size=200) < 0.2).astype(float)
            conf = {"a": rng.normal(size=200) - r, "b": rng.normal(size=200) - 0.3 * r}
            tasks.append(StudySamples("d", "ce", seed, study, r, conf))
    return tasks


def test_bootstrap_analysis_is_paired_and_matches_the_engine():
    tasks = _tasks()
    table = bootstrap_analysis(tasks, metrics=("aurc", "augrc"), n_resamples=20, seed=3)
    assert tuple(table.columns) == BOOTSTRAP_COLUMNS
    assert len(table) == 4 * 2 * 2 * 20
    task = tasks[1]
    direct = M.bootstrap(
        task.residuals, task.confidences["b"], metrics=["aurc"], n_resamples=20, seed=3
    )
    got = table[
        (table.study == "iid") & (table.seed == 1) & (table.csf == "b") & (table.metric == "aurc")
    ]
    np.testing.assert_allclose(got.sort_values("resample").value, direct["aurc"].to_numpy())
    # same counts for every CSF and run of a study: a weighted AURC with those counts agrees
    counts = M.bootstrap_counts(200, 20, 3)
    for b in (0, 7):
        expected = M.aurc(task.residuals, task.confidences["a"], sample_weight=counts[b])
        row = table[
            (table.study == "iid")
            & (table.seed == 1)
            & (table.csf == "a")
            & (table.metric == "aurc")
            & (table["resample"] == b)
        ]
        assert row.value.item() == pytest.approx(expected, rel=1e-12)


def test_dask_gives_the_same_table():
    from dask.distributed import Client, LocalCluster

    tasks = _tasks()
    here = bootstrap_analysis(tasks, n_resamples=10, seed=1)
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        with Client(cluster) as client:
            there = bootstrap_analysis(tasks, n_resamples=10, seed=1, client=client)
            pd.testing.assert_frame_equal(here, there)
            address = bootstrap_analysis(
                tasks, n_resamples=10, seed=1, scheduler=cluster.scheduler_address
            )
    pd.testing.assert_frame_equal(here, address)


def test_bootstrap_analysis_errors():
    with pytest.raises(ValueError, match="at least one"):
        bootstrap_analysis([])
    with pytest.raises(ValueError, match="at most one"):
        bootstrap_analysis(_tasks(), workers=2, scheduler="tcp://x:1")
    with pytest.raises(ValueError, match="has no CSF"):
        bootstrap_analysis([StudySamples("d", "m", 0, "iid", np.zeros(5))])


def test_local_cluster_of_worker_processes_gives_the_same_table():
    tasks = _tasks()[:2]
    here = bootstrap_analysis(tasks, n_resamples=5, seed=2)
    there = bootstrap_analysis(tasks, n_resamples=5, seed=2, workers=1)
    pd.testing.assert_frame_equal(here, there)
