"""Platt scaling of confidences to probabilities of correctness, with a never-saturating sigmoid."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_float_array, as_real_array

__all__ = ["PlattScaling", "fit_platt", "safe_sigmoid"]

_MAX_BELOW_ONE = np.nextafter(1.0, 0.0)
_SMALLEST_POSITIVE = np.nextafter(0.0, 1.0)
# expit(z) rounds to 1.0 in float64 for z above about 36.7; clip the argument below that.
_Z_MAX = 36.0
_Z_MIN = -745.0


def safe_sigmoid(z: ArrayLike) -> np.ndarray:
    """``1 / (1 + exp(-z))`` in float64, kept strictly inside (0, 1).

    The argument is clipped to [-745, 36] and the result to
    [``nextafter(0, 1)``, ``nextafter(1, 0)``], so no input, however large, maps to exactly 1.0
    (or 0.0). The map is non-decreasing, so order is kept wherever float64 keeps outputs apart.
    """
    from scipy.special import expit

    values = as_real_array(z, "z")
    if np.isnan(values).any():
        raise ValueError("z must not contain NaN")
    p = expit(np.clip(values, _Z_MIN, _Z_MAX))
    return np.clip(p, _SMALLEST_POSITIVE, _MAX_BELOW_ONE)


@dataclass(frozen=True)
class PlattScaling:
    """A fitted Platt map ``c -> sigmoid(a·c + b)``."""

    a: float
    b: float

    def __call__(self, confidence: ArrayLike) -> np.ndarray:
        """Map confidences to probabilities of correctness strictly inside (0, 1)."""
        c = as_float_array(confidence, "confidence", 1)
        with np.errstate(over="ignore"):  # a·c beyond float64 is ±inf, which safe_sigmoid clips
            z = self.a * c + self.b
        return safe_sigmoid(z)


def _loss(params: np.ndarray, c: np.ndarray, t: np.ndarray) -> tuple[float, np.ndarray]:
    from scipy.special import expit

    z = params[0] * c + params[1]
    loss = np.mean(t * np.logaddexp(0.0, -z) + (1.0 - t) * np.logaddexp(0.0, z))
    residual = expit(z) - t
    return float(loss), np.array([np.mean(residual * c), np.mean(residual)])


def fit_platt(confidence: ArrayLike, correct: ArrayLike) -> PlattScaling:
    """Fit Platt scaling: logistic regression of correctness on the confidence, in float64.

    Platt, "Probabilistic outputs for support vector machines", 1999, with his regularised
    targets t+ = (N+ + 1)/(N+ + 2), t- = 1/(N- + 2) (as scikit-learn's sigmoid calibration, used
    by FD-Shifts). Fitted on standardised confidences (divided by max |c| first, so that huge
    values cannot overflow) with L-BFGS and mapped back to ``a``, ``b``.
    A constant confidence gets ``a = 0``.
    """
    from scipy.optimize import minimize

    c = as_float_array(confidence, "confidence", 1)
    y = np.asarray(correct)
    if y.shape != c.shape:
        raise ValueError(f"correct must have shape {c.shape}, got {y.shape}")
    if not np.isin(y, (0, 1)).all():
        raise ValueError("correct must hold only 0/1 (or boolean) values")
    y = y.astype(bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    t = np.where(y, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    # Divide by max |c| first so that the mean and standard deviation cannot overflow.
    magnitude = float(np.max(np.abs(c))) or 1.0
    unit = c / magnitude
    constant = bool(np.ptp(unit) == 0)
    mean = float(unit.mean())
    scale = 1.0 if constant else float(unit.std())
    cs = (unit - mean) / scale
    result = minimize(
        _loss,
        np.zeros(2),
        args=(cs, t),
        jac=True,
        method="L-BFGS-B",
        options={"ftol": 1e-15, "gtol": 1e-12},
    )
    a_std, b_std = (float(v) for v in result.x)
    if constant:
        a_std = 0.0
    return PlattScaling(a=a_std / scale / magnitude, b=b_std - a_std * mean / scale)
