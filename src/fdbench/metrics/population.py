"""Population AURC: the plug-in estimators of Zhou et al. (ICML 2025) and bootstrap intervals.

Zhou, Van Landeghem, Popordanoska & Blaschko, "A Novel Characterization of the Population Area
Under the Risk Coverage Curve (AURC) and Rates of Finite Sample Estimators" (ICML 2025,
arXiv:2410.15361). For a confidence g with continuous distribution function G and a loss ℓ,
the population AURC, ∫_0^1 R(coverage) d coverage with R the selective risk, equals the
reweighted risk E[ℓ · (−ln(1 − G(g)))]: a sample whose confidence is exceeded by a fraction u
of the population is accepted for every coverage above u and weighs ∫_u^1 dφ/φ = −ln u.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_real_array, check_inputs

__all__ = ["POPULATION_AURC_ESTIMATORS", "population_aurc", "population_aurc_interval"]


def _harmonic_weights(n: int) -> np.ndarray:
    """α_i = ψ(n + 1) − ψ(n − i + 1) = H_n − H_{n−i}, i = 1 … n in ascending confidence: the
    exact expectation E[−ln(1 − U_(i))] of the uniform order statistic U_(i) ~ Beta(i, n − i + 1)
    (the authors' ``compute_harmonic_alphas``)."""
    i = np.arange(1, n + 1, dtype=np.float64)
    from scipy import special  # lazy: scipy costs ~0.3 s to import

    return special.digamma(n + 1.0) - special.digamma(n - i + 1.0)


def _ln_weights(n: int) -> np.ndarray:
    """α_i = −ln(1 − i/(n + 1)), i = 1 … n in ascending confidence: −ln(1 − u) at the mean
    E[U_(i)] = i/(n + 1) (the authors' ``compute_ln_alphas``)."""
    i = np.arange(1, n + 1, dtype=np.float64)
    return -np.log1p(-i / (n + 1.0))


#: The plug-in estimators by name: their weight of the i-th smallest of n confidences.
POPULATION_AURC_ESTIMATORS = {"harmonic": _harmonic_weights, "ln": _ln_weights}


def _check_estimator(estimator: str):
    if estimator not in POPULATION_AURC_ESTIMATORS:
        raise ValueError(
            f"estimator: expected one of {sorted(POPULATION_AURC_ESTIMATORS)}, got {estimator!r}"
        )
    return POPULATION_AURC_ESTIMATORS[estimator]


def _estimate(r_sorted: np.ndarray, c_sorted: np.ndarray, counts: np.ndarray, weights) -> float:
    """The estimate from residuals and confidences sorted ascending, each sample standing for
    ``counts`` copies; a tie group of confidences gets the mean weight of the ranks it spans."""
    n = int(counts.sum())
    alpha_cum = np.concatenate([[0.0], np.cumsum(weights(n))])
    ends = np.flatnonzero(np.diff(c_sorted)) + 1
    starts = np.concatenate([[0], ends])
    stops = np.concatenate([ends, [c_sorted.size]])
    pos = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    first, last = pos[starts], pos[stops]
    mean_weight = (alpha_cum[last] - alpha_cum[first]) / np.maximum(last - first, 1)
    loss = np.add.reduceat(r_sorted * counts, starts)
    return float(np.dot(loss, mean_weight) / n)


def population_aurc(
    residuals: ArrayLike,
    confidence: ArrayLike,
    *,
    estimator: str = "harmonic",
    sample_weight: ArrayLike | None = None,
) -> float:
    """Monte-Carlo plug-in estimate of the population AURC (Zhou et al., ICML 2025, Section 4).

    With the samples sorted by ascending confidence, the estimate is (1/n) Σ_i ℓ_(i)·α_i:

    - ``"harmonic"``: α_i = ψ(n + 1) − ψ(n − i + 1) = Σ_{k=n−i+1}^{n} 1/k, the unbiased
      Monte-Carlo weight. For distinct confidences it equals the per-sample AURC of Geifman et
      al.'s code (the mean, over the top-k sets, of their selective risk).
    - ``"ln"``: α_i = −ln(1 − i/(n + 1)), the asymptotic weight at E[U_(i)].

    Both converge to the population AURC at the rate O(√(ln n / n)) (the paper's Theorem).
    Samples with equal confidence get the mean weight of the ranks they span (the mean over
    every order of the tie). ``sample_weight`` holds non-negative integer counts (copies of
    each sample, as bootstrap resamples give them). Residuals: any non-negative loss.
    """
    weights = _check_estimator(estimator)
    r, c, w, _ = check_inputs(residuals, confidence, sample_weight)
    counts = np.ones(r.size) if w is None else w
    if w is not None and not np.array_equal(w, np.round(w)):
        raise ValueError("sample_weight: expected integer counts (copies of each sample)")
    order = np.argsort(c, kind="stable")
    return _estimate(r[order], c[order], counts[order], weights)


def population_aurc_interval(
    residuals: ArrayLike,
    confidence: ArrayLike,
    *,
    estimator: str = "harmonic",
    level: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
) -> tuple[float, float, float]:
    """(estimate, lower, upper): :func:`population_aurc` and its percentile bootstrap interval.

    ``n_resamples`` resamples of the n samples with replacement (multinomial counts from
    ``numpy.random.default_rng(seed)``) are re-estimated, ties of repeated samples treated as
    in :func:`population_aurc`; the interval runs between the (1 − level)/2 and
    (1 + level)/2 quantiles of the resampled estimates.
    """
    weights = _check_estimator(estimator)
    r, c, _, _ = check_inputs(residuals, confidence)
    level = float(as_real_array(level, "level"))
    if not 0 < level < 1:
        raise ValueError(f"level: expected a value in (0, 1), got {level!r}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)):
        raise TypeError(f"n_resamples: expected an integer, got {type(n_resamples).__name__}")
    if n_resamples < 2:
        raise ValueError(f"n_resamples: expected at least 2, got {n_resamples}")
    order = np.argsort(c, kind="stable")
    r_sorted, c_sorted = r[order], c[order]
    estimate = _estimate(r_sorted, c_sorted, np.ones(r.size), weights)
    rng = np.random.default_rng(seed)
    values = np.empty(n_resamples)
    for b in range(n_resamples):
        counts = rng.multinomial(r.size, np.full(r.size, 1.0 / r.size)).astype(np.float64)
        kept = counts > 0
        values[b] = _estimate(r_sorted[kept], c_sorted[kept], counts[kept], weights)
    low, high = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    return estimate, float(low), float(high)
