"""SIRC: the softmax response combined with a feature-based score that separates the
distribution's tail (Xia & Bouganis, ACCV 2022)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_array
from ._base import PostHocInputs, register_posthoc
from .residual import ResidualFit, fit_residual, principal_dim, residual

__all__ = ["log_one_minus_msr", "sirc", "sirc_parameters"]


def log_one_minus_msr(logits: ArrayLike) -> np.ndarray:
    """``log(1 − max_c softmax(z)_c)``, computed as ``logsumexp_{c ≠ ĉ} z_c − logsumexp_c z_c``
    (finite where the softmax response rounds to 1)."""
    from scipy.special import logsumexp

    z = as_float_array(logits, "logits", 2)
    if z.shape[1] < 2:
        raise ValueError("logits must have at least two classes")
    others = z.copy()
    others[np.arange(z.shape[0]), np.argmax(z, axis=1)] = -np.inf
    return logsumexp(others, axis=1) - logsumexp(z, axis=1)


def sirc_parameters(secondary: ArrayLike) -> tuple[float, float]:
    """``a = mean − 3·std`` and ``b = 1 / (std + 1e-12)`` of the secondary score on
    in-distribution data (the authors' ``get_sirc_params``)."""
    s = as_float_array(secondary, "secondary", 1)
    mean, std = float(s.mean()), float(s.std())
    return mean - 3.0 * std, 1.0 / (std + 1e-12)


def sirc(logits: ArrayLike, secondary: ArrayLike, a: float, b: float) -> np.ndarray:
    """SIRC with the softmax response, ``−log(1 − MSR) − log(1 + exp(−b (S₂ − a)))``: the log
    of ``−(1 − MSR)(1 + e^{−b(S₂ − a)})``'s negation, the same ranking.

    Xia & Bouganis, "Augmenting Softmax Information for Selective Classification with
    Out-of-Distribution Data", ACCV 2022, Eq. (5); the authors' code
    (github.com/Guoxoug/SIRC, ``sirc``: ``-(s1_max - s1).log() - logaddexp(0, -b (s2 - a))``,
    ``a, b`` from ID training data).
    """
    s2 = as_float_array(secondary, "secondary", 1)
    soft = log_one_minus_msr(logits)
    if s2.shape[0] != soft.shape[0]:
        raise ValueError(f"secondary must have {soft.shape[0]} entries, got {s2.shape}")
    return -soft - np.logaddexp(0.0, -float(b) * (s2 - float(a)))


def _l1(features: np.ndarray) -> np.ndarray:
    return np.abs(features).sum(axis=1)


@register_posthoc(
    "SIRC-MSR-L1",
    reads=("logits", "features", "train"),
    source="Xia & Bouganis ACCV 2022 Sec. 4 (S2 = ‖h‖₁); github.com/Guoxoug/SIRC",
    colour="#0077BB",
)
def _sirc_l1(inputs: PostHocInputs, split: str) -> np.ndarray:
    a, b = inputs.fit("sirc_l1", lambda: sirc_parameters(_l1(inputs.features("train"))))
    return sirc(inputs.logits(split), _l1(inputs.features(split)), a, b)


@register_posthoc(
    "SIRC-MSR-Res",
    reads=("logits", "features", "last_layer", "train"),
    grid={"dim_fraction": (0.25, 0.5, 0.75)},
    source="Xia & Bouganis ACCV 2022 Sec. 4 (S2 = Residual); github.com/Guoxoug/SIRC",
    colour="#33BBEE",
)
def _sirc_res(inputs: PostHocInputs, split: str, *, dim_fraction: float) -> np.ndarray:
    def make() -> tuple[ResidualFit, float, float]:
        x = inputs.features("train")
        weight, bias = inputs.last_layer()
        fit = fit_residual(x, weight, bias, principal_dim(x.shape[1], dim_fraction))
        return (fit, *sirc_parameters(residual(x, fit)))

    fit, a, b = inputs.fit(("sirc_res", dim_fraction), make)
    return sirc(inputs.logits(split), residual(inputs.features(split), fit), a, b)
