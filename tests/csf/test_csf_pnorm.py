"""MaxLogit-pNorm and p-NormSoftmax (Cattelan & Silva, UAI 2024) on hand-computed logits."""

from __future__ import annotations

import numpy as np
import pytest

from fdbench.csf import OPT_IN, REGISTRY
from fdbench.csf.pnorm import (
    fit_maxlogit_pnorm,
    fit_pnorm_softmax,
    logit_pnorm,
    maxlogit_pnorm,
    pnorm_softmax,
)
from fdbench.metrics import aurc

# row 0: mean 2, centralised [-1, 0, 1]; row 1: mean 1, centralised [-1, -1, 3, -1] (padded)
LOGITS = np.array([[1.0, 2.0, 3.0, 2.0], [0.0, 0.0, 4.0, 0.0]])


@pytest.mark.parametrize(
    ("p", "expected"),
    [
        # row 0 centralised: [-1, 0, 1, 0]; row 1: [-1, -1, 3, -1]
        (2, [1 / np.sqrt(2), 3 / np.sqrt(12)]),
        (1, [1 / 2, 3 / 6]),
        (0, [1 / 2, 3 / 4]),  # p = 0 counts the non-zero entries (torch's vector_norm)
        (np.inf, [1.0, 1.0]),
        (3, [1 / 2 ** (1 / 3), 3 / 30 ** (1 / 3)]),
    ],
)
def test_maxlogit_pnorm_hand_computed(p, expected):
    np.testing.assert_allclose(maxlogit_pnorm(LOGITS, p), expected, rtol=1e-15)


def test_maxlogit_pnorm_ignores_shift_and_scale_of_the_logits():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(50, 7))
    base = maxlogit_pnorm(z, 2)
    np.testing.assert_allclose(maxlogit_pnorm(3.5 * z + 11.0, 2), base, rtol=1e-12)


def test_pnorm_softmax_hand_computed():
    # row 0, p = 1: centralised [-1, 0, 1, 0] / (T · 2) with T = 0.5 -> [-1, 0, 1, 0]
    expected = np.e / (np.exp(-1) + 1 + np.e + 1)
    assert pnorm_softmax(LOGITS[:1], 1, 0.5)[0] == pytest.approx(expected, rel=1e-15)


def test_logit_pnorm_and_bad_inputs():
    np.testing.assert_allclose(logit_pnorm(np.array([[3.0, -4.0]]), 2), [5.0])
    with pytest.raises(ValueError, match="p"):
        maxlogit_pnorm(LOGITS, -1)
    with pytest.raises(ValueError, match="temperature"):
        pnorm_softmax(LOGITS, 2, 0.0)
    with pytest.raises(ValueError, match="logits"):
        maxlogit_pnorm(np.array([1.0, 2.0]), 2)


def _data(seed: int, n: int = 300, k: int = 6):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, k, n)
    z = rng.normal(size=(n, k)) * rng.uniform(0.5, 4.0, (n, 1))
    z[np.arange(n), labels] += rng.normal(1.5, 1.0, n)
    return z, labels


def test_fit_maxlogit_pnorm_is_the_grid_minimum_on_validation():
    z, y = _data(1)
    residuals = (z.argmax(1) != y).astype(float)
    fit = fit_maxlogit_pnorm(z, y, msr_fallback=False)
    values = {p: aurc(residuals, maxlogit_pnorm(z, p)) for p in range(10)}
    best = min(values, key=lambda p: (values[p], p))
    assert fit.p == best
    assert fit.val_aurc == values[best]


def test_fit_maxlogit_pnorm_falls_back_to_msr():
    # two classes: every centralised row is ±(d/2, −d/2), so MaxLogit-pNorm is constant
    # (one tie group) for p > 0, and MSR, which ranks by the margin, is strictly better
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 200)
    z = rng.normal(size=(200, 2))
    z[np.arange(200), y] += 1.0
    fit = fit_maxlogit_pnorm(z, y, p_grid=(1, 2, 3))
    assert fit.p is None


def test_fit_pnorm_softmax_brute_force_on_small_grid():
    z, y = _data(2)
    residuals = (z.argmax(1) != y).astype(float)
    t_grid = (0.05, 0.2, 0.7, 1.5)
    fit = fit_pnorm_softmax(z, y, p_grid=(0, 1, 2), t_grid=t_grid)
    zc = z - z.mean(1, keepdims=True)
    best = None
    for p in (0, 1, 2):
        scale = logit_pnorm(zc, p).mean()
        for t in t_grid:
            value = aurc(residuals, pnorm_softmax(z, p, t / scale))
            if best is None or value < best[0]:
                best = (value, p, t / scale)
    assert fit.p == best[1]
    assert fit.temperature == pytest.approx(best[2], rel=1e-12)
    assert fit.val_aurc == pytest.approx(best[0], rel=1e-9)


def test_pnorm_csfs_are_registered_opt_in():
    assert set(OPT_IN) == {"MaxLogit-pNorm", "pNormSoftmax"}
    assert not set(OPT_IN) & set(REGISTRY)
    assert OPT_IN["MaxLogit-pNorm"].function is maxlogit_pnorm
