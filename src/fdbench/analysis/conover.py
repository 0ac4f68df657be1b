"""Conover's post-hoc test after a Friedman test, Holm-adjusted, and the groups of scoring
methods that no test separates."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from fdbench.analysis.directions import higher_is_better as metric_higher_is_better
from fdbench.analysis.friedman import BLOCK_COLUMNS, FriedmanNemenyi, block_ranks, friedman_nemenyi
from fdbench.analysis.significance import holm

__all__ = ["Comparison", "compare_scoring_methods", "conover_p_values", "indistinguishable_groups"]


def conover_p_values(values: ArrayLike, *, higher_is_better: bool = False) -> np.ndarray:
    """k × k Holm-adjusted p-values of Conover's post-hoc test of every pair of methods
    (columns of the blocks × methods ``values``), after a Friedman test.

    With the within-block ranks ``r`` (:func:`fdbench.analysis.friedman.block_ranks`, 1 =
    best), rank sums ``R_j``, ``A = Σ r²``, ``S² = (A − N k (k + 1)² / 4) / (k − 1)`` and
    ``T = Σ_j (R_j − N (k + 1) / 2)² / S²``, the pair (a, b) has
    ``t = |R_a − R_b| / √(2 N S² (k − 1) / df · (1 − T / (N (k − 1))))`` on ``df = N k − k −
    N + 1`` degrees of freedom and the two-sided p-value ``2 P(t_df > t)``; the family of the
    k (k − 1) / 2 pairs is Holm-adjusted (:func:`fdbench.analysis.significance.holm`). Where the
    blocks agree perfectly (``T = N (k − 1)``) every pair with different rank sums gets p = 0.
    Source: W. J. Conover, "Practical Nonparametric Statistics", 3rd ed., Wiley 1999,
    Section 5.8; as ``scikit_posthocs.posthoc_conover_friedman(..., p_adjust="holm")``.
    """
    ranks = block_ranks(values, higher_is_better=higher_is_better)
    n, k = ranks.shape
    sums = ranks.sum(axis=0)
    s2 = (np.sum(ranks**2) - k * n * (k + 1.0) ** 2 / 4.0) / (k - 1.0)
    if s2 <= 0:
        # every block ties every method: no pair differs
        return np.ones((k, k))
    t2 = np.sum((sums - n * (k + 1.0) / 2.0) ** 2) / s2
    df = n * k - k - n + 1.0
    scale = s2 * 2.0 * n * (k - 1.0) / df * max(0.0, 1.0 - t2 / (n * (k - 1.0)))
    upper = np.triu_indices(k, 1)
    differences = np.abs(sums[upper[0]] - sums[upper[1]])
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(differences > 0, differences / np.sqrt(scale), 0.0)
    p = np.where(np.isinf(t), 0.0, 2.0 * stats.t.sf(t, df=df))
    out = np.ones((k, k))
    out[upper] = holm(p)
    out[(upper[1], upper[0])] = out[upper]
    return out


def indistinguishable_groups(
    average_ranks: pd.Series, p_values: pd.DataFrame, alpha: float = 0.05
) -> list[list[str]]:
    """The maximal groups of methods, contiguous in the order of ``average_ranks`` (best
    first), whose every pair has a p-value of at least ``alpha``: the bars of a critical
    difference diagram (Demšar 2006, Section 3.2.2), computed from any pairwise test. A
    method no other joins forms a group of one."""
    names = list(average_ranks.sort_values(kind="stable").index)
    missing = [n for n in names if n not in p_values.index or n not in p_values.columns]
    if missing:
        raise ValueError(f"p_values lacks the method(s) {missing}")
    groups: list[list[str]] = []
    for start in range(len(names)):
        end = start
        while end + 1 < len(names) and all(
            p_values.loc[names[i], names[end + 1]] >= alpha for i in range(start, end + 1)
        ):
            end += 1
        group = names[start : end + 1]
        if not groups or not set(group) <= set(groups[-1]):
            groups.append(group)
    return groups


@dataclass(frozen=True)
class Comparison:
    """Friedman test with Nemenyi (``nemenyi``) and Conover–Holm (``conover``, a p-value
    DataFrame) post-hoc tests, and the groups each post-hoc test cannot separate."""

    nemenyi: FriedmanNemenyi
    conover: pd.DataFrame
    nemenyi_groups: list[list[str]]
    conover_groups: list[list[str]]


def compare_scoring_methods(
    results: pd.DataFrame,
    metric: str,
    *,
    blocks: Sequence[str] = BLOCK_COLUMNS,
    alpha: float = 0.05,
) -> Comparison:
    """:func:`fdbench.analysis.friedman.friedman_nemenyi` of ``results`` plus
    :func:`conover_p_values` on the same blocks × scoring methods table, and the
    :func:`indistinguishable_groups` of both post-hoc tests at ``alpha``."""
    nemenyi = friedman_nemenyi(results, metric, blocks=blocks, alpha=alpha)
    names = list(nemenyi.values.columns)
    higher = metric_higher_is_better(metric)
    conover = pd.DataFrame(
        conover_p_values(nemenyi.values.to_numpy(), higher_is_better=higher),
        index=names,
        columns=names,
    )
    return Comparison(
        nemenyi,
        conover,
        indistinguishable_groups(nemenyi.average_ranks, nemenyi.p_values, alpha),
        indistinguishable_groups(nemenyi.average_ranks, conover, alpha),
    )
