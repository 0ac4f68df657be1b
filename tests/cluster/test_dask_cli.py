"""``fdbench zoo`` and ``fdbench benchmark`` on a dask cluster started with the dask command
line (a scheduler and two workers, each in its own working directory), with a relative
``--out``: the same results as a sequential run; a worker killed mid-job."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest

from fdbench.zoo.synthetic import make_synthetic_zoo
from tests.cluster.dask_cli import cli_cluster, environment

pytestmark = pytest.mark.slow  # processes of their own, each importing fdbench

ZOO_CONFIG = (
    "name: tiny\nzoo: zoo\npnorm:\n  t_count: 5\nn_bootstrap: 20\n"
    "cood:\n  n_estimation: 12\n  n_test: 4\n"
)


def fdbench(
    *args: str, cwd: Path, timeout: int = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """``python -m fdbench ARGS`` run in ``cwd`` as a user types it (``env`` added to this
    checkout's :func:`~tests.cluster.dask_cli.environment`)."""
    return subprocess.run(
        [sys.executable, "-m", "fdbench", *args],
        capture_output=True,
        text=True,
        env={**environment(), **(env or {})},
        cwd=cwd,
        timeout=timeout,
    )


def _sorted(table: pd.DataFrame) -> pd.DataFrame:
    keys = [c for c in table.columns if table[c].dtype == object]
    return table.sort_values(keys).reset_index(drop=True)


def _partial_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.tmp"))


def _zoo(folder: Path, **sizes) -> None:
    make_synthetic_zoo(folder / "zoo", n_ood_classes=25, **sizes)
    (folder / "zoo.yaml").write_text(ZOO_CONFIG)


def test_zoo_on_a_dask_cli_cluster_with_a_relative_out(tmp_path):
    _zoo(tmp_path, n_members=4, n_test=200)
    sequential = fdbench("zoo", "zoo.yaml", "--out", "seq", "--workers", "0", cwd=tmp_path)
    assert sequential.returncode == 0, sequential.stderr
    with cli_cluster(tmp_path / "cluster") as cluster:
        done = fdbench("zoo", "zoo.yaml", "--out", "par", "--scheduler", cluster.address,
                       cwd=tmp_path)  # fmt: skip
        assert done.returncode == 0, done.stderr
        for home in cluster.folders.values():  # nothing written in a worker's directory
            assert not (home / "par").exists()
    expected = pd.read_parquet(tmp_path / "seq" / "results.parquet")
    pd.testing.assert_frame_equal(
        _sorted(pd.read_parquet(tmp_path / "par" / "results.parquet")), _sorted(expected)
    )
    for table in ("members.csv", "tables/spearman.csv"):
        assert (tmp_path / "par" / table).read_bytes() == (tmp_path / "seq" / table).read_bytes()


def test_a_worker_killed_mid_job_the_job_runs_again_elsewhere(tmp_path):
    from dask.distributed import Client

    from fdbench.core.runner import START_TOPIC

    _zoo(tmp_path, n_members=6, n_test=4000, n_classes=50, mcd_members=0)
    sequential = fdbench("zoo", "zoo.yaml", "--out", "seq", "--workers", "0", "--no-report",
                         cwd=tmp_path)  # fmt: skip
    assert sequential.returncode == 0, sequential.stderr
    held = ["--preload", str(Path(__file__).with_name("held_start.py"))]
    with (
        cli_cluster(tmp_path / "cluster", worker_args=held) as cluster,
        Client(cluster.address) as client,
    ):
        started: list[dict] = []
        seen = threading.Event()

        def on_start(event) -> None:
            started.append(event[1])
            seen.set()

        client.subscribe_topic(START_TOPIC, on_start)
        addresses = {a: str(i["name"]) for a, i in client.scheduler_info()["workers"].items()}
        assert sorted(addresses.values()) == ["w0", "w1"]
        run = subprocess.Popen(
            [sys.executable, "-m", "fdbench", "zoo", "zoo.yaml", "--out", "par", "--no-report",
             "--scheduler", cluster.address],
            cwd=tmp_path, env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        try:
            assert seen.wait(120), "no job started"
            address = started[0]["worker"]  # the job holds after its start: killed mid-job
            cluster.kill(addresses[address])
            _, err = run.communicate(timeout=180)
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
    assert run.returncode == 0, err
    first = started[0]["key"].removeprefix("fdbench-").rsplit("-", 1)[0]
    pattern = rf"job (\S+) was lost with its worker {re.escape(address)}; it runs again on"
    assert re.findall(pattern, err) == [first], err
    expected = pd.read_parquet(tmp_path / "seq" / "results.parquet")
    pd.testing.assert_frame_equal(
        _sorted(pd.read_parquet(tmp_path / "par" / "results.parquet")), _sorted(expected)
    )
    assert _partial_files(tmp_path / "par") == []
