"""Logit p-norm normalisation CSFs of Cattelan & Silva: MaxLogit-pNorm and p-NormSoftmax."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from fdbench.metrics import aurc

from ._validation import as_float_array, as_label_array
from .softmax import log_softmax

__all__ = [
    "P_GRID",
    "T_GRID",
    "PNormFit",
    "centralize",
    "fit_maxlogit_pnorm",
    "fit_pnorm_softmax",
    "logit_pnorm",
    "maxlogit_pnorm",
    "pnorm_softmax",
]

#: The p values searched on validation (``optimize.p_range = torch.arange(10)`` of the authors).
P_GRID: tuple[int, ...] = tuple(range(10))
#: The temperatures searched for p-NormSoftmax (``optimize.T_range = arange(0.01, 2, 0.01)``).
T_GRID: tuple[float, ...] = tuple(np.arange(1, 200) / 100)

_EPS = 1e-12


def _check_p(p: float) -> float:
    try:
        value = float(p)
    except (TypeError, ValueError) as err:
        raise TypeError(f"p: expected a number >= 0, got {type(p).__name__}") from err
    if not value >= 0:
        raise ValueError(f"p: expected a number >= 0 (or inf), got {p!r}")
    return value


def centralize(logits: ArrayLike) -> np.ndarray:
    """Logits minus their mean over the classes, ``z − mean_c(z_c)`` (per sample)."""
    z = as_float_array(logits, "logits", 2)
    return z - z.mean(axis=1, keepdims=True)


def logit_pnorm(logits: ArrayLike, p: float) -> np.ndarray:
    """The p-norm ``‖z‖_p`` of each row of ``logits``, at least 1e-12.

    ``p = 0`` counts the non-zero entries and ``p = inf`` is the largest magnitude, as
    ``torch.linalg.vector_norm`` (which the authors' ``torch.nn.functional.normalize`` calls).
    """
    z = as_float_array(logits, "logits", 2)
    q = _check_p(p)
    if q == 0:
        norm = np.count_nonzero(z, axis=1).astype(np.float64)
    else:
        norm = np.linalg.norm(z, ord=q, axis=1)
    return np.maximum(norm, _EPS)


def maxlogit_pnorm(logits: ArrayLike, p: float) -> np.ndarray:
    """MaxLogit-pNorm: ``max_k (z_k − μ(z)) / ‖z − μ(z)‖_p``.

    Cattelan & Silva, "How to fix a broken confidence estimator: evaluating post-hoc methods
    for selective classification with deep neural networks", UAI 2024 (Eq. 9): the maximum of
    the centralised logits divided by their p-norm, μ(z) the mean logit. Authors' code:
    github.com/lfpc/FixSelectiveClassification, ``post_hoc.py`` (``centralize``, ``normalize``,
    ``MaxLogit_pNorm``). ``p`` is chosen on held-out data (:func:`fit_maxlogit_pnorm`).
    """
    z = centralize(logits)
    return z.max(axis=1) / logit_pnorm(z, p)


def pnorm_softmax(logits: ArrayLike, p: float, temperature: float) -> np.ndarray:
    """p-NormSoftmax: ``max_k softmax((z − μ(z)) / (T · ‖z − μ(z)‖_p))_k``.

    Cattelan & Silva, UAI 2024 (Eq. 8): the maximum softmax probability of the centralised
    logits normalised by their p-norm and divided by a temperature T; authors' code
    ``post_hoc.py`` (``optimize.p_and_T``, ``p_TS``). ``p`` and T are chosen on held-out data
    (:func:`fit_pnorm_softmax`).
    """
    t = float(temperature)
    if not (np.isfinite(t) and t > 0):
        raise ValueError(f"temperature: expected a finite number > 0, got {temperature!r}")
    z = centralize(logits)
    scaled = z / (t * logit_pnorm(z, p)[:, None])
    return np.exp(np.max(log_softmax(scaled), axis=1))


@dataclass(frozen=True)
class PNormFit:
    """The p (``None``: the MSR fallback won) and temperature chosen on validation, with the
    validation AURC they reached."""

    p: float | None
    temperature: float
    val_aurc: float


def _residuals(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    return (np.argmax(logits, axis=1) != labels).astype(np.float64)


def _check_fit_inputs(logits: ArrayLike, labels: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    z = as_float_array(logits, "logits", 2)
    return z, as_label_array(labels, "labels", z.shape[0], z.shape[1])


def fit_maxlogit_pnorm(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    p_grid: Sequence[float] = P_GRID,
    msr_fallback: bool = True,
) -> PNormFit:
    """Choose p of MaxLogit-pNorm by the AURC on labelled held-out data (validation only).

    The authors' ``optimize.p`` (``post_hoc.py``): every p of ``p_grid`` in order, keeping a p
    only when it lowers the AURC strictly; with ``msr_fallback`` the MSR's AURC is the value
    to beat and ``p=None`` is returned when no p beats it (the caller then uses MSR).
    """
    z, y = _check_fit_inputs(logits, labels)
    if not p_grid:
        raise ValueError("p_grid: expected at least one value of p")
    r = _residuals(z, y)
    best_p: float | None = None
    best = aurc(r, np.exp(np.max(log_softmax(z), axis=1))) if msr_fallback else np.inf
    zc = z - z.mean(axis=1, keepdims=True)
    top = zc.max(axis=1)
    for p in p_grid:
        value = aurc(r, top / logit_pnorm(zc, p))
        if value < best:
            best, best_p = value, float(_check_p(p))
    if best_p is None and not msr_fallback:
        raise ValueError("no p of p_grid gave a finite AURC")
    return PNormFit(best_p, 1.0, float(best))


def fit_pnorm_softmax(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    p_grid: Sequence[float] = P_GRID,
    t_grid: Sequence[float] = T_GRID,
) -> PNormFit:
    """Choose p and T of p-NormSoftmax by the AURC on labelled held-out data (validation only).

    The authors' ``optimize.p_and_T`` with ``rescale_T=True`` (``post_hoc.py``): for every p
    of ``p_grid`` and t of ``t_grid`` (in that nesting order, a pair kept only when it lowers
    the AURC strictly) the temperature is ``T = t / mean(‖z − μ(z)‖_p)``, the mean over the
    held-out samples, so that the grid is on the scale of the normalised logits. Returns the
    chosen p and that T (to be used as is on other data).
    """
    z, y = _check_fit_inputs(logits, labels)
    if not p_grid or not t_grid:
        raise ValueError("p_grid and t_grid: expected at least one value each")
    r = _residuals(z, y)
    zc = z - z.mean(axis=1, keepdims=True)
    gaps = zc - zc.max(axis=1, keepdims=True)
    best, best_p, best_t = np.inf, None, 1.0
    for p in p_grid:
        norm = logit_pnorm(zc, p)
        unit = gaps / norm[:, None]
        scale = float(norm.mean())
        for t in t_grid:
            temperature = float(t) / scale
            # max softmax = 1 / Σ_k exp(gap_k / T) with gap_k = z_k − max(z) <= 0
            conf = 1.0 / np.exp(unit / temperature).sum(axis=1)
            value = aurc(r, conf)
            if value < best:
                best, best_p, best_t = value, float(_check_p(p)), temperature
    return PNormFit(best_p, best_t, float(best))
