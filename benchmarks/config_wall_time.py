"""Wall time of every training job of a benchmark config, run serially as the lead's
orchestration would (ConfidNet after its base), plus the i.i.d. accuracy of each run.

Usage:
    PYTHONPATH=src python benchmarks/config_wall_time.py \
        src/fdbench/configs/fashion_mnist_quick.yaml OUT
"""

from __future__ import annotations

import sys
import time

import numpy as np

from fdbench.jobs.plan import load_config
from fdbench.outputs import read_outputs
from fdbench.training import build_experiments, plan_jobs, run_training_job


def main() -> None:
    config = load_config(sys.argv[1])
    out = sys.argv[2]
    start = time.perf_counter()
    experiments = build_experiments(config)
    print(f"build experiments: {time.perf_counter() - start:.1f} s", flush=True)
    for experiment in experiments:
        for method, seed in plan_jobs(config):
            t = time.perf_counter()
            path = run_training_job(config, experiment, method, seed, out)
            iid = read_outputs(path, lazy=True).splits["iid"]
            acc = float(np.mean(np.asarray(iid.logits).argmax(axis=1) == np.asarray(iid.labels)))
            print(
                f"{experiment.name} {method} seed {seed}: {time.perf_counter() - t:.1f} s, "
                f"iid accuracy {acc:.4f}",
                flush=True,
            )
    print(f"total: {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
