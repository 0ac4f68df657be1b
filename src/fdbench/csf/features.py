"""Feature-based CSFs fitted on training features: Mahalanobis, deep kNN, TrustScore and ViM."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_float_array, as_label_array

__all__ = [
    "KNNFit",
    "MahalanobisFit",
    "TrustScoreFit",
    "ViMFit",
    "fit_knn",
    "fit_mahalanobis",
    "fit_trust_score",
    "fit_vim",
    "knn_score",
    "mahalanobis_score",
    "trust_score",
    "vim_score",
]

_BLOCK_ELEMENTS = 2**22
_NORM_EPS = 1e-10
_TRUST_MIN_DIST = 1e-12


def _blocks(n: int, columns: int) -> Iterator[slice]:
    step = max(1, _BLOCK_ELEMENTS // max(columns, 1))
    for start in range(0, n, step):
        yield slice(start, min(n, start + step))


def _squared_distances(a: np.ndarray, b: np.ndarray, b_sq: np.ndarray) -> np.ndarray:
    """``‖a_i - b_j‖²`` via ``‖a‖² - 2 a·b + ‖b‖²``, clipped at 0."""
    d = a @ b.T
    d *= -2.0
    d += np.einsum("ij,ij->i", a, a)[:, None]
    d += b_sq[None, :]
    return np.maximum(d, 0.0, out=d)


def _train_inputs(features: ArrayLike, labels: ArrayLike | None) -> tuple[np.ndarray, np.ndarray]:
    x = as_float_array(features, "train_features", 2)
    if labels is None:
        return x, np.zeros(x.shape[0], dtype=np.int64)
    y = as_label_array(labels, "train_labels", x.shape[0])
    if y.min() < 0:
        raise ValueError("train_labels must be non-negative class indices")
    return x, y


def _check_dim(features: ArrayLike, dim: int, name: str = "features") -> np.ndarray:
    x = as_float_array(features, name, 2)
    if x.shape[1] != dim:
        raise ValueError(f"{name} must have {dim} columns (as the fit), got {x.shape[1]}")
    return x


@dataclass(frozen=True)
class MahalanobisFit:
    """Class means and whitening map of a tied-covariance Gaussian model of training features.

    ``whitening`` (D × r) satisfies ``whitening @ whitening.T = pinv(Σ)``; ``center`` is the mean
    of the training features (subtracted first, for numerical accuracy).
    """

    classes: np.ndarray
    center: np.ndarray
    whitening: np.ndarray
    white_means: np.ndarray


def fit_mahalanobis(train_features: ArrayLike, train_labels: ArrayLike) -> MahalanobisFit:
    """Fit class means μ_c and the shared (tied) covariance Σ = 1/M Σ_i (x_i - μ_{y_i})(...)ᵀ.

    Lee et al., "A simple unified framework for detecting out-of-distribution samples and
    adversarial attacks", NeurIPS 2018. Σ is pseudo-inverted through its eigendecomposition
    (eigenvalues below ``D · eps · λ_max`` dropped, as ``numpy.linalg.pinv``).
    """
    x, y = _train_inputs(train_features, train_labels)
    classes = np.unique(y)
    center = x.mean(axis=0)
    xc = x - center
    means = np.stack([xc[y == c].mean(axis=0) for c in classes])
    index = np.searchsorted(classes, y)
    within = xc - means[index]
    cov = within.T @ within / x.shape[0]
    eigvals, eigvecs = np.linalg.eigh(cov)
    keep = eigvals > max(eigvals.max(), 0.0) * x.shape[1] * np.finfo(np.float64).eps
    if not keep.any():
        raise ValueError("train_features have zero within-class covariance")
    whitening = eigvecs[:, keep] / np.sqrt(eigvals[keep])
    return MahalanobisFit(classes, center, whitening, means @ whitening)


def mahalanobis_score(features: ArrayLike, fit: MahalanobisFit) -> np.ndarray:
    """Negated minimum squared Mahalanobis distance, ``-min_c (x - μ_c)ᵀ Σ⁺ (x - μ_c)``.

    Lee et al., NeurIPS 2018 (confidence score M(x), without input preprocessing); the variant
    of Fort et al., "Exploring the limits of out-of-distribution detection", NeurIPS 2021.
    """
    x = _check_dim(features, fit.center.shape[0])
    out = np.empty(x.shape[0])
    m_sq = np.einsum("ij,ij->i", fit.white_means, fit.white_means)
    for rows in _blocks(x.shape[0], max(fit.whitening.shape[1], len(fit.classes))):
        white = (x[rows] - fit.center) @ fit.whitening
        out[rows] = -_squared_distances(white, fit.white_means, m_sq).min(axis=1)
    return out


@dataclass(frozen=True)
class KNNFit:
    """L2-normalised training features for the deep k-nearest-neighbour score."""

    normalized: np.ndarray


def _normalize(x: np.ndarray) -> np.ndarray:
    return x / (np.linalg.norm(x, axis=1, keepdims=True) + _NORM_EPS)


def fit_knn(train_features: ArrayLike) -> KNNFit:
    """Store the L2-normalised training features ``x / (‖x‖ + 1e-10)`` (Sun et al., 2022)."""
    x, _ = _train_inputs(train_features, None)
    return KNNFit(_normalize(x))


def knn_score(features: ArrayLike, fit: KNNFit, k: int = 50) -> np.ndarray:
    """Negated distance to the k-th nearest normalised training feature (k = 50 by default).

    Sun et al., "Out-of-distribution detection with deep nearest neighbors", ICML 2022. Both
    sides are L2-normalised, so ``‖a - b‖ = sqrt(2 - 2 a·b)``; computed with blocked matrix
    products. ``k`` is capped at the number of training samples.
    """
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive int, got {k!r}")
    train = fit.normalized
    x = _normalize(_check_dim(features, train.shape[1]))
    kk = int(min(k, train.shape[0]))
    out = np.empty(x.shape[0])
    kth = train.shape[0] - kk
    for rows in _blocks(x.shape[0], train.shape[0]):
        sim = x[rows] @ train.T
        sim.partition(kth, axis=1)
        out[rows] = -np.sqrt(np.maximum(2.0 - 2.0 * sim[:, kth], 0.0))
    return out


@dataclass(frozen=True)
class TrustScoreFit:
    """Training features sorted by class, with the class boundaries, for TrustScore."""

    classes: np.ndarray
    features: np.ndarray
    sq_norms: np.ndarray
    starts: np.ndarray


def _high_density(x: np.ndarray, alpha: float, k: int) -> np.ndarray:
    """Mask of the α-high-density set: points whose k-NN radius is within the (1-α) quantile."""
    from scipy.spatial import cKDTree

    radii = cKDTree(x).query(x, k=min(k, x.shape[0]))[0]
    radii = radii.reshape(x.shape[0], -1)[:, -1]
    return radii <= np.percentile(radii, (1.0 - alpha) * 100.0)


def fit_trust_score(
    train_features: ArrayLike, train_labels: ArrayLike, *, alpha: float = 0.0, k: int = 10
) -> TrustScoreFit:
    """Group the training features by class, optionally keeping each class's α-high-density set.

    Jiang et al., NeurIPS 2018, Algorithm 1: for each class c the points whose k-NN radius
    r_k(x) (distance to the k-th nearest point of the class, x itself counted first) exceeds
    the (1-α) quantile of the class's radii are removed. ``alpha = 0`` (default, as in the
    authors' reference code) keeps every point; a class with fewer than k points uses all of
    them as neighbours.
    """
    if not isinstance(alpha, (int, float, np.floating)) or not 0.0 <= alpha < 1.0:
        raise ValueError(f"alpha must be a float in [0, 1), got {alpha!r}")
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive int, got {k!r}")
    x, y = _train_inputs(train_features, train_labels)
    if alpha > 0:
        keep = np.zeros(y.shape[0], dtype=bool)
        for c in np.unique(y):
            members = np.flatnonzero(y == c)
            keep[members] = _high_density(x[members], float(alpha), int(k))
        x, y = x[keep], y[keep]
    order = np.argsort(y, kind="stable")
    classes, starts = np.unique(y[order], return_index=True)
    if classes.size < 2:
        raise ValueError("TrustScore needs training samples of at least two classes")
    sorted_x = x[order]
    return TrustScoreFit(classes, sorted_x, np.einsum("ij,ij->i", sorted_x, sorted_x), starts)


def trust_score(features: ArrayLike, predictions: ArrayLike, fit: TrustScoreFit) -> np.ndarray:
    """TrustScore: ``d(x, nearest other class) / (d(x, predicted class) + 1e-12)``.

    Jiang et al., "To trust or not to trust a classifier", NeurIPS 2018. d(x, c) is the
    Euclidean distance to the nearest training sample of class c kept by
    :func:`fit_trust_score` (all of them unless ``alpha > 0``), the paper's d(x, Ĥ_α(f_c)).
    (The authors' reference code queries the second nearest neighbour, to skip a training point
    itself; the paper's definition, the nearest, is used here.) A predicted class without
    training samples gets score 0.
    """
    x = _check_dim(features, fit.features.shape[1])
    pred = as_label_array(predictions, "predictions", x.shape[0])
    col = np.searchsorted(fit.classes, pred)
    col_clipped = np.minimum(col, fit.classes.size - 1)
    known = fit.classes[col_clipped] == pred
    out = np.zeros(x.shape[0])
    for rows in _blocks(x.shape[0], fit.features.shape[0]):
        sq = _squared_distances(x[rows], fit.features, fit.sq_norms)
        per_class = np.sqrt(np.minimum.reduceat(sq, fit.starts, axis=1))
        idx = np.arange(per_class.shape[0])
        block_col = col_clipped[rows]
        d_pred = per_class[idx, block_col]
        per_class[idx, block_col] = np.inf
        d_other = per_class.min(axis=1)
        out[rows] = np.where(known[rows], d_other / (d_pred + _TRUST_MIN_DIST), 0.0)
    return out


@dataclass(frozen=True)
class ViMFit:
    """Origin, residual-space basis and virtual-logit scale α of ViM."""

    origin: np.ndarray
    residual_basis: np.ndarray
    alpha: float


def _default_vim_dim(n_features: int) -> int:
    if n_features >= 2048:
        return 1000
    if n_features >= 768:
        return 512
    return max(1, n_features // 2)


def fit_vim(
    train_features: ArrayLike,
    fc_weight: ArrayLike,
    fc_bias: ArrayLike,
    *,
    dim: int | None = None,
) -> ViMFit:
    """Fit ViM's principal subspace and α from training features and the last linear layer.

    Wang et al., "ViM: Out-of-distribution with virtual-logit matching", CVPR 2022. Origin
    ``u = -pinv(W) b``; the principal subspace P is spanned by the top ``dim`` eigenvectors of
    ``1/M Σ (x - u)(x - u)ᵀ`` (default ``dim``: 1000 for D >= 2048, 512 for D >= 768, else D/2,
    following the paper's choices); α = mean_i max_c z_ic / mean_i ‖(x_i - u)^{P⊥}‖ over the
    training set, with z = x Wᵀ + b.
    """
    x, _ = _train_inputs(train_features, None)
    w = as_float_array(fc_weight, "fc_weight", 2)
    b = as_float_array(fc_bias, "fc_bias", 1)
    if w.shape[1] != x.shape[1] or b.shape[0] != w.shape[0]:
        raise ValueError(
            f"fc_weight must be K × {x.shape[1]} and fc_bias K, got {w.shape} and {b.shape}"
        )
    d = x.shape[1]
    dim = _default_vim_dim(d) if dim is None else dim
    if not isinstance(dim, (int, np.integer)) or not 1 <= dim < d:
        raise ValueError(f"dim must be an int in [1, {d}), got {dim!r}")
    origin = -np.linalg.pinv(w) @ b
    xc = x - origin
    eigvals, eigvecs = np.linalg.eigh(xc.T @ xc / x.shape[0])
    order = np.argsort(eigvals)[::-1]
    residual_basis = np.ascontiguousarray(eigvecs[:, order[dim:]])
    virtual = np.linalg.norm(xc @ residual_basis, axis=1)
    mean_virtual = virtual.mean()
    if mean_virtual <= 0:
        raise ValueError("train_features have no component outside the principal subspace")
    alpha = float(np.max(x @ w.T + b, axis=1).mean() / mean_virtual)
    return ViMFit(origin, residual_basis, alpha)


def vim_score(features: ArrayLike, logits: ArrayLike, fit: ViMFit) -> np.ndarray:
    """ViM score ``logsumexp_c z_c - α ‖(x - u)^{P⊥}‖`` (energy minus the virtual logit).

    Wang et al., CVPR 2022 (as in their reference code ``-vlogit + energy``).
    """
    from scipy.special import logsumexp

    x = _check_dim(features, fit.origin.shape[0])
    z = as_float_array(logits, "logits", 2)
    if z.shape[0] != x.shape[0]:
        raise ValueError(f"logits must have {x.shape[0]} rows (as features), got {z.shape[0]}")
    virtual = np.linalg.norm((x - fit.origin) @ fit.residual_basis, axis=1)
    return logsumexp(z, axis=1) - fit.alpha * virtual
