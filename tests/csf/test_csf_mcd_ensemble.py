"""Tests of MC-dropout and ensemble CSFs against per-sample loops."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fdbench.csf import ens_ee, ens_mi, ens_msr, ens_pe, mcd_ee, mcd_mi, mcd_mls, mcd_msr, mcd_pe


def _softmax(row):
    m = max(row)
    e = [math.exp(v - m) for v in row]
    return [v / sum(e) for v in e]


def _entropy(p):
    return -sum(q * math.log(q) for q in p if q > 0)


def _naive(z):
    """Per-sample loops over an N × S × K array: (MSR, PE, EE, MI, MLS) of the MC mean."""
    out = []
    for sample in z:
        probs = [_softmax(s) for s in sample]
        mean = [sum(p[c] for p in probs) / len(probs) for c in range(len(probs[0]))]
        pe_ = _entropy(mean)
        ee = sum(_entropy(p) for p in probs) / len(probs)
        mean_logit = [sum(s[c] for s in sample) / len(sample) for c in range(len(sample[0]))]
        out.append((max(mean), -pe_, -ee, -(pe_ - ee), max(mean_logit)))
    return np.array(out)


MCD = np.array(
    [
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
        [[3.0, 0.0, -1.0], [-1.0, 0.0, 3.0]],
        [[5.0, 1.0, 0.0], [4.0, 1.5, 0.2]],
    ]
)


def test_mcd_hand():
    expected = _naive(MCD)
    for i, f in enumerate((mcd_msr, mcd_pe, mcd_ee, mcd_mi, mcd_mls)):
        np.testing.assert_allclose(f(MCD), expected[:, i], rtol=1e-12, atol=1e-15)
    # identical samples carry no epistemic uncertainty; disagreeing ones do
    assert mcd_mi(MCD)[0] == pytest.approx(0.0, abs=1e-15)
    assert mcd_mi(MCD)[1] < -0.1
    assert mcd_pe(MCD)[0] == pytest.approx(-math.log(3), rel=1e-14)


def test_mcd_chunking_gives_same_result(monkeypatch):
    rng = np.random.default_rng(0)
    z = rng.normal(size=(23, 4, 5)) * 3
    whole = mcd_mi(z)
    monkeypatch.setattr("fdbench.csf.mcdropout._CHUNK_ELEMENTS", 40)
    np.testing.assert_array_equal(mcd_mi(z), whole)
    np.testing.assert_array_equal(mcd_mls(z), _naive(z)[:, 4])


@settings(max_examples=30, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 4), st.integers(1, 5), st.integers(2, 5)),
        elements=st.floats(-50, 50, allow_nan=False),
    )
)
def test_mi_is_pe_minus_ee(z):
    np.testing.assert_allclose(mcd_mi(z), mcd_pe(z) - mcd_ee(z), rtol=1e-9, atol=1e-12)
    assert np.all(mcd_mi(z) <= 1e-12)
    assert np.all((mcd_msr(z) > 0) & (mcd_msr(z) <= 1))


def test_ensemble_matches_loops():
    rng = np.random.default_rng(1)
    members = [rng.normal(size=(6, 4)) * 2 for _ in range(3)]
    stacked = np.stack(members, axis=1)
    expected = _naive(stacked)
    np.testing.assert_allclose(ens_msr(members), expected[:, 0], rtol=1e-12)
    np.testing.assert_allclose(ens_pe(members), expected[:, 1], rtol=1e-12)
    np.testing.assert_allclose(ens_ee(members), expected[:, 2], rtol=1e-12)
    np.testing.assert_allclose(ens_mi(members), expected[:, 3], rtol=1e-9, atol=1e-14)
    with pytest.raises(ValueError, match="same shape"):
        ens_msr([members[0], members[1][:3]])


def test_mcd_validation():
    with pytest.raises(ValueError, match=r"mcd_logits must have shape \(N, S, K\)"):
        mcd_msr(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="finite"):
        mcd_pe(np.full((1, 2, 2), np.inf))
