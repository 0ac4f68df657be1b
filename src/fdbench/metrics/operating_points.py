"""Certified operating points: thresholds whose selective risk is controlled, with the bound.

Three procedures pick a confidence threshold on a calibration split (disjoint from the test
split) for a target risk α: selection with guaranteed risk (SGR, Geifman & El-Yaniv 2017),
Learn-then-Test with fixed-sequence testing (LTT, Angelopoulos et al. 2021) and conformal risk
control of the generalized risk (CRC, Angelopoulos et al. 2022). A sample is accepted when its
confidence is >= the threshold; ``inf`` accepts none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_real_array

__all__ = [
    "OPERATING_POINT_METHODS",
    "OperatingPoint",
    "OperatingPointOutcome",
    "SGRThreshold",
    "apply_operating_point",
    "binomial_p_value",
    "calibration_split",
    "certify",
    "crc_threshold",
    "fixed_sequence_testing",
    "hoeffding_bentkus_p_value",
    "ltt_grid",
    "ltt_threshold",
    "risk_upper_bound",
    "selective_outcome",
    "sgr_operating_point",
    "sgr_threshold",
    "simulate_operating_points",
]


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
    from scipy import stats  # lazy: scipy.stats costs ~0.5 s to import

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


#: What each procedure guarantees about the threshold it returns.
GUARANTEES = {
    "sgr": "selective risk <= bound with probability >= 1 - delta",
    "ltt_hb": "selective risk <= alpha with probability >= 1 - delta",
    "ltt_binomial": "selective risk <= alpha with probability >= 1 - delta",
    "crc": "expected generalized risk <= alpha",
}


@dataclass(frozen=True)
class OperatingPoint:
    """A threshold certified on a calibration split.

    ``threshold`` accepts confidence >= it (``inf`` accepts none: no candidate could be
    certified, ``feasible`` is False). ``coverage`` and ``risk`` are the coverage and the
    selective risk of the threshold on the calibration split (risk 0 when nothing is accepted);
    ``bound`` is the certified upper bound on the controlled population quantity (the SGR
    bound b*, α for LTT and CRC); ``guarantee`` states what holds (:data:`GUARANTEES`);
    ``delta`` is NaN for CRC, whose guarantee is in expectation.
    """

    method: str
    threshold: float
    coverage: float
    risk: float
    bound: float
    alpha: float
    delta: float
    feasible: bool
    n_calibration: int

    @property
    def guarantee(self) -> str:
        return GUARANTEES[self.method]


@dataclass(frozen=True)
class OperatingPointOutcome:
    """What a certified threshold did on a test split: selective risk, generalized risk
    (failures accepted / all samples), coverage, and whether the controlled quantity stayed
    within α (``held``; selective risk for SGR and LTT, generalized risk for CRC)."""

    risk: float
    generalized_risk: float
    coverage: float
    held: bool


def _check_level(value: float, name: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name}: expected a number, got {type(value).__name__}") from err
    if not 0 < x < 1:
        raise ValueError(f"{name}: expected a value in (0, 1), got {value!r}")
    return x


def _check_pair(
    residuals: ArrayLike, confidence: ArrayLike, *, binary: bool
) -> tuple[np.ndarray, np.ndarray]:
    r = as_real_array(residuals, "residuals")
    c = as_real_array(confidence, "confidence")
    if r.ndim != 1 or c.shape != r.shape:
        raise ValueError(
            "residuals and confidence: expected 1-D arrays of one length, "
            f"got shapes {r.shape} and {c.shape}"
        )
    if r.size == 0:
        raise ValueError("residuals: expected at least one calibration sample, got none")
    if not np.isfinite(c).all():
        raise ValueError(f"confidence: {int((~np.isfinite(c)).sum())} values are NaN or inf")
    if binary:
        if not np.isin(r, (0.0, 1.0)).all():
            raise ValueError("residuals: expected 0/1 failure labels for this procedure")
    elif not (np.isfinite(r).all() and (r >= 0).all() and (r <= 1).all()):
        raise ValueError("residuals: expected losses in [0, 1] for this procedure")
    return r, c


def _accepted_sums(
    r: np.ndarray, c: np.ndarray, thresholds: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Number accepted (confidence >= λ) and the sum of their residuals, for every λ."""
    order = np.argsort(c, kind="stable")
    c_sorted = c[order]
    above = np.concatenate([np.cumsum(r[order][::-1])[::-1], [0.0]])
    first = np.searchsorted(c_sorted, thresholds, side="left")
    return (c.size - first).astype(np.int64), above[first]


