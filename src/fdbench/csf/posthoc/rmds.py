"""RMDS: the relative Mahalanobis distance, class-conditional minus background Mahalanobis
distance (Ren et al., 2021)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_array, as_label_array
from ._base import PostHocInputs, register_posthoc

__all__ = ["RMDSFit", "fit_rmds", "rmds"]


@dataclass(frozen=True)
class RMDSFit:
    """Class means (K, D) with their tied precision, and the background mean and precision."""

    means: np.ndarray
    precision: np.ndarray
    background_mean: np.ndarray
    background_precision: np.ndarray


def _precision(centred: np.ndarray) -> np.ndarray:
    """Pseudo-inverse of sklearn's ``EmpiricalCovariance(assume_centered=False)`` covariance."""
    x = centred - centred.mean(axis=0)
    return np.linalg.pinv(x.T @ x / x.shape[0], hermitian=True)


def fit_rmds(features: ArrayLike, labels: ArrayLike, n_classes: int) -> RMDSFit:
    """Class means and tied covariance of the class-centred ``features``; the background
    Gaussian of all features (OpenOOD's ``setup``, on the training split). A class without a
    sample in ``labels`` (a subsample of a long-tailed training set) gets no Gaussian, so the
    maximum of :func:`rmds` runs over the classes present, as fdbench's Mahalanobis does
    (OpenOOD's mean of an empty class is NaN)."""
    x = as_float_array(features, "features", 2)
    y = as_label_array(labels, "labels", x.shape[0], n_classes)
    present = np.unique(y)
    if present.size == 0:
        raise ValueError("labels must hold at least one sample")
    means = np.stack([x[y == c].mean(axis=0) for c in present])
    within = x - means[np.searchsorted(present, y)]
    background = x.mean(axis=0)
    return RMDSFit(means, _precision(within), background, _precision(x - background))


def rmds(features: ArrayLike, fit: RMDSFit) -> np.ndarray:
    """RMDS, ``max_c −[(h − μ_c)ᵀ Σ⁻¹ (h − μ_c) − (h − μ_0)ᵀ Σ_0⁻¹ (h − μ_0)]``.

    Ren et al., "A Simple Fix to Mahalanobis Distance for Improving Near-OOD Detection",
    arXiv 2106.09022, Sec. 3 (Eq. 4); OpenOOD ``openood/postprocessors/rmds_postprocessor.py``.
    """
    h = as_float_array(features, "features", 2)
    d0 = h - fit.background_mean
    background = np.einsum("nd,de,ne->n", d0, fit.background_precision, d0)
    diff = h[:, None, :] - fit.means[None, :, :]
    per_class = np.einsum("nkd,de,nke->nk", diff, fit.precision, diff)
    return np.max(-(per_class - background[:, None]), axis=1)


@register_posthoc(
    "RMDS",
    reads=("features", "train"),
    source="Ren et al. 2021 Sec. 3; OpenOOD rmds_postprocessor.py",
    colour="#6699CC",
)
def _rmds(inputs: PostHocInputs, split: str) -> np.ndarray:
    def make() -> RMDSFit:
        labels = inputs.labels("train")
        known = labels >= 0
        k = inputs.logits("train").shape[1]
        return fit_rmds(inputs.features("train")[known], labels[known], k)

    return rmds(inputs.features(split), inputs.fit("rmds", make))
