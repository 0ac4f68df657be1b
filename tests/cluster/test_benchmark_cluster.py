"""``fdbench benchmark --scheduler`` on a dask cluster of command-line processes, with a
relative ``--out``: the same results as a sequential run."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.cluster.dask_cli import cli_cluster
from tests.cluster.test_dask_cli import _sorted, fdbench

pytest.importorskip("torch")
pytest.importorskip("lightning")
pytestmark = pytest.mark.slow

#: Two tiny CE runs on the tiny Fashion-MNIST experiment (an epoch, no MC dropout, no bootstrap).
TINY = """\
name: tiny
data: {builder: fashion_mnist_experiments, args: {seed: 0, tiny: true}}
architecture: {name: convnet, options: {width: 4, feature_dim: 8}}
training: {epochs: 1, batch_size: 128, threads: 1, augment: false}
inference: {mc_samples: 0, batch_size: 256, max_train_samples: 100}
methods:
  - {name: ce, kind: ce, seeds: [0, 1]}
analysis: {n_bootstrap: 0}
"""


def test_benchmark_on_a_dask_cli_cluster_with_a_relative_out(tmp_path):
    (tmp_path / "tiny.yaml").write_text(TINY)
    sequential = fdbench("benchmark", "tiny.yaml", "--out", "seq", "--workers", "0",
                         "--no-report", cwd=tmp_path)  # fmt: skip
    assert sequential.returncode == 0, sequential.stderr
    with cli_cluster(tmp_path / "cluster", memory="2GiB") as cluster:
        done = fdbench("benchmark", "tiny.yaml", "--out", "par", "--scheduler", cluster.address,
                       "--no-report", cwd=tmp_path)  # fmt: skip
        assert done.returncode == 0, done.stderr
        for home in cluster.folders.values():
            assert not (home / "par").exists()
    expected = pd.read_parquet(tmp_path / "seq" / "results.parquet")
    pd.testing.assert_frame_equal(
        _sorted(pd.read_parquet(tmp_path / "par" / "results.parquet")), _sorted(expected)
    )
