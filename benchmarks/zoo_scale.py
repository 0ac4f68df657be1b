"""Scale of ``fdbench zoo``: a 100-member zoo of saved logits, and one ImageNet-size member.

Part 1 generates a zoo of ``--members`` members (N = 10 000 test samples, K = 100 classes, no
stored validation split so the job declares its 1 000/9 000 split, an OOD pool of 150 classes ×
40 samples, ``--mcd-members`` (5) members with 10 MC-dropout passes) and times ``run_zoo`` with
every analysis (evaluation, tables, figures, report), reporting the peak resident memory of the
process (in this process with ``--workers 0``; with ``--workers N``, on a local cluster of N worker
processes, the peak of this process and, per worker, how far its peak resident memory rose
against the size of one member's logits: from what it held once fdbench was imported ("raw")
and from what it held once it had also evaluated and written a tiny member ("warm": the code
and buffers loaded on first use are then in place, so the rise is what the members' data
costs).

Part 2 writes one member with N = 50 000, K = 1 000 float64 test logits and a 50 000-sample OOD
pool (250 classes × 200), in a child process, then evaluates it in a fresh child process and
compares that process's peak resident memory with the size of the member's logits.

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/zoo_scale.py [--members 500 --workers 2]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def _status_mib(field: str) -> float:
    """A memory field of ``/proc/self/status`` (``VmRSS``, ``VmHWM``: the peak resident memory
    of this process's address space, unlike ``ru_maxrss``, which ``execve`` keeps from the
    parent), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"/proc/self/status has no {field}")


def _worker_baseline() -> tuple[float, float]:
    """In a worker: the resident memory (MiB) once what evaluating a member needs is imported
    ("raw"), and once a tiny member was also evaluated and written by the member job
    (:func:`fdbench.jobs.zoo.member_jobs`), so that the code and buffers loaded on first use
    (Parquet writer, lazily imported modules) are in place ("warm"). The peak resident memory
    is then reset to the current one (``/proc/self/clear_refs``)."""
    from fdbench.jobs.zoo import member_jobs
    from fdbench.zoo import parse_zoo_config
    from fdbench.zoo.synthetic import make_synthetic_zoo

    raw = _status_mib("VmRSS")
    with tempfile.TemporaryDirectory() as tmp:
        make_synthetic_zoo(Path(tmp, "zoo"), n_members=1, n_test=300, n_ood_classes=30)
        config = parse_zoo_config({"name": "w", "zoo": str(Path(tmp, "zoo"))})
        (job,) = member_jobs(config, Path(tmp, "run"))
        job.output.parent.mkdir(parents=True)
        job.fn(*job.args)
    Path("/proc/self/clear_refs").write_text("5")
    return raw, _status_mib("VmRSS")


def _worker_peak() -> float:
    return _status_mib("VmHWM")


def _logits_mib(folder: Path) -> tuple[float, float]:
    """The logits of the smallest and the largest member (MiB, as stored: every
    ``*_logits`` array, MC-dropout passes included)."""
    import numpy as np

    sizes = []
    for path in folder.glob("*.npz"):
        with np.load(path) as data:
            sizes.append(sum(data[k].nbytes for k in data.files if k.endswith("_logits")))
    return min(sizes) / 2**20, max(sizes) / 2**20


