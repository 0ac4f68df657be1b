"""Residual: the negated norm of a feature's component outside the principal subspace of the
validation features, centred at the origin of the logit space (Wang et al., CVPR 2022)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_array
from ._base import PostHocInputs, register_posthoc

__all__ = ["ResidualFit", "fit_residual", "principal_dim", "residual"]


@dataclass(frozen=True)
class ResidualFit:
    """The origin ``u = −W⁺ b`` and the basis (D, D − dim) of the discarded directions."""

    origin: np.ndarray
    null_space: np.ndarray


def fit_residual(features: ArrayLike, weight: ArrayLike, bias: ArrayLike, dim: int) -> ResidualFit:
    """Fit Residual on ``features``: ``u = −pinv(W) b``, the uncentred covariance
    ``(X − u)ᵀ(X − u)/N`` (sklearn's ``EmpiricalCovariance(assume_centered=True)``), and its
    eigenvectors beyond the ``dim`` largest eigenvalues."""
    x = as_float_array(features, "features", 2)
    w = as_float_array(weight, "weight", 2)
    b = as_float_array(bias, "bias", 1)
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or not 0 <= dim < x.shape[1]:
        raise ValueError(f"dim must be an int in [0, {x.shape[1]}), got {dim!r}")
    u = -np.linalg.pinv(w) @ b
    centred = x - u
    values, vectors = np.linalg.eigh(centred.T @ centred / x.shape[0])
    order = np.argsort(-values, kind="stable")
    return ResidualFit(u, np.ascontiguousarray(vectors[:, order[int(dim) :]]))


def residual(features: ArrayLike, fit: ResidualFit) -> np.ndarray:
    """Residual, ``−‖(h − u) P⊥‖``, the norm of the feature's part in the discarded
    directions (:func:`fit_residual`).

    Wang et al., "ViM: Out-Of-Distribution with Virtual-logit Matching", CVPR 2022, Sec. 3.2
    (the "Residual" baseline of Table 1); OpenOOD
    ``openood/postprocessors/residual_postprocessor.py``, which fits on the ID *validation*
    features (``id_loader_dict['val']``) with ``np.linalg.eig``; fdbench uses ``eigh`` (the
    covariance is symmetric: the same subspace, real-valued).
    """
    h = as_float_array(features, "features", 2)
    return -np.linalg.norm((h - fit.origin) @ fit.null_space, axis=1)


def principal_dim(n_features: int, fraction: float) -> int:
    """The principal dimension ``round(fraction · D)`` (the grid is declared in fractions of
    D so that one grid fits every network)."""
    return min(n_features - 1, round(float(fraction) * n_features))


@register_posthoc(
    "Residual",
    reads=("features", "last_layer", "val"),
    grid={"dim_fraction": (0.25, 0.5, 0.75)},
    source="Wang et al. CVPR 2022 Sec. 3.2; OpenOOD residual_postprocessor.py",
    colour="#999933",
)
def _residual(inputs: PostHocInputs, split: str, *, dim_fraction: float) -> np.ndarray:
    def make() -> ResidualFit:
        x = inputs.features("val")
        weight, bias = inputs.last_layer()
        return fit_residual(x, weight, bias, principal_dim(x.shape[1], dim_fraction))

    return residual(inputs.features(split), inputs.fit(("residual", dim_fraction), make))
