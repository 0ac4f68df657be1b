"""The comparison of a benchmark with ``posthoc:``: every scoring method's AURC and AUGRC per
study, the leaderboard of average ranks, the Friedman test with Nemenyi and Conover–Holm
post-hoc tests, the groups no test separates, and every post-hoc score's chosen values."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from fdbench.analysis._scoring import scoring_method_labels
from fdbench.analysis.conover import Comparison, compare_scoring_methods
from fdbench.core.io import write_table

__all__ = ["COMPARISON_DIR", "COMPARISON_METRICS", "write_posthoc_comparison"]

#: The folder of a run that holds the comparison's tables.
COMPARISON_DIR = "comparison"
#: The metrics compared (the selection metric of the search is AURC).
COMPARISON_METRICS = ("aurc", "augrc")


def _group_ids(groups: list[list[str]], names: Sequence[str]) -> list[str]:
    """Per name, the 1-based numbers of the groups it belongs to (``"1,2"``)."""
    return [",".join(str(i + 1) for i, g in enumerate(groups) if n in g) for n in names]


def _tables(comparison: Comparison, metric: str) -> dict[str, pd.DataFrame]:
    fn = comparison.nemenyi
    names = list(fn.average_ranks.index)
    leaderboard = pd.DataFrame(
        {
            "scoring_method": names,
            "average_rank": fn.average_ranks.to_numpy(),
            f"mean_{metric}": fn.values[names].mean(axis=0).to_numpy(),
            "nemenyi_groups": _group_ids(comparison.nemenyi_groups, names),
            "conover_holm_groups": _group_ids(comparison.conover_groups, names),
        }
    )
    friedman = pd.DataFrame(
        [
            {
                "statistic": fn.friedman.statistic,
                "p_value": fn.friedman.p_value,
                "iman_davenport_f": fn.friedman.f_statistic,
                "iman_davenport_p_value": fn.friedman.f_p_value,
                "n_blocks": fn.friedman.n_blocks,
                "n_methods": fn.friedman.n_methods,
                "nemenyi_critical_difference": fn.critical_difference,
                "alpha": fn.alpha,
                "dropped": ",".join(fn.dropped),
            }
        ]
    )
    groups = pd.DataFrame(
        [
            {"test": test, "group": i + 1, "members": ",".join(group)}
            for test, found in (
                ("nemenyi", comparison.nemenyi_groups),
                ("conover_holm", comparison.conover_groups),
            )
            for i, group in enumerate(found)
        ]
    )
    per_study = fn.values.T.loc[names]
    per_study.columns = ["/".join(map(str, c)) for c in per_study.columns]
    return {
        f"scores_{metric}.csv": per_study.reset_index(names="scoring_method"),
        f"leaderboard_{metric}.csv": leaderboard,
        f"friedman_{metric}.csv": friedman,
        f"nemenyi_{metric}.csv": fn.p_values.loc[names, names].reset_index(names="scoring_method"),
        f"conover_holm_{metric}.csv": comparison.conover.loc[names, names].reset_index(
            names="scoring_method"
        ),
        f"groups_{metric}.csv": groups,
    }


def write_posthoc_comparison(
    results: pd.DataFrame, run_dir: Path, studies: Sequence[str], *, alpha: float = 0.05
) -> Path:
    """Write the comparison of every scoring method of ``results`` (failure-detection rows of
    the studies matching the patterns ``studies``, one block per data set and study, seed
    means) into ``run_dir / COMPARISON_DIR``: per metric of :data:`COMPARISON_METRICS` the
    tables ``scores_`` (scoring method × study), ``leaderboard_`` (average rank, mean, the
    groups of each test), ``friedman_``, ``nemenyi_``, ``conover_holm_`` (p-values) and
    ``groups_`` (:func:`fdbench.analysis.conover.compare_scoring_methods` at ``alpha``); and
    ``hyperparameters.csv``, the values each post-hoc score's search chose per run."""
    out = run_dir / COMPARISON_DIR
    rows = results
    if "protocol" in rows.columns:
        rows = rows[rows["protocol"] == "failure_detection"]
    rows = rows[[any(fnmatch.fnmatchcase(s, p) for p in studies) for s in rows["study"]]]
    for metric in COMPARISON_METRICS:
        for name, table in _tables(
            compare_scoring_methods(rows, metric, alpha=alpha), metric
        ).items():
            write_table(table, out / name)
    chosen = (
        results[results["csf_params"].fillna("") != ""]
        if "csf_params" in results
        else results.iloc[:0].assign(csf_params="")
    )
    params = (
        chosen.assign(scoring_method=scoring_method_labels(chosen))[
            ["dataset", "method", "seed", "scoring_method", "csf", "csf_params"]
        ]
        .drop_duplicates()
        .sort_values(["csf", "seed"], kind="stable")
    )
    write_table(params, out / "hyperparameters.csv")
    return out
