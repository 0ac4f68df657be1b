"""Every metric of ``evaluate_all`` is invariant to multiplying all sample weights by 10^k."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdbench import metrics as M
from fdbench.metrics._validation import rescale_weights

#: Operating-point metrics and the level at which they compare a ratio of weighted sums.
#: They are step functions of the weights: where a ratio equals its level exactly, the
#: rounding of w * 10^k (at most half an ulp per weight) may flip the comparison.
THRESHOLD_LEVELS = {
    "risk@95cov": ("coverage", 0.95),
    "selective_risk@95cov": ("coverage", 0.95),
    "fpr@95tpr": ("tpr", 0.95),
    "fpr@80tpr": ("tpr", 0.80),
    "coverage@risk5": ("risk", 0.05),
}


@st.composite
def weighted_samples(draw):
    n = draw(st.integers(1, 30))
    binary = draw(st.booleans())
    if binary:
        r = draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n))
    else:
        r = draw(st.lists(st.floats(0, 1, width=32), min_size=n, max_size=n))
    c = draw(
        st.lists(
            st.one_of(st.sampled_from([0.1, 0.5, 0.9]), st.floats(0, 1, width=32)),
            min_size=n,
            max_size=n,
        )
    )
    w = draw(st.lists(st.floats(1e-3, 1e3), min_size=n, max_size=n))
    labels = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    return np.array(r), np.array(c), np.array(w), np.array(labels)


def _ratios(r: np.ndarray, c: np.ndarray, w: np.ndarray) -> dict[str, np.ndarray]:
    """Coverage, TPR and selective risk at every distinct confidence threshold."""
    thresholds = np.unique(c)
    accepted = c[None, :] >= thresholds[:, None]
    weight = accepted @ w
    loss = accepted @ (w * r)
    ok = accepted @ (w * (1 - r))
    total_ok = float(np.sum(w * (1 - r)))
    return {
        "coverage": weight / w.sum(),
        "tpr": ok / total_ok if total_ok > 0 else np.array([]),
        "risk": loss / weight,
    }


def _near_level(r, c, w, key: str) -> bool:
    kind, level = THRESHOLD_LEVELS[key]
    values = _ratios(r, c, w)[kind]
    return bool(np.any(np.abs(values - level) <= 1e-9))


@settings(max_examples=200, deadline=None)
@given(weighted_samples(), st.integers(-300, 300), st.booleans())
def test_every_metric_is_invariant_to_scaling_the_weights_by_a_power_of_ten(data, k, logits):
    """Tolerance rtol 1e-9 (atol 1e-12 for values near 0): 10^k is not a power of two, so
    w * 10^k rounds each weight (relative error <= 2^-53) and the sums built from them round
    differently; the metrics are smooth in the weights, so the results agree to about 1e-15,
    not bit for bit (multiplying by a power of two, below, is bit-identical). An operating
    point whose coverage, TPR or risk ratio lies within 1e-9 of its level is excluded, because
    there the metric jumps and a rounding of the weights may legitimately move it."""
    r, c, w, labels = data
    z = np.stack([c, 1 - c, 0.5 * c], axis=1) if logits else None
    kwargs = {"labels": labels, "logits": z}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        base = M.evaluate_all(r, c, sample_weight=w, **kwargs)
        scaled = M.evaluate_all(r, c, sample_weight=w * 10.0**k, **kwargs)
    assert list(scaled) == list(base)
    for key, value in base.items():
        if key in THRESHOLD_LEVELS and _near_level(r, c, w, key):
            continue
        np.testing.assert_allclose(
            scaled[key], value, rtol=1e-9, atol=1e-12, equal_nan=True, err_msg=key
        )


@settings(max_examples=100, deadline=None)
@given(weighted_samples(), st.integers(80, 900), st.integers(80, 900), st.booleans())
def test_extreme_scales_give_the_same_bits(data, e1, e2, small):
    # weights beyond 2^±64 are divided by the largest: two powers of two there agree exactly
    r, c, w, labels = data
    sign = -1 if small else 1
    a = M.evaluate_all(r, c, sample_weight=np.ldexp(w, sign * e1), labels=labels)
    b = M.evaluate_all(r, c, sample_weight=np.ldexp(w, sign * e2), labels=labels)
    for key, value in a.items():
        np.testing.assert_equal(b[key], value, err_msg=key)


def test_ordinary_weights_are_used_as_given():
    w = np.array([0.3, 1.0, 7.5, 2.0**60])
    assert rescale_weights(w) is w
    np.testing.assert_array_equal(rescale_weights(w * 2.0**10), w * 2.0**10 / (2.0**70))


@pytest.mark.parametrize("scale", [1e-200, 1e-300, 1e300, 1e308])
def test_the_reported_extremes(scale):
    # weights of 1e-200 made AUGRC NaN and e-AURC 9.6e195; 1e308 made every metric NaN
    # with a false "only one class" warning
    rng = np.random.default_rng(0)
    r = (rng.random(200) < 0.2).astype(float)
    c = rng.random(200)
    w = np.ones(200)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = M.evaluate_all(r, c, sample_weight=w * scale)
        eaurc = M.eaurc(r, c, sample_weight=w * scale)
    expected = M.evaluate_all(r, c)
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key
    assert eaurc == pytest.approx(expected["eaurc"], rel=1e-12, abs=1e-15)
    labels = (r == 0).astype(int)
    logits = np.stack([1 - c, c], axis=1)
    for fn in (M.nll, M.brier, M.balanced_accuracy):
        assert fn(labels, logits, sample_weight=w * scale) == pytest.approx(
            fn(labels, logits), rel=1e-12
        ), fn.__name__


@pytest.mark.parametrize("bad", [0.0, -1.0, np.inf, np.nan])
def test_weights_that_mean_nothing_are_still_refused(bad):
    w = np.full(5, 1e300)
    w[:] = bad if bad != 0.0 else 0.0
    with pytest.raises(ValueError, match="sample_weight"):
        M.evaluate_all(np.zeros(5), np.arange(5.0), sample_weight=w)
