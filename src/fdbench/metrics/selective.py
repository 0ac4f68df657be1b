"""Selective-classification metrics: AURC, AUGRC, excess and normalised forms, operating points."""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike

from ._balanced import class_codes, class_mean_selective_risk
from ._core import (
    Ranking,
    augrc_from_cum,
    aurc_from_cum,
    aurc_from_risks,
    aurc_range_from_curve,
    coverage_at_risk_from_cum,
    min_risk_at_coverage_from_risks,
    optimal_binary_unit,
    optimal_from_counts,
    optimal_from_unit_cumulative,
    rank,
    risk_at_coverage_from_cum,
    selective_risks_from_cum,
)
from ._validation import UndefinedMetricWarning, check_inputs, check_labels, check_unit_interval
from .curves import prepare

__all__ = [
    "augrc",
    "augrc_ba",
    "aurc",
    "aurc_ba",
    "aurc_balanced_residuals",
    "balanced_residuals",
    "coverage_at_risk",
    "eaugrc",
    "eaurc",
    "min_selective_risk_at_coverage",
    "naurc",
    "optimal_aurc_augrc",
    "selective_risk_at_coverage",
]


def _check_range(coverage_range: tuple[float, float]) -> tuple[float, float]:
    try:
        low, high = (float(v) for v in coverage_range)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"coverage_range: expected a pair (low, high) of numbers, got {coverage_range!r}"
        ) from err
    if not 0 <= low < high <= 1:
        raise ValueError(f"coverage_range: expected 0 <= low < high <= 1, got {coverage_range!r}")
    return low, high


def aurc(
    residuals: ArrayLike,
    confidence: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    coverage_range: tuple[float, float] | None = None,
) -> float:
    """Area under the risk-coverage curve (AURC).

    Trapezoidal area under the selective risk over coverage of :func:`risk_coverage_curve`
    (one point per distinct confidence, end point at coverage 0 repeating the last risk).
    With ``coverage_range=(a, b)`` the area of the piecewise-linear curve restricted to
    coverages [a, b], divided by b - a (the mean selective risk over that range).

    Source: Geifman, Uziel & El-Yaniv, "Bias-reduced uncertainty estimation for deep neural
    classifiers", ICLR 2019 (AURC); Jaeger et al., "A call to reflect on evaluation practices
    for failure detection in image classification", ICLR 2023 (FD-Shifts).
    """
    p = prepare(residuals, confidence, sample_weight)
    if coverage_range is None:
        return float(aurc_from_cum(p.W, p.L)[0])
    return _aurc_range(p.W[0], p.L[0], *_check_range(coverage_range))


def _aurc_range(W: np.ndarray, L: np.ndarray, low: float, high: float) -> float:
    """AURC over [low, high] from cumulative weights and losses at the tie-group ends."""
    coverage = np.concatenate([[0.0], W / W[-1]])
    selective = L / W
    return aurc_range_from_curve(coverage, np.concatenate([selective[:1], selective]), low, high)


def _optimal_aurc_range(r: np.ndarray, w: np.ndarray | None, low: float, high: float) -> float:
    """AURC over [low, high] of the optimal CSF (strict ascending-residual order, weight w as
    w n / sum w copies as in :func:`optimal_aurc_augrc`, each its own step); needs those
    numbers of copies to be whole."""
    if w is None:
        values = np.sort(r)
    else:
        copies = w * (r.size / w.sum())
        if not np.all(copies == np.round(copies)):
            raise ValueError(
                "coverage_range: the optimum over a coverage range needs sample weights that "
                "are whole numbers of copies in units of their mean (w n / sum w integer, as "
                "bootstrap counts are); got other weights"
            )
        order = np.argsort(r, kind="stable")
        values = np.repeat(r[order], copies[order].astype(np.int64))
    steps = np.arange(1.0, values.size + 1.0)
    return _aurc_range(steps, np.cumsum(values), low, high)


