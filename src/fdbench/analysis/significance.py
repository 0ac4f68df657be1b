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
    bootstrap sample for every CSF). Entry (a, b) tests whether CSF a is better than CSF b:
    ``scipy.stats.wilcoxon(values[a] - values[b], alternative=...)`` with 'less' for a
    lower-is-better metric and 'greater' for a higher-is-better one, and scipy's defaults
    otherwise: ``zero_method='wilcox'`` (zero differences, resamples where the two CSFs tie, are
    dropped before ranking; Wilcoxon 1945), tied absolute differences get average ranks, and
    ``method='auto'`` (exact null distribution for at most 50 differences without zeros, the
    normal approximation otherwise, as always with 500 resamples). A pair whose differences are
    all zero (e.g. MLS and a temperature-scaled MLS, which order samples identically) gets
    p = 1; the diagonal is NaN.
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
    degenerate = ~np.any(diff != 0, axis=1)
    result = np.ones(a.size)
    live = ~degenerate
    if live.any():
        result[live] = stats.wilcoxon(diff[live], alternative=alternative, axis=1).pvalue
    p[a, b] = result
    return p


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
