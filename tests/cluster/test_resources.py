"""Resources per job: GPU jobs on workers that advertise GPUs each get their own device; on
workers that advertise none the declarations are inert."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from fdbench.core.resources import GPU, claim_slots, gpu_indices, job_resources
from fdbench.core.runner import Job, run_jobs


def record_device(path: Path, peers: int) -> None:
    """Write the GPU indices this job claimed, then wait until ``peers`` jobs wrote theirs
    (so that they all run at once)."""
    path.write_text(json.dumps(list(gpu_indices())))
    deadline = time.monotonic() + 30
    while len(list(path.parent.glob("*.json"))) < peers and time.monotonic() < deadline:
        time.sleep(0.05)


def _jobs(folder: Path, n: int, gpus: int) -> list[Job]:
    return [
        Job(f"j{i}", record_device, (folder / f"{i}.json", n), folder / f"{i}.json",
            resources=job_resources(gpus))
        for i in range(n)
    ]  # fmt: skip


def test_job_resources_validates_its_argument():
    assert job_resources(0) == ()
    assert job_resources(2) == ((GPU, 2.0),)
    with pytest.raises(ValueError, match="gpus"):
        job_resources(-1)
    with pytest.raises(TypeError, match="gpus"):
        job_resources(1.5)  # type: ignore[arg-type]


def test_gpu_jobs_run_on_workers_advertising_no_gpu(tmp_path):
    """CPU-only: the GPU declaration is dropped, the jobs run and claim no device."""
    run_jobs(_jobs(tmp_path, 2, gpus=1), workers=2)
    assert [json.loads((tmp_path / f"{i}.json").read_text()) for i in range(2)] == [[], []]
    (tmp_path / "seq").mkdir()
    run_jobs(_jobs(tmp_path / "seq", 1, gpus=1))  # in this process as well
    assert json.loads((tmp_path / "seq" / "0.json").read_text()) == []


def test_a_worker_with_two_gpus_runs_two_gpu_jobs_each_on_its_own_device(tmp_path):
    from dask.distributed import LocalCluster

    with LocalCluster(
        n_workers=1, threads_per_worker=2, resources={GPU: 2}, dashboard_address=None
    ) as cluster:
        run_jobs(_jobs(tmp_path, 2, gpus=1), scheduler=cluster.scheduler_address)
    claimed = sorted(json.loads((tmp_path / f"{i}.json").read_text()) for i in range(2))
    assert claimed == [[0], [1]]


def test_claimed_slots_are_given_back():
    assert gpu_indices() == ()
    with claim_slots({GPU: 1}) as claimed:  # outside a worker: nothing to claim
        assert claimed == ()


@pytest.mark.skipif(not pytest.importorskip("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_training_uses_the_claimed_gpu(tmp_path):
    import torch
    from dask.distributed import LocalCluster

    count = torch.cuda.device_count()
    with LocalCluster(
        n_workers=1, threads_per_worker=count, resources={GPU: count}, dashboard_address=None
    ) as cluster:
        run_jobs(
            [Job(f"t{i}", trainer_device, (tmp_path / f"{i}.json", count), tmp_path / f"{i}.json",
                 resources=job_resources(1)) for i in range(count)],
            scheduler=cluster.scheduler_address,
        )  # fmt: skip
    devices = sorted(json.loads((tmp_path / f"{i}.json").read_text()) for i in range(count))
    assert devices == [[i, i] for i in range(count)]


def trainer_device(path: Path, peers: int) -> None:
    from fdbench.training.context import trainer

    root = trainer(1, device="cuda").strategy.root_device
    path.write_text(json.dumps([gpu_indices()[0], root.index]))
    deadline = time.monotonic() + 60
    while len(list(path.parent.glob("*.json"))) < peers and time.monotonic() < deadline:
        time.sleep(0.05)
