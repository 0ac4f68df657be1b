"""Evaluate the trained outputs of a finished benchmark run folder again with the current code.

Separates what a change of the evaluation code (CSFs, protocol, metrics) does to the results from
what a change of training does: the outputs stores of OLD_RUN are hard-linked (not copied) into
NEW_RUN/runs, only the evaluation jobs of the current code's plan run (every training job is
done: its store exists), and NEW_RUN/results.parquet is written. Compare it with
OLD_RUN/results.parquet using compare_results.py.

    python benchmarks/reevaluate.py OLD_RUN NEW_RUN [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from fdbench.core.io import write_table
from fdbench.core.runner import run_jobs
from fdbench.jobs.benchmark import collect_results, plan_benchmark
from fdbench.jobs.plan import parse_config
from fdbench.training.experiments import build_experiments


def _link_tree(source: Path, target: Path) -> None:
    for folder, _, files in os.walk(source):
        destination = target / Path(folder).relative_to(source)
        destination.mkdir(parents=True, exist_ok=True)
        for name in files:
            if not (destination / name).exists():
                os.link(Path(folder) / name, destination / name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="a finished `fdbench benchmark` run folder")
    parser.add_argument("new", type=Path, help="folder for the re-evaluated results")
    parser.add_argument("--workers", type=int, default=2, help="local dask workers (0: none)")
    args = parser.parse_args()
    config = parse_config(json.loads((args.old / "config.json").read_text()))
    _link_tree(args.old / "runs", args.new / "runs")
    plan = plan_benchmark(config, build_experiments(config), args.new)
    missing = [job.key for job in plan.training if not job.done]
    if missing:
        raise SystemExit(f"{args.old}: no trained outputs for {missing[:3]} ...")
    start = time.perf_counter()
    run_jobs(plan.evaluation, workers=args.workers or None)
    print(f"evaluation: {time.perf_counter() - start:.1f} s")
    print(write_table(collect_results(plan), args.new / "results.parquet"))


if __name__ == "__main__":
    main()
