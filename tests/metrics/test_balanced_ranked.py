"""The class-mean selective risk and the balanced losses from inputs already in ranking order
(``evaluate_all`` with labels and no weights) equal those gathered per sample, bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fdbench import metrics as M
from fdbench.metrics._balanced import class_codes, class_mean_selective_risk
from fdbench.metrics._core import augrc_from_cum, rank
from fdbench.metrics.selective import _balance_factor

from .strategies import samples


@settings(max_examples=80, deadline=None)
@given(samples(max_n=40), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_ranked_inputs_give_the_same_bits(data, k, seed):
    r, c, _ = data
    labels = np.random.default_rng(seed).integers(0, k, r.size)
    ranking = rank(c)
    codes, n_classes, counts = class_codes(labels)
    np.testing.assert_array_equal(counts, np.bincount(codes))
    assert n_classes == np.unique(labels).size
    ranked = (codes[ranking.order], r[ranking.order])
    expected = class_mean_selective_risk(ranking, codes, n_classes, r, None)
    got = class_mean_selective_risk(ranking, codes, n_classes, r, None, ranked=ranked)
    assert got.tobytes() == expected.tobytes()
    binary = bool(np.all((r == 0) | (r == 1)))
    shared = class_mean_selective_risk(
        ranking, codes, n_classes, r, None, ranked=ranked, counts=counts, binary=binary
    )
    assert shared.tobytes() == expected.tobytes()
    gathered = ranking.cumulative(r * _balance_factor(codes, n_classes, None))
    in_order = ranking.at_ends(np.cumsum(ranked[1] * _balance_factor(ranked[0], n_classes, None)))
    assert in_order.tobytes() == gathered.tobytes()
    counted = _balance_factor(ranked[0], n_classes, None, counts)
    assert counted.tobytes() == _balance_factor(ranked[0], n_classes, None).tobytes()


def test_class_codes_of_labels_beyond_small_codes():
    labels = np.array([70_000, -3, 70_000, 5, -3, -3])
    codes, n_classes, counts = class_codes(labels)
    assert n_classes == 3 and codes.dtype == np.uint16
    np.testing.assert_array_equal(codes, [2, 0, 2, 1, 0, 0])
    np.testing.assert_array_equal(counts, [3, 1, 2])
    empty = class_codes(np.array([], dtype=np.int64))
    assert empty.n_classes == 0 and empty.counts.size == 0


def test_evaluate_all_balanced_keys_on_ties_and_extremes():
    rng = np.random.default_rng(3)
    n = 3000
    r = (rng.random(n) < 0.3).astype(np.float64)
    labels = rng.integers(0, 7, n)
    for c in (
        np.round(rng.standard_normal(n), 1),
        np.where(rng.random(n) < 0.5, 0.0, -0.0),
        rng.choice([-1e308, 5e-324, 1e308], n),
    ):
        result = M.evaluate_all(r, c, labels=labels)
        assert result["aurc_ba"] == M.aurc_ba(r, c, labels)
        ranking = rank(c)
        codes, n_classes, _ = class_codes(labels)
        L_ba = ranking.cumulative(r * _balance_factor(codes, n_classes, None))[None, :]
        W = ranking.cumulative(None)[None, :]
        assert result["augrc_ba"] == float(augrc_from_cum(W, L_ba)[0])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, -0.0, 1.0, 0.5]), min_size=1, max_size=60),
    st.integers(0, 2**32 - 1),
)
def test_ranked_residuals_equal_the_float_gather(values, seed):
    """The byte gather of 0/1 residuals gives np.take's bytes (a -0.0 keeps the float gather)."""
    from fdbench.metrics.suite import _ranked_residuals

    r = np.array(values)
    order = np.random.default_rng(seed).permutation(r.size)
    binary = bool(np.all((r == 0) | (r == 1)))
    got = _ranked_residuals(r, order, binary, np.empty(r.size))
    assert got.tobytes() == np.take(r, order).tobytes()


def test_balanced_entries_beside_the_others_equal_those_after_them(monkeypatch):
    """From ``BESIDE_MIN_SAMPLES`` samples ``evaluate_all`` with labels computes AURC-BA and
    AUGRC-BA on a second thread; the entries, their order and their bits are those of the
    same call with everything in the calling thread (weighted, soft and 0/1, with ties)."""
    from fdbench.core.threads import THREADS_ENV
    from fdbench.metrics import suite

    rng = np.random.default_rng(11)
    n = suite.BESIDE_MIN_SAMPLES + 3
    labels = rng.integers(0, 9, n)
    c = np.round(rng.random(n), 3)
    cases = [
        ((rng.random(n) < 0.3).astype(np.float64), None),
        ((rng.random(n) < 0.3).astype(np.float64), rng.random(n) + 0.5),
        (rng.random(n), None),
    ]
    for r, w in cases:
        monkeypatch.setenv(THREADS_ENV, "2")
        beside = M.evaluate_all(r, c, labels=labels, sample_weight=w)
        monkeypatch.setenv(THREADS_ENV, "1")
        alone = M.evaluate_all(r, c, labels=labels, sample_weight=w)
        assert list(beside) == list(alone)
        assert np.array(list(beside.values())).tobytes() == np.array(list(alone.values())).tobytes()


@settings(max_examples=150, deadline=None)
@given(samples(max_n=60), st.integers(1, 6), st.integers(0, 2**32 - 1), st.booleans())
def test_exact_risks_by_class_segment_give_the_same_bits(data, k, seed, negative_zero):
    """0/1 residuals without weights: the class risks summed a class segment at a time (forced
    here on small inputs) equal the vectorised offsets' bit for bit, -0.0 residuals included
    (they keep the vectorised path)."""
    from fdbench.metrics import _balanced

    r, c, _ = data
    rng = np.random.default_rng(seed)
    r = (r > np.median(r)).astype(np.float64)
    if negative_zero:
        r[(r == 0) & (rng.random(r.size) < 0.5)] = -0.0
    labels = rng.integers(0, k, r.size)
    ranking = rank(c)
    codes, n_classes, counts = class_codes(labels)
    expected = class_mean_selective_risk(ranking, codes, n_classes, r, None)
    segments = _balanced._SEGMENT_SAMPLES
    try:
        _balanced._SEGMENT_SAMPLES = 1
        got = class_mean_selective_risk(ranking, codes, n_classes, r, None, counts=counts)
    finally:
        _balanced._SEGMENT_SAMPLES = segments
    assert got.tobytes() == expected.tobytes()


def test_exact_risks_by_class_segment_are_taken_at_scale():
    from fdbench.metrics import _balanced

    rng = np.random.default_rng(5)
    n = 20 * _balanced._SEGMENT_SAMPLES
    r = (rng.random(n) < 0.3).astype(np.float64)
    labels = rng.integers(0, 10, n)
    ranking = rank(rng.random(n))
    codes, _, counts = class_codes(labels)
    by_class = np.argsort(codes[ranking.order], kind="stable")
    ranked_r = r[ranking.order][by_class]
    starts = np.cumsum(counts) - counts
    got = _balanced._exact_risk_by_segment(ranked_r, starts, counts)
    accepted = np.arange(1.0, n + 1.0) - np.repeat(starts.astype(np.float64), counts)
    want = _balanced._within_class_cumsum(ranked_r, starts, counts, exact=True) / accepted
    assert got.tobytes() == want.tobytes()
