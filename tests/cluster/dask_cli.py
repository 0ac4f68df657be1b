"""A dask cluster started as a user starts one: ``dask scheduler`` and ``dask worker`` processes
(the dask command line, on loopback), each worker in a working directory of its own."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
START_SECONDS = 60


@dataclass
class CliCluster:
    """The scheduler's address and the worker processes by name (``w0``, ``w1``, ...)."""

    address: str
    workers: dict[str, subprocess.Popen] = field(default_factory=dict)
    folders: dict[str, Path] = field(default_factory=dict)

    def kill(self, name: str) -> None:
        """SIGKILL the worker ``name`` (it has no nanny: nothing restarts it)."""
        self.workers[name].send_signal(signal.SIGKILL)
        self.workers[name].wait(timeout=30)


def environment() -> dict[str, str]:
    """This checkout's sources on the path, one BLAS thread, no ``FDBENCH_DEBUG``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "200"}
    env.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})
    env.pop("FDBENCH_DEBUG", None)
    return env


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _wait_for_file(path: Path, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while not (path.is_file() and path.stat().st_size):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"dask scheduler did not start: {log.read_text()[-2000:]}")
        time.sleep(0.1)


@contextmanager
def cli_cluster(
    folder: Path,
    n_workers: int = 2,
    *,
    memory: str = "1.5GiB",
    worker_args: Sequence[str] = (),
) -> Iterator[CliCluster]:
    """Start ``dask scheduler`` (a free port, written to a scheduler file) and ``n_workers``
    ``dask worker --nthreads 1 --no-nanny`` processes, each in ``folder/w<i>``; stop every
    process on exit, whatever happened."""
    from dask.distributed import Client

    folder.mkdir(parents=True, exist_ok=True)
    env = environment()
    dask = [sys.executable, "-m", "dask"]
    started: list[subprocess.Popen] = []
    scheduler_file = folder / "scheduler.json"
    try:
        log = folder / "scheduler.log"
        with open(log, "w") as out:
            started.append(
                subprocess.Popen(
                    [*dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     "--scheduler-file", str(scheduler_file)],
                    cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT,
                )
            )  # fmt: skip
        _wait_for_file(scheduler_file, started[0], log)
        cluster = CliCluster(json.loads(scheduler_file.read_text())["address"])
        for i in range(n_workers):
            name = f"w{i}"
            home = folder / name
            home.mkdir()
            with open(folder / f"{name}.log", "w") as out:
                process = subprocess.Popen(
                    [*dask, "worker", cluster.address, "--name", name, "--nthreads", "1",
                     "--no-nanny", "--memory-limit", memory, "--no-dashboard",
                     "--local-directory", str(home / "dask"), *worker_args],
                    cwd=home, env=env, stdout=out, stderr=subprocess.STDOUT,
                )  # fmt: skip
            started.append(process)
            cluster.workers[name], cluster.folders[name] = process, home
        with Client(cluster.address, timeout=START_SECONDS) as client:
            client.wait_for_workers(n_workers, timeout=START_SECONDS)
        yield cluster
    finally:
        for process in reversed(started):
            _stop(process)
