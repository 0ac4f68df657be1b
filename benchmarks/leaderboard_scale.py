"""Speed of the leaderboard analysis at the AUGRC paper's size, paired Δ intervals included.

Synthetic data: 13 scoring methods of 4 training methods (8 CSFs of the baseline, 3 of
DeepGamblers, ConfidNet, DeVries), 20 studies (iid, 5 pooled corruption intensities, sub-class,
13 new-class studies on which every classifier drops its own misclassified inliers), 5 seeds,
test sets of 10,000 samples, 500 resamples. Stages, each timed (wall clock and CPU time of this
process): the paired bootstrap of AUGRC, AURC and AUROC_f (one draw per study over its
unfiltered set, shared by every run), the per-column tables, rank-then-aggregate per column and
over all columns, the Wilcoxon/Holm maps over all scoring methods and the paired Δ intervals of
every ordered pair, each for the three metrics.

``--wide`` times instead the paired bootstrap of one run with 23 scores (the CSFs of the default
benchmark) over 10,000 resamples of 10,000 samples, the three metrics (issue #37's second size).

    OMP_NUM_THREADS=1 PYTHONPATH=src taskset -c 0 python benchmarks/leaderboard_scale.py \
        [--studies 20 --seeds 5 --samples 10000 --resamples 500] [--wide]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from fdbench.analysis import leaderboard as lb
from fdbench.analysis.paired import PAIRED_METRICS, PairedSamples, paired_bootstrap

#: (training method, its CSFs, its error rate on in-distribution data)
METHODS = (
    ("ce", ("MSR", "MLS", "PE", "MCD-MSR", "MCD-PE", "MCD-EE", "TEMP-MLS", "Mahalanobis"), 0.10),
    ("deepgamblers", ("DG-Res", "MCD-MSR", "PE"), 0.12),
    ("confidnet", ("ConfidNet",), 0.10),
    ("devries", ("DeVries",), 0.11),
)


def study_names(n_studies: int) -> list[str]:
    """iid, corruption/1..5, subclass, then new-class studies (semantic first)."""
    fixed = ["iid", *(f"corruption/{s}" for s in range(1, 6)), "subclass", "new_class/semantic"]
    extra = [f"new_class/source{i:02d}" for i in range(max(0, n_studies - len(fixed)))]
    return (fixed + extra)[:n_studies]


def synthetic_tasks(n_studies: int, n_seeds: int, n: int) -> list[PairedSamples]:
    """Every run × study: residuals of its classifier, CSF confidences, the new-class filter."""
    tasks = []
    for s, study in enumerate(study_names(n_studies)):
        new_class = study.startswith("new_class/")
        n_in = n // 2 if new_class else n
        for m, (method, csfs, error) in enumerate(METHODS):
            for seed in range(n_seeds):
                rng = np.random.default_rng([s, m, seed])
                wrong = rng.uniform(size=n_in) < error * (1 + 0.1 * s)
                if new_class:
                    kept = np.r_[np.flatnonzero(~wrong), np.arange(n_in, n)]
                    residuals = (kept >= n_in).astype(np.float64)
                else:
                    kept, residuals = None, wrong.astype(np.float64)
                size = residuals.size
                confidences = {
                    csf: rng.normal(size=size) - (0.6 + 0.08 * k) * residuals
                    for k, csf in enumerate(csfs)
                }
                tasks.append(
                    PairedSamples("synthetic", method, seed, study, residuals, confidences, kept, n)
                )
    return tasks


def timed(stages: dict[str, tuple[float, float]], name: str, fn, *args, **kwargs):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    stages[name] = (time.perf_counter() - wall, time.process_time() - cpu)
    return out


def wide(n_scores: int, n: int, n_resamples: int) -> None:
    """Time the paired bootstrap of one run with ``n_scores`` CSFs on ``n`` samples."""
    rng = np.random.default_rng(0)
    residuals = (rng.uniform(size=n) < 0.1).astype(np.float64)
    confidences = {
        f"csf{k:02d}": rng.normal(size=n) - (0.4 + 0.05 * k) * residuals for k in range(n_scores)
    }
    task = PairedSamples("synthetic", "ce", 0, "iid", residuals, confidences)
    stages: dict[str, tuple[float, float]] = {}
    timed(stages, "paired bootstrap", paired_bootstrap, [task], n_resamples=n_resamples, seed=0)
    wall, cpu = stages["paired bootstrap"]
    print(
        f"{n_scores} scores x {n_resamples} paired resamples of {n} samples: "
        f"wall {wall:.2f} s, CPU {cpu:.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=500)
    parser.add_argument("--wide", action="store_true", help="23 scores x 10,000 resamples")
    args = parser.parse_args()
    if args.wide:
        wide(23, args.samples, 10_000)
        return
    tasks = synthetic_tasks(args.studies, args.seeds, args.samples)
    n_scoring = sum(len(csfs) for _, csfs, _ in METHODS)
    print(
        f"{n_scoring} scoring methods x {args.studies} studies x {args.seeds} seeds x "
        f"{args.resamples} resamples of {args.samples} samples"
    )
    stages: dict[str, tuple[float, float]] = {}
    paired = timed(
        stages, "paired bootstrap", paired_bootstrap, tasks, n_resamples=args.resamples, seed=0
    )
    columns = timed(stages, "column tables", lb.column_bootstrap, paired)
    for metric in PAIRED_METRICS:
        timed(stages, f"ranks {metric}", lb.leaderboard_ranks, columns, metric)
        timed(stages, f"Wilcoxon maps {metric}", lb.leaderboard_significance, columns, metric)
    deltas = timed(stages, "paired deltas (all pairs)", lb.paired_deltas, columns, reference=None)
    for name, (wall, cpu) in stages.items():
        print(f"{name:28s} wall {wall:7.2f} s   CPU {cpu:7.2f} s")
    wall = sum(w for w, _ in stages.values())
    cpu = sum(c for _, c in stages.values())
    per_curve = stages["paired bootstrap"][1] / (n_scoring * args.studies * args.seeds)
    print(f"{'total':28s} wall {wall:7.2f} s   CPU {cpu:7.2f} s")
    print(f"bootstrap CPU per scoring method x study x seed: {1000 * per_curve:.1f} ms")
    print(f"{len(deltas)} paired delta intervals")


if __name__ == "__main__":
    main()