def augrc(
    residuals: ArrayLike, confidence: ArrayLike, *, sample_weight: ArrayLike | None = None
) -> float:
    """Area under the generalized-risk-coverage curve (AUGRC).

    Trapezoidal area under the generalized risk sum w_i r_i [c_i >= tau] / sum w_i over
    coverage, end point (0, 0) included. For 0/1 residuals it equals
    (1 - AUROC_f) acc (1 - acc) + (1 - acc)^2 / 2.

    Source: Traub et al., "Overcoming common flaws in the evaluation of selective
    classification systems", NeurIPS 2024.
    """
    p = prepare(residuals, confidence, sample_weight)
    return float(augrc_from_cum(p.W, p.L)[0])


def optimal_aurc_augrc(
    residuals: ArrayLike, *, sample_weight: ArrayLike | None = None
) -> tuple[float, float]:
    """AURC and AUGRC of the optimal CSF on this finite sample.

    The optimal CSF ranks the samples by ascending residual with a strict order (every sample
    its own step). Sample weights are relative frequencies: the n samples of positive weight
    remain n samples, weight w counting as w n / sum w copies, each its own step. The optimum
    therefore does not change when every weight is multiplied by the same factor, and weights
    of mean 1 (bootstrap counts over the resampled samples, integer weights summing to n) give
    exactly the optimum of the data with each sample repeated that many times (other weights
    use the same closed form, see ``optimal_from_counts``).
    """
    r, _, w, _ = check_inputs(residuals, np.zeros(np.shape(residuals)), sample_weight)
    return _optimum(r, w)


def _optimum(
    r: np.ndarray,
    w: np.ndarray | None,
    work=None,
    ranking: Ranking | None = None,
    L: np.ndarray | None = None,
    *,
    binary: bool | None = None,
) -> tuple[float, float]:
    """Optimal (AURC, AUGRC) for residuals ``r`` and weights ``w``.

    ``ranking`` and ``L`` (its cumulative losses, (1, T)) describe the CSF being evaluated:
    when it already ranks 0/1 residuals optimally (no ties, unit weights, every success before
    every failure) its curve is the optimum's, evaluated with the same arithmetic, so that the
    excess is exactly 0. ``binary``: whether every residual is 0 or 1, where the caller knows
    (not tested again).
    """
    if binary is None:
        binary = bool(np.all((r == 0) | (r == 1)))
    if w is None:
        if binary:
            n_fail = int(np.count_nonzero(r))
            n_ok = r.size - n_fail
            if (
                ranking is not None
                and L is not None
                and ranking.ends is None
                and (n_ok == 0 or L[0, n_ok - 1] == 0)
            ):
                W = ranking.cumulative(None)[None, :]
                return float(aurc_from_cum(W, L, work)[0]), float(augrc_from_cum(W, L, work)[0])
            return optimal_binary_unit(n_ok, n_fail)
        return optimal_from_unit_cumulative(np.cumsum(np.sort(r)), work)
    if binary:
        values = np.array([0.0, 1.0])
        # einsum's own sum of products, not BLAS's dot: OpenBLAS splits a long dot product
        # across its threads, so that the sum (and the optimum) changed with their number
        fail_weight = float(np.einsum("i,i->", w, r))
        counts = np.array([[float(w.sum()) - fail_weight, fail_weight]])
    else:
        values, inverse = np.unique(r, return_inverse=True)
        counts = np.bincount(inverse, weights=w)[None, :]
    aurc_opt, augrc_opt = optimal_from_counts(values, counts, r.size)
    return float(aurc_opt[0]), float(augrc_opt[0])


def eaurc(
    residuals: ArrayLike,
    confidence: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    coverage_range: tuple[float, float] | None = None,
) -> float:
    """Excess AURC: AURC minus the AURC of the optimal CSF on the same finite sample.

    The optimum ranks samples by ascending residual, every sample its own step
    (:func:`optimal_aurc_augrc`), so e-AURC is exactly 0 for a perfect CSF without ties and
    never negative for an unweighted CSF without ties. A tie group (or a weight above the
    mean, which counts as tied copies) is one linear step of the curve, which may pass below
    the strict optimum; e-AURC can then be slightly negative. Only the ratios of the weights
    matter. With ``coverage_range=(a, b)`` both areas are restricted to coverages [a, b] as in
    :func:`aurc` (weights that are whole numbers of copies only, see
    :func:`optimal_aurc_augrc`).

    Source: Geifman, Uziel & El-Yaniv, ICLR 2019 (E-AURC), computed on the finite sample
    instead of the continuous approximation r + (1 - r) ln(1 - r).
    """
    p = prepare(residuals, confidence, sample_weight)
    if coverage_range is not None:
        low, high = _check_range(coverage_range)
        value = _aurc_range(p.W[0], p.L[0], low, high)
        return value - _optimal_aurc_range(p.residuals, p.weights, low, high)
    return (
        float(aurc_from_cum(p.W, p.L)[0])
        - _optimum(p.residuals, p.weights, None, p.ranking, p.L)[0]
    )


