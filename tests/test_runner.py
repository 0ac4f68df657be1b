"""Tests of the job runner: order, skipping finished jobs, and dask giving the same files."""

from __future__ import annotations

from pathlib import Path

import pytest

from fdbench.core.runner import Job, run_jobs


def write_sum(path: Path, value: int, source: Path | None) -> None:
    base = int(source.read_text()) if source is not None else 0
    path.write_text(str(base + value))


def grid(tmp_path: Path) -> list[Job]:
    a, b, c = (tmp_path / n for n in ("a.txt", "b.txt", "c.txt"))
    return [
        Job("c", write_sum, (c, 100, b), c, after=("b",)),
        Job("a", write_sum, (a, 1, None), a),
        Job("b", write_sum, (b, 10, a), b, after=("a",)),
    ]


def test_dependencies_run_first_and_done_jobs_are_skipped(tmp_path):
    ran = run_jobs(grid(tmp_path))
    assert [job.key for job in ran] == ["a", "b", "c"]
    assert (tmp_path / "c.txt").read_text() == "111"
    (tmp_path / "c.txt").unlink()
    assert [job.key for job in run_jobs(grid(tmp_path))] == ["c"]
    assert run_jobs(grid(tmp_path)) == []


def test_dask_local_cluster_gives_the_same_files(tmp_path):
    seq, par = tmp_path / "seq", tmp_path / "par"
    seq.mkdir()
    par.mkdir()
    run_jobs(grid(seq))
    done = []
    run_jobs(grid(par), workers=2, on_done=lambda job: done.append(job.key))
    assert sorted(done) == ["a", "b", "c"]
    for name in ("a.txt", "b.txt", "c.txt"):
        assert (par / name).read_text() == (seq / name).read_text()


class Payload:
    """A non-container argument, like an experiment holding its arrays."""

    def __init__(self, values):
        self.values = values


def write_total(path: Path, payload: Payload, scale: int) -> None:
    path.write_text(str(int(payload.values.sum()) * scale))


def test_a_large_shared_argument_goes_to_the_cluster_once(tmp_path):
    import warnings

    import numpy as np

    payload = Payload(np.ones(2_000_000, dtype=np.int64))  # 16 MB, over dask's 10 MB warning
    jobs = [
        Job(f"j{k}", write_total, (tmp_path / f"{k}.txt", payload, k), tmp_path / f"{k}.txt")
        for k in range(1, 5)
    ]
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="Sending large graph")
        run_jobs(jobs, workers=2)
    assert [(tmp_path / f"{k}.txt").read_text() for k in range(1, 5)] == [
        str(2_000_000 * k) for k in range(1, 5)
    ]


@pytest.mark.parametrize(
    ("jobs", "match"),
    [
        ([Job("a", print, (), Path("x"), after=("a",))], "cycle"),
        ([Job("a", print, (), Path("x"), after=("zz",))], "unknown job"),
        ([Job("a", print, (), Path("x")), Job("a", print, (), Path("y"))], "unique"),
    ],
)
def test_bad_grids_are_rejected(jobs, match):
    with pytest.raises(ValueError, match=match):
        run_jobs(jobs)


def _environ(names):
    import os

    return {name: os.environ.get(name) for name in names}


