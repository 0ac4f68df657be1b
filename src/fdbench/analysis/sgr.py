"""Selection with guaranteed risk (SGR): risk-controlling thresholds and their risk excess."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats


@dataclass(frozen=True)
class SGRThreshold:
    """Outcome of :func:`sgr_threshold` on the validation data.

    ``threshold`` accepts samples with confidence >= it (``inf`` accepts none, when no candidate
    meets the target); ``bound`` is the risk bound of the chosen threshold, ``risk`` and
    ``coverage`` its empirical selective risk and coverage on the validation data.
    """

    threshold: float
    bound: float
    risk: float
    coverage: float
    target_risk: float
    delta: float
    feasible: bool


def risk_upper_bound(n_errors: int, n_selected: int, delta: float) -> float:
    """Upper confidence bound b* on a selective risk from ``n_errors`` in ``n_selected`` samples.

    b* solves Σ_{j=0}^{e} C(n, j) b^j (1 − b)^{n−j} = δ (Geifman & El-Yaniv, NeurIPS 2017, Lemma
    3.1): the one-sided Clopper–Pearson bound, b* = Beta⁻¹(1 − δ; e + 1, n − e), and 1 when
    every selected sample is an error. With probability at least 1 − δ the true risk is <= b*.
    """
    if n_selected <= 0:
        raise ValueError(f"n_selected must be positive; got {n_selected}")
    if not 0 <= n_errors <= n_selected:
        raise ValueError(f"n_errors must lie in [0, n_selected]; got {n_errors}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1); got {delta}")
    if n_errors == n_selected:
        return 1.0
    return float(stats.beta.ppf(1.0 - delta, n_errors + 1, n_selected - n_errors))


def sgr_threshold(
    residuals: ArrayLike, confidence: ArrayLike, target_risk: float, delta: float
) -> SGRThreshold:
    """Selection with guaranteed risk (Geifman & El-Yaniv, NeurIPS 2017, Algorithm 1).

    The m validation samples are sorted by confidence. A binary search over the sorted
    confidences runs k = ⌈log2 m⌉ steps; at step i the threshold θ = c_(z) accepts every sample
    with confidence >= θ, the bound b*_i = :func:`risk_upper_bound` (errors, accepted, δ/k) is
    computed, and the search moves to lower thresholds (more coverage) when b*_i <= r*, to higher
    ones otherwise. The union bound over the k tests gives: with probability at least 1 − δ, the
    true selective risk of the returned threshold is <= r*. Among the tested thresholds the one
    with the largest coverage whose bound is <= r* is returned; if none qualifies the result is
    infeasible (threshold ``inf``, coverage 0).

    The search itself is Algorithm 1 step for step (z = ⌈(z_min + z_max)/2⌉ on the ascending
    order, test b*_i <= r* as in the authors' code). Algorithm 1 outputs the last tested θ_k
    with its bound b*_k, which exceeds r* when the last test fails; returning the last *passing*
    threshold instead (every pass moves the search to lower thresholds, so it has the largest
    coverage of the passing ones) keeps the guarantee at r* itself, as the risk-excess analysis
    of FD-Shifts needs.

    ``residuals`` must be 0/1 (1 = failure).
    """
    r = np.asarray(residuals, dtype=np.float64)
    c = np.asarray(confidence, dtype=np.float64)
    if r.ndim != 1 or c.shape != r.shape or r.size < 2:
        raise ValueError(
            "residuals and confidence must be 1-D arrays of the same length >= 2; "
            f"got shapes {r.shape} and {c.shape}"
        )
    if not np.isfinite(c).all():
        raise ValueError(f"confidence has {int((~np.isfinite(c)).sum())} non-finite values")
    if not np.isin(r, (0.0, 1.0)).all():
        raise ValueError("residuals must be 0/1 failure labels for SGR")
    if not 0 < target_risk < 1:
        raise ValueError(f"target_risk must lie in (0, 1); got {target_risk}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1); got {delta}")
    order = np.argsort(c, kind="stable")
    c_sorted = c[order]
    errors_above = np.concatenate([np.cumsum(r[order][::-1])[::-1], [0.0]])
    m = c.size
    k = math.ceil(math.log2(m))
    best: SGRThreshold | None = None
    low, high = 0, m - 1
    for _ in range(k):
        mid = math.ceil((low + high) / 2)
        theta = c_sorted[mid]
        first = int(np.searchsorted(c_sorted, theta, side="left"))
        n_selected = m - first
        n_errors = int(errors_above[first])
        bound = risk_upper_bound(n_errors, n_selected, delta / k)
        if bound <= target_risk:
            if best is None or n_selected / m > best.coverage:
                best = SGRThreshold(
                    float(theta),
                    bound,
                    n_errors / n_selected,
                    n_selected / m,
                    target_risk,
                    delta,
                    True,
                )
            high = mid
        else:
            low = mid
    if best is None:
        return SGRThreshold(np.inf, 1.0, 0.0, 0.0, target_risk, delta, False)
    return best


def selective_outcome(
    residuals: ArrayLike, confidence: ArrayLike, threshold: float
) -> tuple[float, float]:
    """Realised (selective risk, coverage) of accepting confidence >= ``threshold``.

    The risk of an empty selection is 0.
    """
    r = np.asarray(residuals, dtype=np.float64)
    c = np.asarray(confidence, dtype=np.float64)
    if r.shape != c.shape or r.ndim != 1 or r.size == 0:
        raise ValueError("residuals and confidence must be non-empty 1-D arrays of one length")
    accepted = c >= threshold
    n = int(accepted.sum())
    return (float(r[accepted].sum() / n) if n else 0.0), n / r.size


def risk_excess(
    validation: tuple[ArrayLike, ArrayLike],
    studies: Mapping[str, tuple[ArrayLike, ArrayLike]],
    target_risks: ArrayLike,
    delta: float,
) -> pd.DataFrame:
    """FD-Shifts' risk-excess analysis of SGR thresholds under distribution shift.

    For every target risk r*, :func:`sgr_threshold` is fitted on ``validation`` = (residuals,
    confidence) and applied to every test study ``studies[name]`` = (residuals, confidence); the
    realised selective risk, coverage and the excess ``risk − r*`` are reported (Jaeger et al.,
    ICLR 2023: guarantees from i.i.d. validation data break under shift).

    Returns columns ``study, target_risk, delta, threshold, bound, val_risk, val_coverage,
    feasible, risk, coverage, excess``.
    """
    rows = []
    for target in np.atleast_1d(np.asarray(target_risks, dtype=np.float64)):
        fit = sgr_threshold(*validation, float(target), delta)
        for name, (res, conf) in studies.items():
            risk, coverage = selective_outcome(res, conf, fit.threshold)
            rows.append(
                {
                    "study": name,
                    "target_risk": float(target),
                    "delta": delta,
                    "threshold": fit.threshold,
                    "bound": fit.bound,
                    "val_risk": fit.risk,
                    "val_coverage": fit.coverage,
                    "feasible": fit.feasible,
                    "risk": risk,
                    "coverage": coverage,
                    "excess": risk - float(target),
                }
            )
    return pd.DataFrame(rows)
