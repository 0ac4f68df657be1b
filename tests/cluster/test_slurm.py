"""``--cluster slurm``: the job script dask-jobqueue submits, and ``fdbench zoo`` on a real
single-node Slurm when one can start here (else the test says why)."""

from __future__ import annotations

import pandas as pd
import pytest

from fdbench.core.slurm import SlurmSettings, parse_cluster_options, slurm_cluster
from tests.cluster.slurm_node import SlurmUnavailable, single_node_slurm
from tests.cluster.test_dask_cli import _sorted, _zoo, fdbench

pytest.importorskip("dask_jobqueue")


def test_job_script_asks_slurm_for_the_settings():
    settings = parse_cluster_options(
        ["queue=gpu", "account=lab", "cores=4", "memory=8GiB", "walltime=02:00:00", "gpus=2"]
    )
    with slurm_cluster(settings) as cluster:
        script = cluster.job_script()
    for line in (
        "#SBATCH -p gpu",
        "#SBATCH -A lab",
        "#SBATCH -n 1",
        "#SBATCH --cpus-per-task=4",
        "#SBATCH --mem=8G",
        "#SBATCH -t 02:00:00",
        "#SBATCH --gres=gpu:2",
    ):
        assert line in script.splitlines()
    assert "--nthreads 4" in script
    assert "--resources GPU=2" in script
    with slurm_cluster(SlurmSettings()) as cluster:  # CPU only: no GPU asked or advertised
        script = cluster.job_script()
    assert "--gres" not in script
    assert "GPU" not in script


@pytest.mark.parametrize(
    ("options", "match"),
    [
        (["cores"], "KEY=VALUE"),
        (["colour=red"], "KEY=VALUE"),
        (["cores=two"], "cores: expected an integer"),
        (["jobs=0"], "jobs"),
        (["gpus=-1"], "gpus"),
        (["walltime=2h"], "walltime"),
    ],
)
def test_bad_cluster_options_name_the_option(options, match):
    with pytest.raises(ValueError, match=match):
        parse_cluster_options(options)


def test_cluster_options_are_refused_on_the_command_line_in_one_line(tmp_path):
    _zoo(tmp_path, n_members=1, n_test=100)
    done = fdbench("zoo", "zoo.yaml", "--cluster", "slurm", "--cluster-option", "jobs=zero",
                   cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "fdbench: error: --cluster-option jobs: expected an integer, got 'zero'"
    ]


@pytest.mark.slow
def test_zoo_on_a_single_node_slurm_equals_the_sequential_run(tmp_path):
    _zoo(tmp_path, n_members=3, n_test=200)
    sequential = fdbench("zoo", "zoo.yaml", "--out", "seq", "--workers", "0", "--no-report",
                         cwd=tmp_path)  # fmt: skip
    assert sequential.returncode == 0, sequential.stderr
    try:
        with single_node_slurm(tmp_path / "slurm") as env:
            done = fdbench("zoo", "zoo.yaml", "--out", "par", "--no-report", "--cluster", "slurm",
                           "--cluster-option", "jobs=1", "--cluster-option", "memory=1GiB",
                           "--cluster-option", "walltime=00:10:00", cwd=tmp_path,
                           env=env)  # fmt: skip
    except SlurmUnavailable as why:
        pytest.skip(f"could not start Slurm here: {why}")
    assert done.returncode == 0, done.stderr
    expected = pd.read_parquet(tmp_path / "seq" / "results.parquet")
    pd.testing.assert_frame_equal(
        _sorted(pd.read_parquet(tmp_path / "par" / "results.parquet")), _sorted(expected)
    )
