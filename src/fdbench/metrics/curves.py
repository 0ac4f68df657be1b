"""The risk-coverage curve: selective and generalized risk at every distinct confidence value."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._core import Ranking, rank
from ._validation import check_inputs

__all__ = ["RiskCoverageCurve", "risk_coverage_curve"]


@dataclass(frozen=True)
class RiskCoverageCurve:
    """Points of a risk-coverage curve, from coverage 1 down to the end point at coverage 0.

    ``thresholds[t]`` is the confidence threshold tau of point t (accept c >= tau); the end
    point has threshold +inf.
    """

    coverages: np.ndarray
    selective_risks: np.ndarray
    generalized_risks: np.ndarray
    thresholds: np.ndarray


@dataclass(frozen=True)
class Prepared:
    """Validated inputs with one sort: cumulative weight ``W`` and loss ``L`` at tie-group ends."""

    residuals: np.ndarray
    weights: np.ndarray | None
    ranking: Ranking
    W: np.ndarray
    L: np.ndarray


def prepare(
    residuals: ArrayLike,
    confidence: ArrayLike,
    sample_weight: ArrayLike | None,
    *,
    binary: bool = False,
    residuals_name: str = "residuals",
) -> Prepared:
    """Validate the inputs, sort once and accumulate weights and losses per tie group."""
    r, c, w, _ = check_inputs(
        residuals, confidence, sample_weight, binary=binary, residuals_name=residuals_name
    )
    ranking = rank(c)
    W = ranking.cumulative(w)
    L = ranking.cumulative(r if w is None else r * w)
    return Prepared(residuals=r, weights=w, ranking=ranking, W=W[None, :], L=L[None, :])


def risk_coverage_curve(
    residuals: ArrayLike, confidence: ArrayLike, *, sample_weight: ArrayLike | None = None
) -> RiskCoverageCurve:
    """Risk-coverage curve with one point per distinct confidence value plus an end point.

    For each distinct confidence tau (accept c_i >= tau), with weights w_i (1 by default):
    coverage = sum w_i [c_i >= tau] / sum w_i, selective risk = sum w_i r_i [c_i >= tau] /
    sum w_i [c_i >= tau] and generalized risk = sum w_i r_i [c_i >= tau] / sum w_i. Samples
    with equal confidence form one step. The curve ends with a point at coverage 0 whose
    selective risk repeats the last value and whose generalized risk is 0.

    Sources: Geifman & El-Yaniv, "Selective classification for deep neural networks",
    NeurIPS 2017 (risk-coverage curve); Traub et al., "Overcoming common flaws in the evaluation
    of selective classification systems", NeurIPS 2024 (generalized risk).
    """
    p = prepare(residuals, confidence, sample_weight)
    W, L = p.W[0], p.L[0]
    total = W[-1]
    selective = L / W
    return RiskCoverageCurve(
        coverages=np.append(W[::-1] / total, 0.0),
        selective_risks=np.append(selective[::-1], selective[0]),
        generalized_risks=np.append(L[::-1] / total, 0.0),
        thresholds=np.append(p.ranking.thresholds[::-1], np.inf),
    )