def test_local_workers_have_one_thread_and_no_malloc_trim():
    from dask.distributed import Client

    from fdbench.core.runner import local_cluster

    names = ["MALLOC_TRIM_THRESHOLD_", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"]
    with local_cluster(1) as cluster, Client(cluster) as client:
        seen = client.submit(_environ, names, pure=False).result()
    assert seen == {
        "MALLOC_TRIM_THRESHOLD_": None,
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
    }


def _profiling(dask_worker) -> bool:
    return "profile" in dask_worker.periodic_callbacks


def test_local_workers_run_no_statistical_profiler():
    """Its samples grew a zoo worker by ~0.7 MiB per member (core.runner.WORKER_CONFIG)."""
    from dask.distributed import Client

    from fdbench.core.runner import local_cluster

    with local_cluster(1) as cluster, Client(cluster) as client:
        assert list(client.run(_profiling).values()) == [False]


SIGINT_WHILE_STARTING = """
import os, signal, sys, threading, psutil
from dask.distributed import Client
from fdbench.core.runner import local_cluster

up = threading.Event()
hit = set()

def interrupt_workers():
    # SIGINT to every spawned worker process from the moment it exists (still importing)
    while not up.is_set():
        for child in psutil.Process().children(recursive=True):
            try:
                if "spawn_main" in " ".join(child.cmdline()):
                    os.kill(child.pid, signal.SIGINT)
                    hit.add(child.pid)
            except (psutil.Error, ProcessLookupError):
                pass
        up.wait(0.002)

def main():
    thread = threading.Thread(target=interrupt_workers)
    thread.start()
    try:
        with local_cluster(2) as cluster, Client(cluster) as client:
            client.wait_for_workers(2)
            assert client.submit(sum, [1, 2], pure=False).result() == 3
            workers = set(client.run(os.getpid).values())
    finally:
        up.set()
        thread.join()
    print(len(hit & workers))


if __name__ == "__main__":  # the workers are spawned: they import this file too
    main()
"""


def test_local_workers_survive_sigint_while_they_start(tmp_path):
    """Ctrl-C at a terminal reaches the whole process group, workers still importing included:
    they neither die nor print a traceback (core.runner.local_cluster)."""
    import os
    import subprocess
    import sys

    script = tmp_path / "starting.py"
    script.write_text(SIGINT_WHILE_STARTING)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2"  # both workers were signalled while they started
    assert "KeyboardInterrupt" not in done.stderr


def train_three_epochs(path: Path) -> None:
    from fdbench.core.runner import report_epoch

    for epoch in (1, 2, 3):
        report_epoch(epoch, 3)
    path.write_text("trained")


@pytest.mark.parametrize("workers", [None, 2])
def test_running_jobs_report_their_epochs(tmp_path, workers):
    jobs = [
        Job(f"train{i}", train_three_epochs, (tmp_path / f"m{i}",), tmp_path / f"m{i}")
        for i in range(2)
    ]
    epochs, done = [], []
    run_jobs(
        jobs,
        workers=workers,
        on_epoch=lambda job, d, t: epochs.append((job.key, d, t)),
        on_done=lambda job: done.append(job.key),
    )
    assert sorted(done) == ["train0", "train1"]
    if workers is None:
        assert epochs == [(f"train{i}", d, 3) for i in (0, 1) for d in (1, 2, 3)]
    else:  # events reach the client asynchronously: some may come after the job's result
        assert set(epochs) <= {(f"train{i}", d, 3) for i in (0, 1) for d in (1, 2, 3)}
    # outside run_jobs a report goes nowhere
    from fdbench.core.runner import report_epoch

    report_epoch(1, 1)


def test_stage_progress_counts_epoch_shares_that_never_go_back():
    from fdbench.core.runner import _StageProgress

    calls = []
    job = Job("train", train_three_epochs, (Path("x"),), Path("x"))
    counter = _StageProgress("training", 4, 1, lambda *call: calls.append(call))
    counter.epoch_done(job, 1, 2)
    counter.epoch_done(job, 2, 2)
    counter.epoch_done(job, 1, 4)  # the job's second training loop starts
    counter.job_done(job)
    assert calls == [
        ("training", 1, 4),
        ("training", 1.5, 4),
        ("training", 1.99, 4),
        ("training", 1.99, 4),
        ("training", 2, 4),
    ]


def test_a_killed_attempts_leftovers_are_removed_before_the_job_runs_again(tmp_path):
    from fdbench.core.runner import remove_partial

    output = tmp_path / "results.parquet"
    leftovers = [tmp_path / ".results.parquet.ab12.tmp", tmp_path / ".results.parquet.tmp-x1"]
    leftovers[0].write_bytes(b"partial")
    leftovers[1].mkdir()
    (leftovers[1] / "zarr.json").write_text("{}")
    other = tmp_path / ".other.parquet.cd34.tmp"  # another job's file is left alone
    other.write_bytes(b"in progress")
    remove_partial(output)
    assert [p.name for p in tmp_path.iterdir()] == [other.name]


def end_worker(path: Path) -> None:
    import os

    os._exit(1)  # a worker process that dies, as on a segfault or the kernel's OOM killer


def test_a_job_that_ends_its_workers_is_named_in_one_line(tmp_path):
    import dask

    from fdbench.core.errors import WorkerLost, is_user_error, one_line

    done = tmp_path / "done.txt"
    jobs = [
        Job("fine", write_sum, (done, 1, None), done),
        Job(
            "crash", end_worker, (tmp_path / "never.txt",), tmp_path / "never.txt", after=("fine",)
        ),
    ]
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 0}),
        pytest.raises(WorkerLost) as raised,
    ):
        run_jobs(jobs, workers=1)
    message = one_line(raised.value)
    assert message.startswith("job crash ended the worker process")
    assert "--workers 0" in message
    assert is_user_error(raised.value)  # the command prints it as one line, no traceback
    assert done.read_text() == "1"  # the job finished before it is kept


def test_tasks_carrying_large_data_do_not_warn_about_the_graph():
    import warnings

    import numpy as np
    from dask.distributed import Client

    from fdbench.core.runner import large_graphs_allowed, local_cluster

    data = np.ones(2_000_000)  # 16 MB, over dask's 10 MB warning
    with local_cluster(1) as cluster, Client(cluster) as client:
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message="Sending large graph")
            with large_graphs_allowed():
                future = client.submit(np.sum, data, pure=False)
            assert future.result() == 2_000_000
        with pytest.warns(UserWarning, match="Sending large graph"):
            client.submit(np.sum, data, pure=False).result()
