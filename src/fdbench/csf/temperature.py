"""Temperature scaling fitted on a validation split, and the TEMP-MSR / TEMP-MLS CSFs."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import minimize
from scipy.special import logsumexp

from ._validation import as_float_array, as_label_array
from .softmax import log_softmax

__all__ = ["LOG_TEMPERATURE_BOUNDS", "fit_temperature", "temp_mls", "temp_msr"]

#: Bounds of log T during the fit (T in [e^-7, e^7]).
LOG_TEMPERATURE_BOUNDS = (-7.0, 7.0)


def _nll_and_grad(log_t: np.ndarray, z: np.ndarray, z_true: np.ndarray) -> tuple[float, np.ndarray]:
    t = float(np.exp(log_t[0]))
    scaled = z / t
    lse = logsumexp(scaled, axis=1)
    nll = float(np.mean(lse - z_true / t))
    expected = np.sum(np.exp(scaled - lse[:, None]) * z, axis=1)
    grad = float(np.mean(z_true - expected)) / t
    return nll, np.array([grad])


def fit_temperature(logits: ArrayLike, labels: ArrayLike) -> float:
    """Fit the temperature T > 0 minimising the mean NLL of ``softmax(z / T)`` on labelled data.

    Guo et al., "On calibration of modern neural networks", ICML 2017. Optimised over
    ``log T`` (so T stays positive) with L-BFGS-B in float64, analytic gradient
    ``d NLL / d log T = mean(z_y - E_p[z]) / T``, starting at T = 1 and bounded by
    :data:`LOG_TEMPERATURE_BOUNDS`.
    """
    z = as_float_array(logits, "logits", 2)
    y = as_label_array(labels, "labels", z.shape[0], z.shape[1])
    z_true = z[np.arange(z.shape[0]), y]
    result = minimize(
        _nll_and_grad,
        x0=np.zeros(1),
        args=(z, z_true),
        jac=True,
        method="L-BFGS-B",
        bounds=[LOG_TEMPERATURE_BOUNDS],
        options={"ftol": 1e-15, "gtol": 1e-12},
    )
    return float(np.exp(result.x[0]))


def _check_temperature(temperature: float) -> float:
    t = float(temperature)
    if not np.isfinite(t) or t <= 0:
        raise ValueError(f"temperature must be a finite positive float, got {temperature!r}")
    return t


def temp_msr(logits: ArrayLike, temperature: float) -> np.ndarray:
    """Temperature-scaled maximum softmax response, ``max_c softmax(z / T)_c``.

    Guo et al., ICML 2017 (FD-Shifts' ``temp_mls``).
    """
    z = as_float_array(logits, "logits", 2)
    return np.exp(np.max(log_softmax(z / _check_temperature(temperature)), axis=1))


def temp_mls(logits: ArrayLike, temperature: float) -> np.ndarray:
    """Temperature-scaled maximum logit, ``max_c z_c / T`` (same ranking as MLS, other scale)."""
    z = as_float_array(logits, "logits", 2)
    return np.max(z, axis=1) / _check_temperature(temperature)
