"""ECE, MCE and reliability bins against the brute-force binning of METRICS.md."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdbench import metrics as M

from . import metrics_brute as brute


@st.composite
def calibration_samples(draw):
    n = draw(st.integers(1, 30))
    r = np.array(draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n)))
    edge_values = st.sampled_from([0.0, 1.0, 1 / 15, 2 / 15, 7 / 15, 0.5, 14 / 15])
    values = st.one_of(st.floats(0, 1, allow_nan=False), edge_values)
    c = np.array(draw(st.lists(values, min_size=n, max_size=n)))
    n_bins = draw(st.sampled_from([1, 10, 15]))
    weighted = draw(st.booleans())
    w = (
        np.array(draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)), float)
        if weighted
        else None
    )
    return r, c, n_bins, w


@settings(max_examples=80, deadline=None)
@given(calibration_samples())
def test_ece_mce_match_brute_force(data):
    r, c, n_bins, w = data
    ece, mce = brute.ece_mce(r, c, n_bins, w)
    assert M.ece(r, c, n_bins=n_bins, sample_weight=w) == pytest.approx(ece, abs=1e-12)
    assert M.mce(r, c, n_bins=n_bins, sample_weight=w) == pytest.approx(mce, abs=1e-12)


@pytest.mark.parametrize("n_bins", [1, 3, 7, 10, 15, 20, 49, 100])
def test_confidences_on_bin_edges_go_to_the_lower_bin(n_bins):
    # (j-1)/M < c <= j/M with the edges j/M as floats; c*M can round across an integer.
    edges = np.arange(n_bins + 1) / n_bins
    c = np.concatenate([edges, np.nextafter(edges, 2.0), np.nextafter(edges, -1.0)])
    c = np.clip(c, 0.0, 1.0)
    r = (np.arange(c.size) % 3 == 0).astype(float)
    ece, mce = brute.ece_mce(r, c, n_bins)
    assert M.ece(r, c, n_bins=n_bins) == pytest.approx(ece, abs=1e-12)
    assert M.mce(r, c, n_bins=n_bins) == pytest.approx(mce, abs=1e-12)
    bins = M.reliability_bins(r, c, n_bins=n_bins)
    expected = [
        sum(1 for x in c if edges[j] < x <= edges[j + 1] or (j == 0 and x == 0))
        for j in range(n_bins)
    ]
    np.testing.assert_array_equal(bins.weights, expected)


def test_bin_boundaries_are_right_closed():
    bins = M.reliability_bins([0.0, 0.0, 1.0], [0.0, 0.5, 0.5 + 1e-12], n_bins=2)
    np.testing.assert_array_equal(bins.weights, [2.0, 1.0])
    np.testing.assert_allclose(bins.confidence, [0.25, 0.5 + 1e-12])
    np.testing.assert_array_equal(bins.accuracy, [1.0, 0.0])


def test_perfectly_calibrated_bins_give_zero():
    r = np.array([0.0, 1.0, 0.0, 0.0])
    c = np.full(4, 0.75)
    assert M.ece(r, c) == 0.0 and M.mce(r, c) == 0.0


def test_rejects_confidence_outside_unit_interval_and_bad_bins():
    with pytest.raises(ValueError, match="confidence"):
        M.ece([0.0, 1.0], [0.5, 1.5])
    with pytest.raises(ValueError, match="n_bins"):
        M.ece([0.0, 1.0], [0.5, 0.5], n_bins=0)
    with pytest.raises(ValueError, match="residuals"):
        M.mce([0.5, 1.0], [0.5, 0.5])
