"""Friedman test and Nemenyi post-hoc comparison of scoring methods over studies (Demšar 2006)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from fdbench.analysis._scoring import scoring_method_labels
from fdbench.analysis._validation import metric_rows, require_columns
from fdbench.analysis.directions import higher_is_better

#: The blocks of :func:`friedman_nemenyi` by default: one per data set and study.
BLOCK_COLUMNS = ("dataset", "study")


@dataclass(frozen=True)
class FriedmanResult:
    """The Friedman test of k methods over N blocks (data sets or studies).

    ``average_ranks`` (length k, rank 1 = best), ``statistic`` (χ²_F), its ``p_value``
    (χ² with k − 1 degrees of freedom), the Iman–Davenport statistic ``f_statistic`` (F_F) and
    its ``f_p_value`` (F with k − 1 and (k − 1)(N − 1) degrees of freedom), ``n_blocks`` N,
    ``n_methods`` k and whether the tie correction was applied.
    """

    average_ranks: np.ndarray
    statistic: float
    p_value: float
    f_statistic: float
    f_p_value: float
    n_blocks: int
    n_methods: int
    tie_correction: bool


def _block_matrix(values: ArrayLike) -> np.ndarray:
    matrix = np.asarray(values)
    if (
        matrix.dtype == object
        or not (np.issubdtype(matrix.dtype, np.number) or matrix.dtype == bool)
        or np.iscomplexobj(matrix)
    ):
        raise TypeError(f"values must hold real numbers; got dtype {matrix.dtype}")
    matrix = matrix.astype(np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"values must be a 2-D blocks × methods array; got shape {matrix.shape}")
    n, k = matrix.shape
    if n < 2 or k < 3:
        raise ValueError(
            f"values must hold at least 2 blocks (rows) and 3 methods (columns); got {n} × {k}"
        )
    if not np.isfinite(matrix).all():
        bad = np.argwhere(~np.isfinite(matrix))
        raise ValueError(
            f"values must be finite; {len(bad)} cell(s) are not, first at (block, method) "
            f"{tuple(int(i) for i in bad[0])}"
        )
    return matrix


def block_ranks(values: ArrayLike, *, higher_is_better: bool = False) -> np.ndarray:
    """Rank the methods (columns) within every block (row): 1 = best, ties get average ranks.

    ``values`` is a blocks × methods array of a metric; lower is better unless
    ``higher_is_better``. Demšar (2006), Section 3.2.2: "in case of ties average ranks are
    assigned".
    """
    from scipy.stats import rankdata

    matrix = _block_matrix(values)
    return rankdata(-matrix if higher_is_better else matrix, method="average", axis=1)


def friedman_test(
    values: ArrayLike, *, higher_is_better: bool = False, tie_correction: bool = True
) -> FriedmanResult:
    """The Friedman test that k methods perform alike over N blocks, with Iman–Davenport's F.

    ``values`` is an N × k array (rows: data sets or studies, columns: methods) of a metric,
    lower is better unless ``higher_is_better``; methods are ranked within each block
    (:func:`block_ranks`) and R_j is method j's average rank. Demšar (2006), Section 3.2.2:

        χ²_F = 12 N / (k (k + 1)) · [Σ_j R_j² − k (k + 1)² / 4],
        F_F = (N − 1) χ²_F / (N (k − 1) − χ²_F).

    With ``tie_correction`` (default) χ²_F is ``scipy.stats.friedmanchisquare``'s statistic,
    i.e. the formula above divided by 1 − Σ_blocks Σ_ties (t³ − t) / (N k (k² − 1)), the
    correction for tied ranks within blocks (equal to the formula when there are no ties);
    without it, the formula as Demšar prints it. The p-value of χ²_F is from χ² with k − 1
    degrees of freedom; that of F_F from F with k − 1 and (k − 1)(N − 1) degrees of freedom.
    F_F is infinite (p = 0) when every block ranks the methods alike. With ``tie_correction``,
    values where every block ties all methods raise ValueError (scipy returns NaN: 0/0).

    Source: J. Demšar, "Statistical comparisons of classifiers over multiple data sets", JMLR 7
    (2006) 1–30; M. Friedman (1937); R. L. Iman & J. M. Davenport (1980).
    """
    from scipy import stats

    ranks = block_ranks(values, higher_is_better=higher_is_better)
    n, k = ranks.shape
    average = ranks.mean(axis=0)
    if tie_correction:
        matrix = _block_matrix(values)
        if np.all(matrix == matrix[:, :1]):
            raise ValueError(
                "values: every block ties all methods, so the tie-corrected statistic is "
                "undefined (0/0); give tie_correction=False for Demšar's formula"
            )
        chi2 = float(stats.friedmanchisquare(*matrix.T).statistic)
    else:
        chi2 = float(12 * n / (k * (k + 1)) * (np.sum(average**2) - k * (k + 1) ** 2 / 4))
    denominator = n * (k - 1) - chi2
    f_stat = (n - 1) * chi2 / denominator if denominator > 0 else np.inf
    return FriedmanResult(
        average_ranks=average,
        statistic=chi2,
        p_value=float(stats.chi2.sf(chi2, k - 1)),
        f_statistic=float(f_stat),
        f_p_value=float(stats.f.sf(f_stat, k - 1, (k - 1) * (n - 1))),
        n_blocks=n,
        n_methods=k,
        tie_correction=tie_correction,
    )


def _check_alpha(alpha: float) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number in (0, 1); got {alpha!r}")
    return float(alpha)


def nemenyi_q(n_methods: int, alpha: float = 0.05) -> float:
    """The Nemenyi critical value q_α for k = ``n_methods``: the 1 − α quantile of the
    studentized range of k means with infinite degrees of freedom, divided by √2
    (``scipy.stats.studentized_range``). Demšar (2006), Table 5(a): q_0.05 = 2.569 for k = 4.
    """
    from scipy.stats import studentized_range

    if isinstance(n_methods, bool) or not isinstance(n_methods, (int, np.integer)):
        raise TypeError(f"n_methods must be an integer; got {type(n_methods).__name__}")
    if n_methods < 2:
        raise ValueError(f"n_methods must be >= 2; got {n_methods}")
    alpha = _check_alpha(alpha)
    return float(studentized_range.ppf(1 - alpha, int(n_methods), np.inf) / np.sqrt(2))


def nemenyi_critical_difference(n_methods: int, n_blocks: int, alpha: float = 0.05) -> float:
    """The Nemenyi critical difference CD = q_α √(k (k + 1) / (6 N)) of average ranks.

    Two of k = ``n_methods`` methods ranked over N = ``n_blocks`` blocks differ significantly
    at level ``alpha`` when their average ranks differ by at least CD (Demšar 2006, Section
    3.2.2; k = 4, N = 14, α = 0.05: CD = 1.25). q_α is :func:`nemenyi_q`.
    """
    if isinstance(n_blocks, bool) or not isinstance(n_blocks, (int, np.integer)):
        raise TypeError(f"n_blocks must be an integer; got {type(n_blocks).__name__}")
    if n_blocks < 1:
        raise ValueError(f"n_blocks must be >= 1; got {n_blocks}")
    k = int(n_methods)
    return nemenyi_q(n_methods, alpha) * float(np.sqrt(k * (k + 1) / (6 * int(n_blocks))))


def nemenyi_p_values(values: ArrayLike, *, higher_is_better: bool = False) -> np.ndarray:
    """k × k p-values of the Nemenyi post-hoc test of every pair of methods (columns).

    The pair (a, b) has q = |R_a − R_b| / √(k (k + 1) / (6 N)) and p = P(studentized range of
    k means, infinite degrees of freedom, > q √2), computed by ``scikit_posthocs.
    posthoc_nemenyi_friedman`` on the ranks of :func:`block_ranks` (so the direction of the
    metric is respected); the diagonal is 1. p < α exactly when |R_a − R_b| exceeds
    :func:`nemenyi_critical_difference`. Source: Demšar (2006), Section 3.2.2; P. Nemenyi,
    "Distribution-free multiple comparisons", PhD thesis, Princeton University, 1963.
    """
    import scikit_posthocs

    ranks = block_ranks(values, higher_is_better=higher_is_better)
    # the ranks as values (lower = better): the library ranks ascending within blocks again
    return scikit_posthocs.posthoc_nemenyi_friedman(ranks).to_numpy(np.float64)


@dataclass(frozen=True)
class FriedmanNemenyi:
    """Friedman test and Nemenyi post-hoc of the scoring methods of a results table.

    ``values``: blocks × scoring methods (seed means); ``friedman``: :class:`FriedmanResult`;
    ``average_ranks``: per scoring method (Series, best first); ``p_values``: Nemenyi p-values
    (DataFrame, scoring methods × scoring methods); ``critical_difference`` at ``alpha``;
    ``dropped``: scoring methods left out because they lack a value in some block.
    """

    metric: str
    values: pd.DataFrame
    friedman: FriedmanResult
    average_ranks: pd.Series
    p_values: pd.DataFrame
    critical_difference: float
    alpha: float
    dropped: tuple[str, ...]


def friedman_nemenyi(
    results: pd.DataFrame,
    metric: str,
    *,
    blocks: Sequence[str] = BLOCK_COLUMNS,
    alpha: float = 0.05,
) -> FriedmanNemenyi:
    """Friedman test and Nemenyi post-hoc of every scoring method over blocks of ``results``.

    A scoring method is a (training method, CSF) pair under its paper name
    (:func:`fdbench.analysis.scoring_methods.add_scoring_method`; the CSF alone where
    ``results`` has no ``method`` column). Its value in a block (default: a
    data set × study; ``blocks`` names the columns, e.g. ``("dataset",)``) is the mean of
    ``metric`` over the seeds and every other column not named. Scoring methods without a
    finite value in every block are dropped (the test needs complete blocks; ``dropped`` names
    them). Then :func:`friedman_test` (tie-corrected, as scipy; where every block ties all
    scoring methods, the tie-corrected statistic is 0/0 and Demšar's uncorrected formula gives
    χ²_F = 0, p = 1: no evidence of a difference, and ``friedman.tie_correction`` is False),
    :func:`nemenyi_p_values` and
    :func:`nemenyi_critical_difference` at ``alpha``; the metric's direction comes from
    :func:`fdbench.analysis.higher_is_better`. Source: Demšar (2006), Section 3.2.
    """
    rows = metric_rows(results, metric, "results")
    require_columns(rows, ("csf", *blocks), "results")
    if not blocks:
        raise ValueError("blocks must name at least one column")
    alpha = _check_alpha(alpha)
    labelled = rows.assign(scoring_method=scoring_method_labels(rows))
    means = labelled.groupby([*blocks, "scoring_method"], sort=False)["value"].mean()
    table = means.unstack("scoring_method")
    table = table[list(dict.fromkeys(labelled["scoring_method"]))]
    complete = table.notna().all(axis=0) & np.isfinite(table).all(axis=0)
    dropped = tuple(str(c) for c in table.columns[~complete])
    table = table.loc[:, complete]
    if table.shape[1] < 3 or table.shape[0] < 2:
        raise ValueError(
            f"results must give at least 3 scoring methods with a {metric!r} value in each of "
            f"at least 2 blocks ({list(blocks)}); got {table.shape[1]} in {table.shape[0]}"
        )
    higher = higher_is_better(metric)
    matrix = table.to_numpy()
    friedman = friedman_test(
        matrix,
        higher_is_better=higher,
        tie_correction=not bool(np.all(matrix == matrix[:, :1])),
    )
    names = list(table.columns)
    p_values = pd.DataFrame(
        nemenyi_p_values(table.to_numpy(), higher_is_better=higher), index=names, columns=names
    )
    ranks = pd.Series(friedman.average_ranks, index=names, name="average_rank")
    return FriedmanNemenyi(
        metric=metric,
        values=table,
        friedman=friedman,
        average_ranks=ranks.sort_values(kind="stable"),
        p_values=p_values,
        critical_difference=nemenyi_critical_difference(len(names), table.shape[0], alpha),
        alpha=alpha,
        dropped=dropped,
    )