def part_zoo(folder: Path, members: int, workers: int, mcd_members: int = 5) -> None:
    from fdbench.jobs.zoo import run_zoo
    from fdbench.zoo import parse_zoo_config
    from fdbench.zoo.synthetic import make_synthetic_zoo

    start = time.perf_counter()
    make_synthetic_zoo(
        folder / "zoo",
        n_members=members,
        n_test=10_000,
        n_classes=100,
        n_ood_classes=150,
        n_ood_per_class=40,
        mcd_members=mcd_members,
        mcd_passes=10,
        seed=0,
    )
    print(f"generated {members} members in {time.perf_counter() - start:.1f} s")
    smallest, largest = _logits_mib(folder / "zoo")
    config = parse_zoo_config({"name": "scale", "zoo": str(folder / "zoo")})
    print(f"load average before: {_load()}")
    if not workers:
        start, cpu = time.perf_counter(), time.process_time()
        run_zoo(config, folder / "run", workers=0)
        wall = time.perf_counter() - start
    else:
        from dask.distributed import Client

        from fdbench.core.runner import local_cluster

        with local_cluster(workers) as cluster, Client(cluster) as client:
            baseline = client.run(_worker_baseline)
            start, cpu = time.perf_counter(), time.process_time()
            run_zoo(config, folder / "run", scheduler=cluster.scheduler_address)
            wall = time.perf_counter() - start
            peaks = client.run(_worker_peak)
        for address, (raw, warm) in sorted(baseline.items()):
            peak = peaks[address]
            print(
                f"worker {address}: {raw:.0f} MiB after imports, {warm:.0f} MiB warm, peak "
                f"{peak:.0f} MiB; rise from warm +{peak - warm:.0f} MiB = "
                f"{(peak - warm) / smallest:.2f} × a plain member's logits ({smallest:.1f} MiB), "
                f"{(peak - warm) / largest:.2f} × the largest member's ({largest:.1f} MiB); "
                f"raw rise +{peak - raw:.0f} MiB = {(peak - raw) / smallest:.2f} × / "
                f"{(peak - raw) / largest:.2f} ×"
            )
    print(
        f"zoo of {members} members, all analyses: {wall:.1f} s wall, "
        f"{time.process_time() - cpu:.1f} s CPU of this process, workers={workers}; "
        f"peak RSS of this process {_peak_rss_mib():.0f} MiB; load average after: {_load()}"
    )


WRITE = """
import sys, numpy as np
rng = np.random.default_rng(0)
n, k, n_ood, per = 50_000, 1_000, 50_000, 200
labels = rng.integers(0, k, n)
z = rng.standard_normal((n, k)); z[np.arange(n), labels] += 4.0
classes = np.repeat(np.arange(n_ood // per), per)
ood = rng.standard_normal((n_ood, k)); ood[np.arange(n_ood), classes % k] += 2.0 * (classes / 250)
np.savez(sys.argv[1], test_logits=z, test_labels=labels, ood_logits=ood, ood_classes=classes)
"""

EVALUATE = """
import resource, sys, time
from fdbench.zoo import discover_members, evaluate_member, parse_zoo_config
(member,) = discover_members(sys.argv[1])
config = parse_zoo_config({"name": "imagenet", "zoo": sys.argv[1]})
start = time.perf_counter()
results, levels = evaluate_member(member, config)
print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def part_imagenet(folder: Path) -> None:
    member = folder / "imagenet" / "big.npz"
    member.parent.mkdir(parents=True)
    subprocess.run([sys.executable, "-c", WRITE, str(member)], check=True)
    size = (50_000 * 1_000 + 50_000 * 1_000) * 8 / 2**20
    print(f"load average before: {_load()}")
    out = subprocess.run(
        [sys.executable, "-c", EVALUATE, str(member.parent)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    seconds, peak = float(out[-2]), float(out[-1])
    print(
        f"ImageNet-size member (50 000 × 1 000 test + 50 000 × 1 000 OOD, float64: "
        f"{size:.0f} MiB of logits): evaluated in {seconds:.1f} s, peak RSS {peak:.0f} MiB = "
        f"{peak / size:.2f} × the logits; load average after: {_load()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=100)
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--mcd-members", type=int, default=5)
    parser.add_argument("--skip-imagenet", action="store_true")
    parser.add_argument("--skip-zoo", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fdbench-zoo-scale-") as tmp:
        if not args.skip_zoo:
            part_zoo(Path(tmp), args.members, args.workers, args.mcd_members)
        if not args.skip_imagenet:
            part_imagenet(Path(tmp))


if __name__ == "__main__":
    main()