def eaugrc(
    residuals: ArrayLike, confidence: ArrayLike, *, sample_weight: ArrayLike | None = None
) -> float:
    """Excess AUGRC: AUGRC minus the AUGRC of the optimal CSF on the same finite sample.

    Same optimum as :func:`eaurc` (ascending residual, strict order, frequency weights).
    Source: Traub et al., NeurIPS 2024.
    """
    p = prepare(residuals, confidence, sample_weight)
    return (
        float(augrc_from_cum(p.W, p.L)[0])
        - _optimum(p.residuals, p.weights, None, p.ranking, p.L)[1]
    )


def naurc_from_parts(
    value: float | np.ndarray, optimum: float | np.ndarray, random: float | np.ndarray
) -> float | np.ndarray:
    """(AURC - AURC_opt) / (AURC_random - AURC_opt), NaN where the denominator is 0 (up to
    rounding: below 1e-12 of AURC_random). Scalars or arrays."""
    value, optimum, random = (np.asarray(x, dtype=np.float64) for x in (value, optimum, random))
    den = random - optimum
    defined = den > 1e-12 * random
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(defined, (value - optimum) / np.where(defined, den, 1.0), np.nan)
    return float(out) if out.ndim == 0 else out


def naurc(
    residuals: ArrayLike,
    confidence: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    coverage_range: tuple[float, float] | None = None,
) -> float:
    """Normalised AURC: (AURC - AURC_opt) / (AURC_random - AURC_opt).

    AURC_opt is the finite-sample optimum of :func:`eaurc`, AURC_random the (weighted) mean
    residual, the AURC of a constant CSF. NaN with an ``UndefinedMetricWarning`` when the two
    coincide (e.g. all residuals equal). With ``coverage_range=(a, b)`` AURC and AURC_opt are
    restricted to coverages [a, b] as in :func:`eaurc` (the constant CSF's is unchanged).

    Source: Cattelan & Silva, "How to fix a broken confidence estimator: evaluating post-hoc
    methods for selective classification with deep neural networks", UAI 2024 (arXiv 2023).
    """
    p = prepare(residuals, confidence, sample_weight)
    random = float(p.L[0, -1] / p.W[0, -1])
    if coverage_range is None:
        value = float(aurc_from_cum(p.W, p.L)[0])
        optimum = _optimum(p.residuals, p.weights, None, p.ranking, p.L)[0]
    else:
        low, high = _check_range(coverage_range)
        value = _aurc_range(p.W[0], p.L[0], low, high)
        optimum = _optimal_aurc_range(p.residuals, p.weights, low, high)
    out = float(naurc_from_parts(value, optimum, random))
    if np.isnan(out):
        warnings.warn(
            "naurc: undefined because the optimal and the random AURC coincide; returning NaN",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    return out


def selective_risk_at_coverage(
    residuals: ArrayLike,
    confidence: ArrayLike,
    coverage: float,
    *,
    sample_weight: ArrayLike | None = None,
) -> float:
    """Selective risk of the largest threshold whose coverage is >= ``coverage`` (in (0, 1]).

    The operating point a deployment with target coverage x would set: the threshold that
    accepts as few samples as still reach coverage x. ``evaluate_all`` key
    ``selective_risk@95cov``. FD-Shifts' working point ("risk@95cov") is another quantity,
    :func:`min_selective_risk_at_coverage`.

    Coverages are compared as accepted weight / total weight in float64, exact for unit and
    integer weights; non-integer weights are summed cumulatively, so a target equal to a
    point's exact coverage may fall on either side of it by one rounding.

    Source: Geifman & El-Yaniv, NeurIPS 2017 (risk at a target coverage).
    """
    x = check_unit_interval(coverage, "coverage")
    p = prepare(residuals, confidence, sample_weight)
    return float(risk_at_coverage_from_cum(p.W, p.L, x)[0])


def min_selective_risk_at_coverage(
    residuals: ArrayLike,
    confidence: ArrayLike,
    coverage: float,
    *,
    sample_weight: ArrayLike | None = None,
) -> float:
    """Lowest selective risk among the curve points whose coverage is >= ``coverage``.

    FD-Shifts' working point "risk@x cov" (x in (0, 1]): of every threshold that accepts at
    least a fraction x of the samples, the one with the lowest selective risk. It is never
    above :func:`selective_risk_at_coverage`, which takes the largest such threshold.
    ``evaluate_all`` key ``risk@95cov``. Points are those of :func:`risk_coverage_curve` (one
    per distinct confidence, weighted coverages); coverages are compared as in
    :func:`selective_risk_at_coverage`.

    Source: Jaeger et al., ICLR 2023; IML-DKFZ/fd-shifts, ``fd_shifts/analysis/rc_stats.py``
    (``RiskCoverageStatsMixin.get_working_point`` with ``target_cov``) and
    ``fd_shifts/analysis/eval_utils.py`` (``risk@95cov`` = min of the selective risks with
    coverage >= 0.95; reported there x100).
    """
    x = check_unit_interval(coverage, "coverage")
    p = prepare(residuals, confidence, sample_weight)
    risks = selective_risks_from_cum(p.W, p.L)
    return float(min_risk_at_coverage_from_risks(p.W, risks, x)[0])


def coverage_at_risk(
    residuals: ArrayLike,
    confidence: ArrayLike,
    risk: float,
    *,
    sample_weight: ArrayLike | None = None,
) -> float:
    """Largest coverage whose selective risk is <= ``risk`` (0 if there is none).

    Selective risks are compared as accepted loss / accepted weight in float64, exact for 0/1
    residuals with integer weights; soft residuals or non-integer weights are summed
    cumulatively, so a target equal to a point's exact risk may fall on either side of it by
    one rounding.

    With 0/1 residuals and ``risk = 1 - a`` this is the coverage at the selective accuracy
    constraint a (Galil et al., "What can we learn from the selective prediction and
    uncertainty estimation performance of 523 ImageNet classifiers", ICLR 2023).
    """
    try:
        target = float(risk)
    except (TypeError, ValueError) as err:
        raise TypeError(f"risk: expected a number, got {type(risk).__name__}") from err
    if not (np.isfinite(target) and target >= 0):
        raise ValueError(f"risk: expected a finite non-negative number, got {risk!r}")
    p = prepare(residuals, confidence, sample_weight)
    return float(coverage_at_risk_from_cum(p.W, p.L, target)[0])


def balanced_residuals(
    residuals: ArrayLike, labels: ArrayLike, *, sample_weight: ArrayLike | None = None
) -> np.ndarray:
    """Residuals re-weighted to the error function of balanced accuracy: r_i n / (K n_{y_i}).

    n is the total (weighted) count, n_c the (weighted) count of class c and K the number of
    classes present. Samples of weight 0 keep their residual (they do not count in n or n_c).
    Source: Traub et al., NeurIPS 2024 (error flexibility of AUGRC).
    """
    r, _, w, keep = check_inputs(residuals, np.zeros(np.shape(residuals)), sample_weight)
    y = check_labels(labels, r.size, keep)
    codes, n_classes, counts = class_codes(y)
    factor = _balance_factor(codes, n_classes, w, counts)
    out = np.asarray(residuals, dtype=np.float64).copy()
    if keep is None:
        out *= factor
    else:
        out[keep] *= factor
    return out


def _balance_factor(
    codes: np.ndarray,
    n_classes: int,
    weights: np.ndarray | None,
    counts: np.ndarray | None = None,
) -> np.ndarray:
    """n / (K n_{y_i}) per sample from the class codes of :func:`class_codes` (weights > 0);
    ``counts``, the codes' ``np.bincount`` from there, spares counting them again without
    weights."""
    if weights is not None or counts is None:
        counts = np.bincount(codes, weights=weights)
    present = counts > 0
    per_class = np.zeros(counts.size)
    per_class[present] = counts[present].sum() / (n_classes * counts[present])
    return per_class[codes]


def _prepare_balanced(residuals, confidence, labels, sample_weight):
    r, c, w, keep = check_inputs(residuals, confidence, sample_weight)
    y = check_labels(labels, r.size, keep)
    codes, n_classes, counts = class_codes(y)
    return prepare(r * _balance_factor(codes, n_classes, w, counts), c, w)


def aurc_ba(
    residuals: ArrayLike,
    confidence: ArrayLike,
    labels: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
) -> float:
    """AURC of the balanced selective risk (AURC-BA), as FD-Shifts' code defines it.

    At each threshold tau (one curve point per distinct confidence), the balanced selective
    risk is the mean over the K classes present of each class's selective risk,
    sum_{y_i = c} w_i r_i [c_i >= tau] / sum_{y_i = c} w_i [c_i >= tau], a class with nothing
    accepted contributing 0 (still counted in K). Coverage is the plain (weighted) coverage.
    Same curve points, end point (coverage 0 repeating the last risk) and trapezoid as
    :func:`aurc`. At full coverage the risk is the balanced error rate, 1 - balanced accuracy.
    Weights count as copies (integer weights equal repeating the samples).

    Example: confidences [0, 1, 2, 3], residuals [0, 1, 0, 1], labels [0, 0, 1, 1] give
    risks 1/2, 3/4, 1/4, 1/2 at coverages 1, 3/4, 1/2, 1/4 and AURC-BA 0.5. The AURC of
    class-reweighted residuals is another quantity (:func:`aurc_balanced_residuals`).

    Source: the authors' code of Traub et al., NeurIPS 2024 (whose requirement R5, error
    flexibility, names balanced accuracy; the paper gives no formula): IML-DKFZ/fd-shifts,
    ``fd_shifts/analysis/rc_stats_utils.py`` (``selective_risk_ba_stats`` with
    ``drop_empty_classes=False``) and ``fd_shifts/analysis/rc_stats.py`` (``aurc_ba``).
    """
    r, c, w, keep = check_inputs(residuals, confidence, sample_weight)
    y = check_labels(labels, r.size, keep)
    ranking = rank(c)
    W = ranking.cumulative(w)[None, :]
    codes, n_classes, counts = class_codes(y)
    risks = class_mean_selective_risk(ranking, codes, n_classes, r, w, counts=counts)[None, :]
    return float(aurc_from_risks(W, risks, W[:, 0] * risks[:, 0])[0])


def aurc_balanced_residuals(
    residuals: ArrayLike,
    confidence: ArrayLike,
    labels: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
) -> float:
    """AURC of the class-reweighted residuals r_i n / (K n_{y_i}), coverage unchanged.

    :func:`aurc` of :func:`balanced_residuals`: the AUGRC paper's balanced-accuracy error
    function put into the plain selective risk. Its risk at full coverage is the balanced
    error rate too, but at lower coverage it divides the re-weighted failures by all accepted
    samples, not class by class, so it differs from FD-Shifts' AURC-BA (:func:`aurc_ba`; e.g.
    0.7292 against 0.5 on the example there). Kept under its own name; not a paper's metric.
    """
    p = _prepare_balanced(residuals, confidence, labels, sample_weight)
    return float(aurc_from_cum(p.W, p.L)[0])


def augrc_ba(
    residuals: ArrayLike,
    confidence: ArrayLike,
    labels: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
) -> float:
    """AUGRC with class-balanced residuals r_i n / (K n_{y_i}) and unchanged coverage.

    Source: Traub et al., NeurIPS 2024 (AUGRC with the balanced-accuracy error function).
    """
    p = _prepare_balanced(residuals, confidence, labels, sample_weight)
    return float(augrc_from_cum(p.W, p.L)[0])
