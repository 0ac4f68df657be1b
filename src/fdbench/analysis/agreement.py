"""Agreement between the CSF rankings that two metrics induce (Kendall's τ)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from scipy import stats

from fdbench.analysis.ranking import GROUP_COLUMNS, rank_csfs


def ranking_agreement(
    results: pd.DataFrame,
    metric_a: str = "aurc",
    metric_b: str = "augrc",
    *,
    by: Sequence[str] = GROUP_COLUMNS,
) -> pd.DataFrame:
    """Kendall's τ_b between the CSF rankings induced by two metrics, per group (study).

    Each metric's ranking is :func:`fdbench.analysis.ranking.rank_csfs` (seed means, rank 1 =
    best, whatever the metric's direction); τ and its two-sided p-value are
    ``scipy.stats.kendalltau`` of the two rank vectors over the CSFs both metrics cover. Traub et
    al. (NeurIPS 2024) use it to show AURC and AUGRC order CSFs differently.

    Returns the ``by`` columns present, ``tau``, ``p_value`` and ``n_csfs``.
    """
    ranks_a = rank_csfs(results, metric_a, by=by)
    ranks_b = rank_csfs(results, metric_b, by=by)
    keys = [c for c in by if c in ranks_a.columns]
    merged = ranks_a.merge(ranks_b, on=[*keys, "csf"], suffixes=("_a", "_b"))
    if merged.empty:
        raise ValueError(f"metrics {metric_a!r} and {metric_b!r} share no group and CSF")
    rows = []
    groups = merged.groupby(keys, sort=False) if keys else [((), merged)]
    for key, part in groups:
        tau = stats.kendalltau(part["rank_a"], part["rank_b"])
        key = key if isinstance(key, tuple) else (key,)
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "tau": float(tau.statistic),
                "p_value": float(tau.pvalue),
                "n_csfs": len(part),
            }
        )
    return pd.DataFrame(rows)
