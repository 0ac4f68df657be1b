"""Tests of the feature-based CSFs against brute-force and SciPy computations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import mahalanobis
from scipy.special import logsumexp
from sklearn.metrics import roc_auc_score

from fdbench.csf import (
    fit_knn,
    fit_mahalanobis,
    fit_trust_score,
    fit_vim,
    knn_score,
    mahalanobis_score,
    trust_score,
    vim_score,
)


def _gaussian_classes(rng, n_per_class=200, d=5, k=3):
    means = rng.normal(scale=4.0, size=(k, d))
    a = rng.normal(size=(d, d))
    cov = a @ a.T / d + 0.2 * np.eye(d)
    labels = np.repeat(np.arange(k), n_per_class)
    x = means[labels] + rng.multivariate_normal(np.zeros(d), cov, size=labels.size)
    return x, labels, means, cov


def test_mahalanobis_matches_scipy():
    rng = np.random.default_rng(0)
    x, y, _, _ = _gaussian_classes(rng, n_per_class=40)
    test = rng.normal(scale=3.0, size=(15, x.shape[1]))
    fit = fit_mahalanobis(x, y)
    means = [x[y == c].mean(axis=0) for c in range(3)]
    within = np.concatenate([x[y == c] - means[c] for c in range(3)])
    inv_cov = np.linalg.inv(within.T @ within / len(x))
    expected = [-min(mahalanobis(t, m, inv_cov) ** 2 for m in means) for t in test]
    np.testing.assert_allclose(mahalanobis_score(test, fit), expected, rtol=1e-9)


def test_mahalanobis_separates_shifted_cluster():
    rng = np.random.default_rng(1)
    x, y, means, cov = _gaussian_classes(rng)
    fit = fit_mahalanobis(x, y)
    inliers = means[rng.integers(0, 3, 300)] + rng.multivariate_normal(np.zeros(5), cov, 300)
    shifted = means.mean(axis=0) + 12.0 + rng.multivariate_normal(np.zeros(5), cov, 300)
    scores = mahalanobis_score(np.concatenate([inliers, shifted]), fit)
    is_inlier = np.r_[np.ones(300), np.zeros(300)]
    assert roc_auc_score(is_inlier, scores) > 0.95


def test_mahalanobis_singular_covariance_uses_pseudo_inverse():
    rng = np.random.default_rng(2)
    x, y, _, _ = _gaussian_classes(rng, n_per_class=30, d=3)
    x = np.column_stack([x, x[:, 0]])  # duplicated column: rank-deficient covariance
    scores = mahalanobis_score(x[:5], fit_mahalanobis(x, y))
    assert np.all(np.isfinite(scores)) and np.all(scores <= 0)


def _normalize(v):
    return v / (np.linalg.norm(v, axis=1, keepdims=True) + 1e-10)


def test_knn_matches_brute_force(monkeypatch):
    rng = np.random.default_rng(3)
    train = rng.normal(size=(120, 6))
    test = rng.normal(size=(17, 6)) * 2
    fit = fit_knn(train)
    a, b = _normalize(test), _normalize(train)
    dists = np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(-1))
    for k in (1, 5, 50):
        expected = -np.sort(dists, axis=1)[:, k - 1]
        np.testing.assert_allclose(knn_score(test, fit, k=k), expected, rtol=1e-7, atol=1e-7)
    monkeypatch.setattr("fdbench.csf.features._BLOCK_ELEMENTS", 200)
    np.testing.assert_allclose(knn_score(test, fit, k=5), -np.sort(dists, axis=1)[:, 4], atol=1e-7)
    assert knn_score(test, fit, k=1000).shape == (17,)
    with pytest.raises(ValueError, match="k must be a positive int"):
        knn_score(test, fit, k=0)


def test_trust_score_matches_brute_force(monkeypatch):
    rng = np.random.default_rng(4)
    train = rng.normal(size=(60, 3))
    labels = rng.integers(0, 4, 60)
    labels[labels == 2] = 3  # class 2 has no training samples
    test = rng.normal(size=(25, 3))
    pred = rng.integers(0, 4, 25)
    expected = []
    for t, p in zip(test, pred, strict=True):
        d = {c: np.min(np.linalg.norm(train[labels == c] - t, axis=1)) for c in (0, 1, 3)}
        if p not in d:
            expected.append(0.0)
            continue
        other = min(v for c, v in d.items() if c != p)
        expected.append(other / (d[p] + 1e-12))
    fit = fit_trust_score(train, labels)
    np.testing.assert_allclose(trust_score(test, pred, fit), expected, rtol=1e-9)
    monkeypatch.setattr("fdbench.csf.features._BLOCK_ELEMENTS", 100)
    np.testing.assert_allclose(trust_score(test, pred, fit), expected, rtol=1e-9)
    with pytest.raises(ValueError, match="at least two classes"):
        fit_trust_score(train, np.zeros(60, dtype=np.int64))


def test_trust_score_alpha_filtering_matches_brute_force():
    rng = np.random.default_rng(7)
    train = np.concatenate([rng.normal(size=(40, 2)), rng.normal(size=(40, 2)) + 3.0])
    labels = np.repeat([0, 1], 40)
    train[[3, 45]] += 25.0  # one far outlier per class, dropped by the filter
    test = rng.normal(size=(30, 2)) * 3 + 1.5
    pred = rng.integers(0, 2, 30)
    alpha, k = 0.1, 10

    def high_density(points):
        dists = np.linalg.norm(points[:, None] - points[None], axis=-1)
        radius = np.sort(dists, axis=1)[:, k - 1]  # the point itself is its first neighbour
        return points[radius <= np.percentile(radius, (1 - alpha) * 100)]

    kept = {c: high_density(train[labels == c]) for c in (0, 1)}
    assert len(kept[0]) == 36 and not np.any(np.abs(kept[0]).max(axis=1) > 20)
    d = np.stack([np.linalg.norm(test[:, None] - kept[c][None], axis=-1).min(1) for c in (0, 1)])
    expected = d[1 - pred, np.arange(30)] / (d[pred, np.arange(30)] + 1e-12)
    fit = fit_trust_score(train, labels, alpha=alpha, k=k)
    np.testing.assert_allclose(trust_score(test, pred, fit), expected, rtol=1e-9)
    plain = trust_score(test, pred, fit_trust_score(train, labels))
    assert not np.allclose(plain, expected)
    with pytest.raises(ValueError, match="alpha must be"):
        fit_trust_score(train, labels, alpha=1.0)


def test_vim_matches_svd_computation():
    rng = np.random.default_rng(5)
    d, k, dim = 10, 4, 6
    train = rng.normal(size=(300, d)) @ rng.normal(size=(d, d))
    w, b = rng.normal(size=(k, d)), rng.normal(size=k)
    test = rng.normal(size=(20, d)) * 3
    test_logits = test @ w.T + b
    fit = fit_vim(train, w, b, dim=dim)
    u = -np.linalg.pinv(w) @ b
    _, _, vt = np.linalg.svd(train - u, full_matrices=False)
    principal = vt[:dim].T

    def residual_norm(x):
        c = x - u
        return np.linalg.norm(c - c @ principal @ principal.T, axis=1)

    alpha = (train @ w.T + b).max(axis=1).mean() / residual_norm(train).mean()
    expected = logsumexp(test_logits, axis=1) - alpha * residual_norm(test)
    assert fit.alpha == pytest.approx(alpha, rel=1e-9)
    np.testing.assert_allclose(vim_score(test, test_logits, fit), expected, rtol=1e-9)
    with pytest.raises(ValueError, match="dim must be"):
        fit_vim(train, w, b, dim=d)


def test_feature_dimension_is_checked():
    rng = np.random.default_rng(6)
    fit = fit_knn(rng.normal(size=(10, 4)))
    with pytest.raises(ValueError, match="features must have 4 columns"):
        knn_score(rng.normal(size=(3, 5)), fit)
