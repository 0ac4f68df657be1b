"""Pairwise one-sided Wilcoxon signed-rank tests on paired bootstrap values, Holm-corrected."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from fdbench.analysis._validation import metric_rows, present, require_columns
from fdbench.analysis.directions import higher_is_better
from fdbench.analysis.ranking import GROUP_COLUMNS


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment of a family of p-values (Holm, Scand. J. Statist. 1979).

    With the p-values sorted ascending, p_(i) becomes max_{j <= i} min(1, (m − j + 1)·p_(j)), m
    the family size; rejecting where the adjusted value is <= α controls the family-wise error
    rate at α. NaN entries are not allowed.
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p_values must be one-dimensional; got shape {p.shape}")
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError("p_values must lie in [0, 1] without NaN")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def pairwise_wilcoxon(values: np.ndarray, metric: str) -> np.ndarray:
    """One-sided Wilcoxon signed-rank p-values for every ordered pair of CSFs.

    ``values`` is a CSFs × resamples array of paired values (the same resample index is the same
    bootstrap sample for every CSF). Entry (a, b) tests whether CSF a is better than CSF b and
    equals ``scipy.stats.wilcoxon(values[a] - values[b], alternative=...)`` called for that pair
    alone, with 'less' for a lower-is-better metric and 'greater' for a higher-is-better one
    and scipy's defaults otherwise: ``zero_method='wilcox'`` (zero differences, resamples where
    the two CSFs tie, are dropped before ranking; Wilcoxon 1945), tied absolute differences get
    average ranks, and ``method='auto'``. For more than 50 resamples that is the normal
    approximation. For at most 50, scipy decides per call (scipy 1.17,
    ``scipy/stats/_wilcoxon.py``), so per pair here: the exact null distribution where
    the differences have no zeros and no ties, an exact sign-flip permutation test where they
    have some and there are at most 13 resamples, the normal approximation otherwise. The
    pairs are grouped by that decision and each group is one vectorised call (the permutation
    tests are enumerated here, :func:`_sign_flip_pvalues`: scipy's per-pair permutation test
    takes tens of milliseconds a pair). A pair whose differences are all zero (e.g. MLS and a
    temperature-scaled MLS, which order samples identically) gets p = 1; a pair with a NaN
    difference gets NaN, as from scipy; the diagonal is NaN.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 2:
        raise ValueError(f"values must be a CSFs x resamples array; got shape {v.shape}")
    k = v.shape[0]
    alternative = "greater" if higher_is_better(metric) else "less"
    p = np.full((k, k), np.nan)
    a, b = np.nonzero(~np.eye(k, dtype=bool))
    if a.size == 0:
        return p
    diff = v[a] - v[b]
    result = np.ones(a.size)
    live = np.any(diff != 0, axis=1)
    method = np.where(live, "asymptotic" if diff.shape[1] > 50 else "exact", "").astype(object)
    if diff.shape[1] <= 50:
        irregular = live & (np.any(diff == 0, axis=1) | _has_ties(np.abs(diff)))
        method[irregular] = "permutation" if diff.shape[1] <= 13 else "asymptotic"
    missing = np.isnan(diff).any(axis=1)
    method[missing] = ""
    result[missing] = np.nan  # scipy's default nan_policy, 'propagate'
    for name in ("exact", "asymptotic"):
        rows = method == name
        if rows.any():
            result[rows] = stats.wilcoxon(
                diff[rows], alternative=alternative, method=name, axis=1
            ).pvalue
    rows = method == "permutation"
    if rows.any():
        result[rows] = _sign_flip_pvalues(diff[rows], alternative)
    p[a, b] = result
    return p


def _has_ties(magnitudes: np.ndarray) -> np.ndarray:
    """Per row, whether two nonzero entries are equal (scipy's ``has_ties`` of one pair)."""
    ordered = np.sort(np.where(magnitudes == 0, np.nan, magnitudes), axis=1)
    return np.any(ordered[:, 1:] == ordered[:, :-1], axis=1)


