"""Speed of the AUGRC-paper-style analysis: bootstrap AURC/AUGRC, rank-then-aggregate, Wilcoxon.

Synthetic data: for every study and training seed, 10,000 test samples with 0/1 residuals and
13 CSFs whose confidences separate failures from successes to different degrees. Every study ×
seed is bootstrapped 500 times (paired over CSFs and seeds by a shared seed), then the CSFs are
ranked per resample (rank-then-aggregate per study, the overall ranking across studies and the
rank distributions) and compared pairwise with Holm-corrected one-sided Wilcoxon tests, for
AURC and AUGRC: everything the report's ranking section computes. Prints the wall-clock and
CPU time of each stage on one process (CPU time is the fairer number on a shared machine).

    OMP_NUM_THREADS=1 PYTHONPATH=src taskset -c 0 python benchmarks/analysis_speed.py \
        [--studies 20 --seeds 5 --csfs 13 --samples 10000 --resamples 500]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from fdbench import metrics as M
from fdbench.analysis import (
    StudySamples,
    bootstrap_analysis,
    bootstrap_ranks,
    overall_ranks,
    rank_distribution,
    rank_then_aggregate,
    significance_matrix,
)


def synthetic_tasks(n_studies: int, n_seeds: int, n_csfs: int, n: int) -> list[StudySamples]:
    """Runs × studies of synthetic residuals (accuracy 70-95 %) and CSF confidences."""
    tasks = []
    for study in range(n_studies):
        for seed in range(n_seeds):
            rng = np.random.default_rng([study, seed])
            error_rate = 0.05 + 0.25 * study / max(n_studies - 1, 1)
            residuals = (rng.uniform(size=n) < error_rate).astype(np.float64)
            confidences = {
                f"csf{k:02d}": rng.normal(size=n) - (0.5 + 0.1 * k) * residuals
                for k in range(n_csfs)
            }
            tasks.append(
                StudySamples("synthetic", "ce", seed, f"study{study:02d}", residuals, confidences)
            )
    return tasks


def rank_analysis(table: pd.DataFrame, metric: str) -> dict[str, pd.DataFrame]:
    """Per-study rank-then-aggregate, overall ranking across studies and rank distributions."""
    ranks = bootstrap_ranks(table, metric)
    return {
        "per_study": rank_then_aggregate(table, metric),
        "overall": overall_ranks(ranks),
        "distribution": rank_distribution(ranks),
    }


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """Run ``fn``; return its result, wall-clock seconds and CPU seconds of this process."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--csfs", type=int, default=13)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=500)
    args = parser.parse_args()
    tasks = synthetic_tasks(args.studies, args.seeds, args.csfs, args.samples)
    print(
        f"{args.csfs} CSFs x {args.studies} studies x {args.seeds} seeds x {args.resamples} "
        f"resamples of {args.samples} samples; one process"
    )

    _, counts_s, counts_cpu = timed(lambda: M.bootstrap_counts(args.samples, args.resamples, 0))
    table, boot_s, boot_cpu = timed(
        lambda: bootstrap_analysis(tasks, metrics=("aurc", "augrc"), n_resamples=args.resamples)
    )
    rankings, rank_s, rank_cpu = timed(
        lambda: {m: rank_analysis(table, m) for m in ("aurc", "augrc")}
    )
    maps, wilcoxon_s, wilcoxon_cpu = timed(
        lambda: {m: significance_matrix(table, m) for m in ("aurc", "augrc")}
    )
    runs = len(tasks) * args.csfs
    print(f"bootstrap table: {len(table):,} rows in {boot_s:.1f} s wall, {boot_cpu:.1f} s CPU")
    print(
        f"  drawing counts: {counts_s:.3f} s wall, {counts_cpu:.3f} s CPU per study x seed "
        f"(x {len(tasks)} calls)"
    )
    print(
        f"  per CSF x study x seed: {1000 * boot_cpu / runs:.1f} ms CPU "
        f"(60 s budget: <= {60_000 / runs:.1f} ms)"
    )
    print(
        "rankings: rank-then-aggregate, overall, distributions (2 metrics): "
        f"{rank_s:.2f} s wall, {rank_cpu:.2f} s CPU"
    )
    print(f"Wilcoxon + Holm maps (2 metrics): {wilcoxon_s:.2f} s wall, {wilcoxon_cpu:.2f} s CPU")
    total_s = boot_s + rank_s + wilcoxon_s
    total_cpu = boot_cpu + rank_cpu + wilcoxon_cpu
    print(f"total: {total_s:.1f} s wall, {total_cpu:.1f} s CPU (target 60 s)")
    best = rankings["augrc"]["per_study"].groupby("study").head(1)
    n_sig = int(sum(m["significant"].sum() for m in maps.values()))
    print(f"best CSF by AUGRC in {len(best)} studies: {best.csf.value_counts().to_dict()}")
    print(f"significant ordered pairs (both metrics): {n_sig}")


if __name__ == "__main__":
    main()
