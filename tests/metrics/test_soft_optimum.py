"""The optimal CSF's AURC and AUGRC for weighted soft residuals in blocks equal
``selective._optimum``'s (np.unique, np.bincount, optimal_from_counts) bit for bit, with
groups cut by the blocks, one to many distinct residuals, whole and tiny weights; a -0.0
residual is left to ``_optimum``; evaluate_all takes it from the compiled walk's size on."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdbench import metrics as M
from fdbench.core import threads as thread_module
from fdbench.metrics import _ordered_sums, _soft_optimum, suite
from fdbench.metrics._core import harmonic_steps
from fdbench.metrics.selective import _optimum

from .test_valuesort import _assert_identical

pytest.importorskip("numba")


@st.composite
def _soft_weighted(draw):
    n = draw(st.integers(1, 3000))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["continuous", "rounded", "zeros", "one value", "integers"]))
    r = rng.random(n) * draw(st.sampled_from([1.0, 1e-300, 1e300]))
    if kind == "rounded":
        r = np.round(rng.random(n), draw(st.integers(0, 3)))
    elif kind == "zeros":
        r[rng.random(n) < 0.5] = 0.0
    elif kind == "one value":
        r = np.full(n, 0.25)
    elif kind == "integers":
        r = rng.integers(0, 4, n).astype(np.float64)
    w = rng.random(n) * draw(st.sampled_from([1.0, 1e-200, 1e200])) + 1e-300
    if draw(st.booleans()):
        w = np.round(w * 10) + 1.0
    return r, w, draw(st.sampled_from([1, 7, 1000, 1 << 16]))


@settings(max_examples=300, deadline=None)
@given(
    inputs=_soft_weighted(),
    leaf=st.sampled_from([128, 1000, _ordered_sums.PAIRWISE_LEAF]),
    threads=st.sampled_from([1, 2]),
)
def test_blocked_optimum_equals_optimum(kernels, inputs, leaf, threads):
    """Blocks of any size, runs of the pairwise sums from 128 groups (each run's digamma
    steps on the second thread, or not)."""
    r, w, block = inputs
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_soft_optimum, "BLOCK", block)
        m.setattr(_ordered_sums, "PAIRWISE_LEAF", leaf)
        m.setattr(thread_module, "usable_threads", lambda: threads)
        got = _soft_optimum.blocked_optimum(r, w, kernels)
    want = _optimum(r, w, binary=False)
    assert np.array(got).tobytes() == np.array(want).tobytes()


def test_many_groups_split_the_pairwise_sums(kernels):
    """More than two leaves of 2^16 groups (the pairwise sums split), continuous and tied."""
    rng = np.random.default_rng(3)
    n = 300_000
    for r in (rng.random(n), np.round(rng.random(n), 5)):
        w = rng.random(n) + 0.01
        assert _soft_optimum.blocked_optimum(r, w, kernels) == _optimum(r, w, binary=False)


def test_a_negative_zero_is_left_to_optimum(kernels):
    r = np.array([0.5, -0.0, 0.0, 0.25])
    w = np.array([1.0, 2.0, 3.0, 4.0])
    assert _soft_optimum.blocked_optimum(r, w, kernels) is None
    assert _soft_optimum.weighted_soft_optimum(r, w) == _optimum(r, w, binary=False)


def test_evaluate_all_holds_soft_weighted_residuals_in_twice_their_memory(kernels):
    """From the compiled walk's size on, evaluate_all of weighted soft residuals takes the
    blocked optimum: the engine's values; at 2^21 samples peak memory under 2x the
    confidences (11x with np.unique): its int32 order and the weights gathered into it take
    1.5x, two runs of the pairwise sums' buffers a fixed ~7 MiB (the 2x would not hold at
    2^20 for them)."""
    rng = np.random.default_rng(4)
    n = 1 << 21
    r, c, w = rng.random(n), rng.random(n), rng.random(n) + 0.1
    M.evaluate_all(r, c, sample_weight=w)
    tracemalloc.start()
    got = M.evaluate_all(r, c, sample_weight=w)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2 * c.nbytes
    with pytest.MonkeyPatch.context() as m:
        m.setattr(suite, "BLOCKWISE_MAX_SAMPLES", 0)
        want = M.evaluate_all(r, c, sample_weight=w)
    _assert_identical(got, want)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(1, 4),
    k=st.integers(1, 400),
    kind=st.sampled_from(["uniform", "whole", "counts", "spread", "huge"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_harmonic_steps_share_digammas_bit_for_bit(rows, k, kind, seed):
    """One digamma per group where a group's upper argument is the next one's lower: the same
    numbers as two digammas per group, for scaled, whole, bootstrap-count (zeros), widely
    spread and huge weights, one row or several."""
    from scipy.special import digamma

    rng = np.random.default_rng(seed)
    if kind == "uniform":
        w = rng.random((rows, k)) * 2.0
    elif kind == "whole":
        w = np.round(rng.random((rows, k)) * 10.0) + 1.0
    elif kind == "counts":
        w = rng.poisson(1.0, (rows, k)).astype(np.float64)
    elif kind == "spread":
        w = rng.random((rows, k)) * 2.0 ** rng.integers(-30, 31, (rows, k))
    else:
        w = rng.random((rows, k)) * 1e200
    w = w * (k / np.maximum(w.sum(axis=1, keepdims=True), 1e-300))
    W0 = np.cumsum(w, axis=1) - w
    want = digamma(W0 + w + 1.0) - digamma(W0 + 1.0)
    assert harmonic_steps(W0, w).tobytes() == want.tobytes()
    assert harmonic_steps(W0[0], w[0]).tobytes() == want[0].tobytes()


@pytest.mark.parametrize("beside_max", [1 << 20, 0])
def test_soft_weighted_optimum_beside_the_walk_up_to_its_size(kernels, beside_max):
    """Up to SOFT_BESIDE_MAX_SAMPLES the optimum runs on the second thread while the walk
    runs on this one, beyond it on this one after the walk: the engine's values either way."""
    import threading

    rng = np.random.default_rng(5)
    n = 1 << 18
    r, c, w = rng.random(n), rng.random(n), rng.random(n) + 0.1
    threads = []

    def spy(*args):
        threads.append(threading.current_thread() is threading.main_thread())
        return _soft_optimum.weighted_soft_optimum(*args)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(suite, "SOFT_BESIDE_MAX_SAMPLES", beside_max)
        m.setattr(suite, "weighted_soft_optimum", spy)
        m.setattr(thread_module, "usable_threads", lambda: 2)
        got = M.evaluate_all(r, c, sample_weight=w)
    assert threads == [beside_max == 0]
    with pytest.MonkeyPatch.context() as m:
        m.setattr(suite, "BLOCKWISE_MAX_SAMPLES", 0)
        want = M.evaluate_all(r, c, sample_weight=w)
    _assert_identical(got, want)
