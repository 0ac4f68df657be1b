"""A synthetic run folder whose leaderboard ranks many scoring methods (long names, several data
sets and study columns), for the console and page tests of the headline; no benchmark run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from fdbench.analysis.leaderboard import ALL_STUDIES

COLUMNS = ("iid", "corruption", "sub-class", "new-class semantic", "new-class non-semantic")
PREFIXES = ("", "DG-", "ConfidNet-", "DeVries-", "ENS-")
CSFS = (
    "MSR",
    "PE",
    "MLS",
    "TEMP-MLS",
    "DOCTOR",
    "MCD-MSR",
    "MCD-PE",
    "Mahalanobis",
    "ViM",
    "TrustScore",
    "energy",
    "DKNN",
    "MCD-EE",
    "MCD-MI",
)


def method_names(n: int) -> list[str]:
    """``n`` scoring-method names as the benchmark forms them (the references among them)."""
    names = [p + c for p in PREFIXES for c in CSFS] + ["DG-Res", "ConfidNet", "DeVries"]
    extra = [f"Plugin{i}-MCD-TrustScore-long" for i in range(max(0, n - len(names)))]
    return (names + extra)[:n]


def write_leaderboard(folder: Path, n: int = 70, datasets=("cifar10", "super_cifar100")) -> list:
    """Write the leaderboard files (summary, ranks, paired Δ, significance) of ``n`` methods."""
    rng = np.random.default_rng(0)
    names = method_names(n)
    summary, ranks = [], []
    for dataset in datasets:
        order = rng.permutation(n)
        for metric in ("augrc", "aurc", "auroc_f"):
            for study in (*COLUMNS, ALL_STUDIES):
                for place, i in enumerate(order):
                    value = 0.01 + 0.001 * place + 0.0001 * rng.random()
                    if study != ALL_STUDIES:
                        summary.append((dataset, study, names[i], metric, value, 0.001, 2))
                    half = 1.0 + place * 0.1
                    ranks.append(
                        (
                            dataset,
                            study,
                            names[i],
                            place + 1.0,
                            1.0,
                            max(1.0, place + 1 - half),
                            min(n, place + 1 + half),
                            value,
                            30,
                            metric,
                        )
                    )
    pd.DataFrame(
        summary, columns=["dataset", "study", "scoring_method", "metric", "mean", "std", "n_seeds"]
    ).to_csv(folder / "leaderboard.csv", index=False)
    pd.DataFrame(
        ranks,
        columns=[
            "dataset",
            "study",
            "scoring_method",
            "mean_rank",
            "std_rank",
            "rank_lower",
            "rank_upper",
            "mean_value",
            "n_resamples",
            "metric",
        ],
    ).to_csv(folder / "leaderboard_ranks.csv", index=False)
    deltas, maps = [], []
    for dataset in datasets:
        for study in (*COLUMNS, ALL_STUDIES):
            for i, name in enumerate(names):
                delta = 0.001 * (i - n / 2)
                deltas.append(
                    (
                        dataset,
                        study,
                        name,
                        "MSR",
                        "augrc",
                        delta,
                        delta,
                        delta - 0.001,
                        delta + 0.001,
                        30,
                    )
                )
        for study in COLUMNS:
            for a in names:
                for b in names:
                    if a != b:
                        maps.append((dataset, study, a, b, 0.01, 0.02, True, "augrc"))
    pd.DataFrame(
        deltas,
        columns=[
            "dataset",
            "study",
            "scoring_method",
            "reference",
            "metric",
            "delta",
            "mean_delta",
            "lower",
            "upper",
            "n_resamples",
        ],
    ).to_csv(folder / "paired_deltas.csv", index=False)
    pd.DataFrame(
        maps,
        columns=[
            "dataset",
            "study",
            "scoring_method_a",
            "scoring_method_b",
            "p_value",
            "p_holm",
            "significant",
            "metric",
        ],
    ).to_csv(folder / "leaderboard_significance.csv", index=False)
    return names