#: Null-distribution values held at once by :func:`_sign_flip_pvalues` (rows × 2^m).
_NULL_ELEMENTS = 1 << 20


def _sign_flip_pvalues(diff: np.ndarray, alternative: str) -> np.ndarray:
    """Exact one-sided p-values of the Wilcoxon statistic under all sign flips, per row.

    The statistic is the rank sum of the positive differences, zeros dropped and ties given
    average ranks; its null distribution takes every one of the 2^m sign patterns of the m
    nonzero differences as equally likely. This is the test ``scipy.stats.wilcoxon`` runs for
    a pair with zeros or ties and at most 13 differences (``permutation_test`` enumerating
    every sign pattern, its p-value the share of patterns at least as extreme, with its
    relative tolerance of 100 machine epsilons; flipping a zero changes nothing, so counting
    over the nonzero differences gives the same share).
    """
    out = np.empty(diff.shape[0])
    nonzero = diff != 0
    sizes = nonzero.sum(axis=1)
    eps = 100 * np.finfo(np.float64).eps
    for m in np.unique(sizes).tolist():
        patterns = ((np.arange(2**m)[:, None] >> np.arange(m)) & 1).T.astype(np.float64)
        same = np.flatnonzero(sizes == m)
        step = max(1, _NULL_ELEMENTS >> m)
        for start in range(0, same.size, step):
            rows = same[start : start + step]
            d = diff[rows][nonzero[rows]].reshape(rows.size, m)
            ranks = stats.rankdata(np.abs(d), axis=1)
            observed = np.sum(ranks * (d > 0), axis=1)[:, None]
            null = ranks @ patterns
            gamma = np.abs(eps * observed)
            if alternative == "less":
                extreme = null <= observed + gamma
            else:
                extreme = null >= observed - gamma
            out[rows] = np.count_nonzero(extreme, axis=1) / 2.0**m
    return out


def significance_matrix(
    bootstrap: pd.DataFrame,
    metric: str,
    *,
    by: Sequence[str] = GROUP_COLUMNS,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Significance maps: is CSF a better than CSF b on ``metric``, per group (study)?

    Following Traub et al. (NeurIPS 2024), for each group the bootstrap values (averaged over
    seeds per resample) of every ordered pair of CSFs are compared with a one-sided Wilcoxon
    signed-rank test paired over resamples (:func:`pairwise_wilcoxon`); the k·(k − 1) p-values of
    the group (diagonal excluded) are Holm-corrected (:func:`holm`) and a pair is significant
    where the adjusted p-value is <= ``alpha``.

    Returns a long DataFrame with the ``by`` columns present, ``csf_a``, ``csf_b``, ``p_value``,
    ``p_holm`` and ``significant`` (``csf_a`` significantly better than ``csf_b``).
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1); got {alpha}")
    rows = metric_rows(bootstrap, metric, "bootstrap")
    require_columns(rows, ("csf", "resample"), "bootstrap")
    keys = present(by, rows)
    means = rows.groupby([*keys, "csf", "resample"], sort=True)["value"].mean()
    frames = []
    groups = means.groupby(level=keys, sort=False) if keys else [((), means)]
    for key, part in groups:
        wide = part.unstack("resample")
        if wide.isna().any().any():
            raise ValueError(f"bootstrap group {key} lacks some resamples for some CSFs")
        csfs = wide.index.get_level_values("csf")
        p = pairwise_wilcoxon(wide.to_numpy(), metric)
        a, b = np.nonzero(~np.eye(len(csfs), dtype=bool))
        adjusted = holm(p[a, b]) if a.size else np.empty(0)
        frame = pd.DataFrame(
            {
                "csf_a": csfs[a],
                "csf_b": csfs[b],
                "p_value": p[a, b],
                "p_holm": adjusted,
                "significant": adjusted <= alpha,
            }
        )
        key = key if isinstance(key, tuple) else (key,)
        for name, value in zip(keys, key, strict=True):
            frame.insert(keys.index(name), name, value)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)