def calibration_split(n: int, calibration_fraction: float, seed: int) -> np.ndarray:
    """Boolean mask of the calibration samples of a seeded random split of ``n`` samples.

    ``round(calibration_fraction · n)`` samples, drawn without replacement by
    ``numpy.random.default_rng(seed).permutation(n)``, form the calibration split; the others
    are the test split (the complement of the mask), so the two are disjoint.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n: expected an integer >= 2, got {n!r}")
    fraction = _check_level(calibration_fraction, "calibration_fraction")
    k = round(fraction * n)
    if not 0 < k < n:
        raise ValueError(
            f"calibration_fraction: {fraction} of {n} samples leaves an empty calibration or "
            "test split"
        )
    mask = np.zeros(n, dtype=bool)
    mask[np.random.default_rng(seed).permutation(n)[:k]] = True
    return mask


def sgr_operating_point(
    residuals: ArrayLike, confidence: ArrayLike, alpha: float, delta: float
) -> OperatingPoint:
    """:func:`sgr_threshold` (Geifman & El-Yaniv 2017, Algorithm 1) as an
    :class:`OperatingPoint`: with probability >= 1 − δ the selective risk of the threshold is
    <= its bound b*, which is <= α."""
    fit = sgr_threshold(residuals, confidence, alpha, delta)
    return OperatingPoint(
        "sgr",
        fit.threshold,
        fit.coverage,
        fit.risk,
        fit.bound,
        float(alpha),
        float(delta),
        fit.feasible,
        int(np.asarray(residuals).size),
    )


def hoeffding_bentkus_p_value(risk: ArrayLike, n: ArrayLike, alpha: float) -> np.ndarray:
    """Hoeffding–Bentkus p-value of H0: R(λ) > α from the mean ``risk`` of ``n`` losses in [0, 1].

    p = min(exp(−n·h1(min(R̂, α), α)), e·P(Binom(n, α) <= ⌈n·R̂⌉)) with
    h1(a, b) = a·log(a/b) + (1 − a)·log((1 − a)/(1 − b)) (Angelopoulos, Bates, Candès, Jordan
    & Lei, "Learn then Test", 2021, Proposition 3.1 / eq. (6)); 1 where n = 0. The same
    quantity as MAPIE's ``compute_hoeffding_bentkus_p_value(binary=False)``.
    """
    from scipy import stats  # lazy: scipy.stats costs ~0.5 s to import

    a = _check_level(alpha, "alpha")
    r_hat = np.asarray(risk, dtype=np.float64)
    n_arr = np.asarray(n, dtype=np.float64)
    r_hat, n_arr = np.broadcast_arrays(r_hat, n_arr)
    if ((r_hat < 0) | (r_hat > 1) | ~np.isfinite(r_hat)).any():
        raise ValueError("risk: expected mean losses in [0, 1]")
    if ((n_arr < 0) | ~np.isfinite(n_arr)).any():
        raise ValueError("n: expected non-negative sample sizes")
    clipped = np.minimum(r_hat, a)
    with np.errstate(divide="ignore", invalid="ignore"):
        first = np.where(clipped > 0, clipped * np.log(clipped / a), 0.0)
    h1 = first + (1 - clipped) * np.log((1 - clipped) / (1 - a))
    hoeffding = np.exp(-n_arr * h1)
    bentkus = np.e * stats.binom.cdf(np.ceil(np.round(n_arr * r_hat, 9)), n_arr, a)
    p = np.minimum(hoeffding, bentkus)
    return np.where(n_arr > 0, np.minimum(p, 1.0), 1.0)


def binomial_p_value(n_errors: ArrayLike, n: ArrayLike, alpha: float) -> np.ndarray:
    """Exact binomial p-value of H0: R(λ) > α from ``n_errors`` failures among ``n`` 0/1 losses.

    p = P(Binom(n, α) <= n_errors) (Learn then Test, Section 3.1, the p-value for binary
    losses; for them it never exceeds the Hoeffding–Bentkus one); 1 where n = 0.
    """
    from scipy import stats  # lazy: scipy.stats costs ~0.5 s to import

    a = _check_level(alpha, "alpha")
    k = np.asarray(n_errors, dtype=np.float64)
    n_arr = np.asarray(n, dtype=np.float64)
    if ((k < 0) | (k > n_arr)).any():
        raise ValueError("n_errors: expected counts in [0, n]")
    return np.where(n_arr > 0, stats.binom.cdf(k, n_arr, a), 1.0)


def fixed_sequence_testing(p_values: ArrayLike, delta: float) -> int:
    """Number of hypotheses rejected by fixed-sequence testing at level δ (Bauer 1991).

    The hypotheses are tested in the given order, each at the full level δ, and testing stops
    at the first p-value > δ; the first k hypotheses are rejected. The family-wise error rate
    is at most δ when the order is fixed before the data are seen (Learn then Test, Section 4).
    """
    d = _check_level(delta, "delta")
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p_values: expected a 1-D array, got shape {p.shape}")
    failed = np.flatnonzero(~(p <= d))
    return int(failed[0]) if failed.size else int(p.size)


def ltt_grid(
    confidence: ArrayLike,
    alpha: float,
    delta: float,
    n_levels: int = 100,
    *,
    p_value: str = "binomial",
) -> np.ndarray:
    """Default fixed sequence of LTT: descending thresholds from the calibration confidences.

    For the coverage levels k/``n_levels`` (k = 1 … n_levels), the threshold accepting the
    ⌈k·n/n_levels⌉ most confident samples. Fixed-sequence testing stops at its first failure,
    so the sequence starts where a test can pass: levels with fewer than m accepted samples
    are left out, m the fewest for which an observed selective risk of α/2 gives a p-value
    <= δ (``p_value``: the binomial P(Binom(m, α) <= ⌊m·α/2⌋), or the Hoeffding–Bentkus one
    of a mean loss α/2 among m). The grid depends on the confidences, α, δ and n,
    never on the residuals; duplicates are merged, largest threshold first.
    """
    c = np.sort(as_real_array(confidence, "confidence"))[::-1]
    a = _check_level(alpha, "alpha")
    d = _check_level(delta, "delta")
    if isinstance(n_levels, bool) or not isinstance(n_levels, (int, np.integer)) or n_levels < 1:
        raise ValueError(f"n_levels: expected a positive integer, got {n_levels!r}")
    sizes = np.arange(1, c.size + 1)
    if p_value == "binomial":
        p = binomial_p_value(np.floor(sizes * a / 2), sizes, a)
    elif p_value == "hoeffding_bentkus":
        p = hoeffding_bentkus_p_value(np.full(sizes.size, a / 2), sizes, a)
    else:
        raise ValueError(f"p_value: expected 'hoeffding_bentkus' or 'binomial', got {p_value!r}")
    testable = np.flatnonzero(p <= d)
    if testable.size == 0:
        return np.empty(0)
    counts = np.ceil(np.arange(1, n_levels + 1) * c.size / n_levels).astype(np.int64)
    counts = counts[counts >= sizes[testable[0]]]
    return np.unique(c[counts - 1])[::-1]


def ltt_threshold(
    residuals: ArrayLike,
    confidence: ArrayLike,
    alpha: float,
    delta: float,
    *,
    p_value: str = "hoeffding_bentkus",
    thresholds: ArrayLike | None = None,
) -> OperatingPoint:
    """Learn then Test for the selective risk (Angelopoulos et al. 2021, Algorithm 1 with
    fixed-sequence testing, Section 4).

    The null hypothesis of a candidate λ_j is H_j: R(λ_j) > α, R the selective risk
    E[r | c >= λ_j]. Its p-value comes from the n_j calibration samples with confidence >= λ_j
    (given n_j they are i.i.d. draws of the accepted population): Hoeffding–Bentkus
    (:func:`hoeffding_bentkus_p_value`, losses in [0, 1]) or the exact binomial one
    (:func:`binomial_p_value`, 0/1 residuals). The candidates ``thresholds`` are tested in
    descending order by :func:`fixed_sequence_testing` at level δ; the last rejected λ, the
    lowest certified threshold and so the largest coverage, is returned. With probability
    >= 1 − δ its selective risk is <= α. Default candidates: :func:`ltt_grid`.
    """
    binary = p_value == "binomial"
    if p_value not in ("hoeffding_bentkus", "binomial"):
        raise ValueError(f"p_value: expected 'hoeffding_bentkus' or 'binomial', got {p_value!r}")
    r, c = _check_pair(residuals, confidence, binary=binary)
    a = _check_level(alpha, "alpha")
    d = _check_level(delta, "delta")
    if thresholds is None:
        lam = ltt_grid(c, a, d, p_value=p_value)
    else:
        lam = as_real_array(thresholds, "thresholds")
        if lam.ndim != 1 or not np.isfinite(lam).all() or (np.diff(lam) >= 0).any():
            raise ValueError("thresholds: expected a 1-D strictly decreasing finite sequence")
    n_acc, errors = _accepted_sums(r, c, lam)
    with np.errstate(invalid="ignore", divide="ignore"):
        r_hat = np.where(n_acc > 0, errors / np.maximum(n_acc, 1), 0.0)
    if binary:
        p = binomial_p_value(np.round(errors), n_acc, a)
    else:
        p = hoeffding_bentkus_p_value(r_hat, n_acc, a)
    k = fixed_sequence_testing(p, d)
    method = "ltt_binomial" if binary else "ltt_hb"
    if k == 0:
        return OperatingPoint(method, np.inf, 0.0, 0.0, a, a, d, False, r.size)
    j = k - 1
    return OperatingPoint(
        method, float(lam[j]), n_acc[j] / r.size, float(r_hat[j]), a, a, d, True, r.size
    )


def crc_threshold(residuals: ArrayLike, confidence: ArrayLike, alpha: float) -> OperatingPoint:
    """Conformal risk control of the generalized risk (Angelopoulos, Bates, Fisch, Lei &
    Schuster, "Conformal Risk Control", 2022, Theorem 1).

    CRC controls E[L_{n+1}(λ̂)] for losses L_i(λ) that are non-increasing in λ and bounded by
    B = 1, averaged over samples. The selective risk is a ratio of two such averages, not one,
    so CRC does not apply to it; it applies to the generalized risk, L_i(λ) = r_i·[c_i >= λ]
    with r_i in [0, 1] (the joint probability of failing and being accepted; for a threshold
    of coverage φ the selective risk is the generalized risk divided by φ). λ̂ is the smallest
    candidate (a calibration confidence, or ``inf``) with
    n/(n + 1)·R̂_n(λ) + B/(n + 1) <= α, R̂_n the mean calibration loss; then
    E[generalized risk of λ̂ on a new sample] <= α, in expectation over calibration and test
    (no δ). When no calibration confidence qualifies, λ̂ accepts nothing (``inf``, not
    ``feasible``). Accepting c >= λ̂ accepts no more than the infimum of the theorem, and the losses
    fall with λ, so the guarantee carries over.
    """
    r, c = _check_pair(residuals, confidence, binary=False)
    a = _check_level(alpha, "alpha")
    n = r.size
    candidates = np.unique(c)
    n_acc, errors = _accepted_sums(r, c, candidates)
    ok = n / (n + 1) * (errors / n) + 1 / (n + 1) <= a
    if not ok.any():
        return OperatingPoint("crc", np.inf, 0.0, 0.0, a, a, np.nan, False, n)
    j = int(np.argmax(ok))
    return OperatingPoint(
        "crc",
        float(candidates[j]),
        n_acc[j] / n,
        float(errors[j] / n_acc[j]),
        a,
        a,
        np.nan,
        True,
        n,
    )


#: The procedures :func:`certify` runs, by name.
OPERATING_POINT_METHODS = ("sgr", "ltt_hb", "ltt_binomial", "crc")


def certify(
    residuals: ArrayLike, confidence: ArrayLike, alpha: float, delta: float, method: str
) -> OperatingPoint:
    """The operating point of ``method`` (one of :data:`OPERATING_POINT_METHODS`) at (α, δ)
    from calibration data; CRC ignores δ."""
    if method == "sgr":
        return sgr_operating_point(residuals, confidence, alpha, delta)
    if method == "ltt_hb":
        return ltt_threshold(residuals, confidence, alpha, delta)
    if method == "ltt_binomial":
        return ltt_threshold(residuals, confidence, alpha, delta, p_value="binomial")
    if method == "crc":
        return crc_threshold(residuals, confidence, alpha)
    raise ValueError(f"method: expected one of {OPERATING_POINT_METHODS}, got {method!r}")


def apply_operating_point(
    point: OperatingPoint, residuals: ArrayLike, confidence: ArrayLike
) -> OperatingPointOutcome:
    """Selective risk, generalized risk and coverage of ``point``'s threshold on test data,
    and whether the quantity it controls stayed within α there."""
    r, c = _check_pair(residuals, confidence, binary=False)
    risk, coverage = selective_outcome(r, c, point.threshold)
    generalized = float(r[c >= point.threshold].sum() / r.size)
    controlled = generalized if point.method == "crc" else risk
    return OperatingPointOutcome(risk, generalized, coverage, controlled <= point.alpha)


def simulate_operating_points(
    residuals: ArrayLike,
    confidence: ArrayLike,
    alpha: float,
    delta: float,
    *,
    calibration_fraction: float = 0.3,
    n_splits: int = 1000,
    seed: int = 0,
    methods: tuple[str, ...] = OPERATING_POINT_METHODS,
) -> dict[str, dict[str, float]]:
    """Measure the guarantees: ``n_splits`` seeded calibration/test splits of one pool.

    Split s takes :func:`calibration_split` (``calibration_fraction``, seed ``seed + s``);
    every method certifies a threshold on the calibration part and is applied to the test
    part and to the whole pool. Per method: ``violation`` (frequency of the controlled
    quantity exceeding α on the test split: selective risk, generalized risk for CRC),
    ``pool_violation`` (the same on the whole pool, the population the splits are drawn
    from), ``coverage`` (mean test coverage kept), ``risk`` (mean test selective risk over the
    splits that accept something), ``generalized_risk`` (mean test generalized risk) and
    ``feasible`` (frequency of a certified threshold).
    """
    r, c = _check_pair(residuals, confidence, binary=False)
    if isinstance(n_splits, bool) or not isinstance(n_splits, (int, np.integer)) or n_splits < 1:
        raise ValueError(f"n_splits: expected a positive integer, got {n_splits!r}")
    for method in methods:
        if method not in OPERATING_POINT_METHODS:
            raise ValueError(
                f"methods: expected names of {OPERATING_POINT_METHODS}, got {method!r}"
            )
    rows = {m: np.empty((n_splits, 6)) for m in methods}
    for s in range(n_splits):
        cal = calibration_split(r.size, calibration_fraction, seed + s)
        for method in methods:
            point = certify(r[cal], c[cal], alpha, delta, method)
            test = apply_operating_point(point, r[~cal], c[~cal])
            pool = apply_operating_point(point, r, c)
            risk = test.risk if test.coverage > 0 else np.nan
            rows[method][s] = (
                not test.held,
                not pool.held,
                test.coverage,
                risk,
                test.generalized_risk,
                point.feasible,
            )
    keys = ("violation", "pool_violation", "coverage", "risk", "generalized_risk", "feasible")
    return {
        method: {
            key: float(np.nanmean(values[:, k])) if not np.isnan(values[:, k]).all() else np.nan
            for k, key in enumerate(keys)
        }
        for method, values in rows.items()
    }
