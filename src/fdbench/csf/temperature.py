"""Temperature scaling fitted on a validation split, and the TEMP-MLS CSF."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_float_array, as_label_array
from .softmax import log_softmax

__all__ = ["FD_SHIFTS_LBFGS", "LOG_TEMPERATURE_BOUNDS", "fit_temperature", "temp_mls"]

#: Bounds of log T during the exact fit (T in [e^-7, e^7]).
LOG_TEMPERATURE_BOUNDS = (-7.0, 7.0)

#: FD-Shifts' temperature fit: ``torch.optim.LBFGS([T], lr=0.01, max_iter=50)`` from T = 1,
#: one ``step`` without line search, torch's default tolerances and history
#: (fd_shifts/analysis/__init__.py, ``TemperatureScaling``).
FD_SHIFTS_LBFGS: dict[str, Any] = {
    "lr": 0.01,
    "max_iter": 50,
    "history_size": 100,
    "tolerance_grad": 1e-7,
    "tolerance_change": 1e-9,
}


def _nll_and_grad(log_t: np.ndarray, z: np.ndarray, z_true: np.ndarray) -> tuple[float, np.ndarray]:
    from scipy.special import logsumexp

    t = float(np.exp(log_t[0]))
    scaled = z / t
    lse = logsumexp(scaled, axis=1)
    nll = float(np.mean(lse - z_true / t))
    expected = np.sum(np.exp(scaled - lse[:, None]) * z, axis=1)
    grad = float(np.mean(z_true - expected)) / t
    return nll, np.array([grad])


def _nll_and_grad_in_t(t: float, z: np.ndarray, z_true: np.ndarray) -> tuple[float, float]:
    """Mean NLL of softmax(z / T) and its derivative in T (not log T), for any T != 0."""
    from scipy.special import logsumexp

    scaled = z / t
    lse = logsumexp(scaled, axis=1)
    expected = np.sum(np.exp(scaled - lse[:, None]) * z, axis=1)
    return float(np.mean(lse - z_true / t)), float(np.mean(z_true - expected)) / (t * t)


def _fit_exact(z: np.ndarray, z_true: np.ndarray) -> float:
    from scipy.optimize import minimize

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


def _fit_fd_shifts(z: np.ndarray, z_true: np.ndarray) -> float:
    """One ``torch.optim.LBFGS.step`` (no line search) on the scalar T, re-typed in float64.

    Fixed step ``t·d``: t = lr·min(1, 1/|g|) on the first iteration, lr afterwards; d = −g on the
    first iteration, then the L-BFGS two-loop direction from the stored (s, y) pairs (pairs with
    y·s <= 1e-10 are not stored). Stops after ``max_iter`` iterations (the last one moves T
    without re-evaluating the loss), or on torch's tolerance tests.
    """
    opts = FD_SHIFTS_LBFGS
    lr, tol_change = opts["lr"], opts["tolerance_change"]
    t_param = 1.0
    loss, grad = _nll_and_grad_in_t(t_param, z, z_true)
    if abs(grad) <= opts["tolerance_grad"]:
        return t_param
    steps: list[float] = []
    diffs: list[float] = []
    h_diag = 1.0
    direction = step = prev_grad = 0.0
    for n_iter in range(1, opts["max_iter"] + 1):
        if n_iter == 1:
            direction = -grad
        else:
            y, s = grad - prev_grad, direction * step
            if y * s > 1e-10:
                if len(steps) == opts["history_size"]:
                    steps.pop(0)
                    diffs.pop(0)
                steps.append(s)
                diffs.append(y)
                h_diag = y * s / (y * y)
            q, alphas = -grad, [0.0] * len(steps)
            for i in range(len(steps) - 1, -1, -1):
                alphas[i] = steps[i] * q / (diffs[i] * steps[i])
                q -= alphas[i] * diffs[i]
            direction = q * h_diag
            for i in range(len(steps)):
                beta = diffs[i] * direction / (diffs[i] * steps[i])
                direction += steps[i] * (alphas[i] - beta)
        prev_grad, prev_loss = grad, loss
        step = min(1.0, 1.0 / abs(grad)) * lr if n_iter == 1 else lr
        if grad * direction > -tol_change:
            break
        t_param += step * direction
        if n_iter == opts["max_iter"]:
            break
        loss, grad = _nll_and_grad_in_t(t_param, z, z_true)
        if (
            abs(grad) <= opts["tolerance_grad"]
            or abs(direction * step) <= tol_change
            or abs(loss - prev_loss) < tol_change
        ):
            break
    if not np.isfinite(t_param) or t_param <= 0:
        exact = _fit_exact(z, z_true)
        warnings.warn(
            f"FD-Shifts' temperature fit (L-BFGS, lr 0.01, 50 fixed steps) ended at T <= 0 "
            f"(T = {t_param:g}); using the NLL minimum T = {exact:g} instead",
            RuntimeWarning,
            stacklevel=3,
        )
        return exact
    return t_param


def fit_temperature(logits: ArrayLike, labels: ArrayLike, *, method: str = "exact") -> float:
    """Fit a temperature T > 0 for ``softmax(z / T)`` by the mean NLL on labelled data.

    Guo et al., "On calibration of modern neural networks", ICML 2017.

    ``method="exact"``: the NLL minimum, found over ``log T`` (so T stays positive) with
    L-BFGS-B in float64, analytic gradient ``d NLL / d log T = mean(z_y - E_p[z]) / T``,
    starting at T = 1 and bounded by :data:`LOG_TEMPERATURE_BOUNDS`.

    ``method="fd-shifts"``: FD-Shifts' fit (``TemperatureScaling`` in
    fd_shifts/analysis/__init__.py; "L-BFGS with lr = 0.01", Traub et al., NeurIPS 2024, App.
    A.2): one ``torch.optim.LBFGS`` step with the settings of :data:`FD_SHIFTS_LBFGS` on T
    itself, from T = 1, without line search, re-typed here in float64 (torch keeps T in
    float32). Its 50 fixed steps of lr × the quasi-Newton step move T only part of the way to
    the NLL minimum when that lies far from 1 (e.g. T ≈ 1.28 where the minimum is T ≈ 6.5), so
    the two methods give different temperatures; TEMP-MLS uses this one, as the papers' numbers
    do. Where the NLL is nearly linear in T the secant step can throw T below 0 (FD-Shifts would
    then use that negative T, which reverses the softmax); there a RuntimeWarning is issued and
    the NLL minimum is returned instead.
    """
    z = as_float_array(logits, "logits", 2)
    y = as_label_array(labels, "labels", z.shape[0], z.shape[1])
    z_true = z[np.arange(z.shape[0]), y]
    if method == "exact":
        return _fit_exact(z, z_true)
    if method == "fd-shifts":
        return _fit_fd_shifts(z, z_true)
    raise ValueError(f"method must be 'exact' or 'fd-shifts', got {method!r}")


def _check_temperature(temperature: float) -> float:
    t = float(temperature)
    if not np.isfinite(t) or t <= 0:
        raise ValueError(f"temperature must be a finite positive float, got {temperature!r}")
    return t


def temp_mls(logits: ArrayLike, temperature: float) -> np.ndarray:
    """TEMP-MLS: the temperature-scaled maximum softmax response ``max_c softmax(z / T)_c``.

    Guo et al., ICML 2017; FD-Shifts' ``temp_mls`` (fd_shifts/analysis/__init__.py:
    ``TemperatureScaling.__call__`` returns ``max softmax(logits / T)``; Traub et al., NeurIPS
    2024, Table 3). The name says MLS because FD-Shifts computes it from the logits (its
    ``*_mls`` CSFs are those that read the logits, not the softmax) and scales them by T before
    the softmax; the value is a probability, not a scaled maximum logit. T is fitted on the
    validation split (:func:`fit_temperature`). For a DeepGamblers model ``logits`` are the K
    class logits (the reservation output left out), as FD-Shifts stores them.
    """
    z = as_float_array(logits, "logits", 2)
    return np.exp(np.max(log_softmax(z / _check_temperature(temperature)), axis=1))
