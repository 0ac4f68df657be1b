"""The block walk of ``evaluate_all`` (weighted 0/1 or soft residuals, no labels) equals the
argsort engine bit for bit."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fdbench.metrics.suite as suite
from fdbench.metrics import _blockwise, evaluate_all
from fdbench.metrics._core import optimal_from_unit_cumulative

from .test_valuesort import EXTREMES, _assert_identical


def _assert_engine_equal(r, c, w) -> None:
    """The block walk's output equals the argsort engine's, key for key and bit for bit."""
    fast = evaluate_all(r, c, sample_weight=w)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(suite, "BLOCKWISE_MAX_SAMPLES", 0)
        engine = evaluate_all(r, c, sample_weight=w)
    _assert_identical(fast, engine)


@st.composite
def _inputs(draw):
    n = draw(st.integers(1, 60))
    kind = draw(st.sampled_from(["continuous", "heavy ties", "all equal", "extreme", "unit"]))
    if kind == "continuous":
        values = st.floats(-5, 5, allow_nan=False, width=32)
    elif kind == "heavy ties":
        values = st.sampled_from((0.1, 0.5, 0.9)[: draw(st.integers(1, 3))])
    elif kind == "all equal":
        values = st.just(draw(st.sampled_from((0.0, 0.3, 1.0, -2.0))))
    elif kind == "extreme":
        values = st.sampled_from(EXTREMES)
    else:
        values = st.floats(0, 1, allow_nan=False)
    c = np.array(draw(st.lists(values, min_size=n, max_size=n)), dtype=np.float64)
    residual = draw(st.sampled_from(["binary", "successes", "failures", "soft", "soft ties"]))
    if residual == "binary":
        r = np.array(draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n)))
    elif residual in ("successes", "failures"):
        r = np.full(n, 0.0 if residual == "successes" else 1.0)
    elif residual == "soft":
        r = np.array(draw(st.lists(st.floats(0, 1e3, width=32), min_size=n, max_size=n)))
    else:
        r = np.array(draw(st.lists(st.sampled_from([0.0, 0.75, 2.5]), min_size=n, max_size=n)))
    weight = draw(st.sampled_from(["none", "int", "float64", "extreme"]))
    if weight == "none":
        w = None
    elif weight == "int":
        w = np.array(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)), dtype=float)
    elif weight == "float64":
        w = np.array(draw(st.lists(st.floats(0.125, 3), min_size=n, max_size=n)))
    else:
        w = np.array(
            draw(st.lists(st.sampled_from([5e-324, 1e-200, 1.0, 1e300]), min_size=n, max_size=n))
        )
    if w is not None and not w.any():
        w[0] = 1.0
    return r, c, w


@settings(max_examples=400, deadline=None)
@given(_inputs())
def test_block_walk_equals_argsort_engine(inputs):
    _assert_engine_equal(*inputs)


@settings(max_examples=20, deadline=None)
@given(
    n=st.integers(2, 3 * _blockwise.BLOCK + 5),
    decimals=st.sampled_from([None, 1, 3, 5]),
    residual=st.sampled_from(["binary", "soft"]),
    weighted=st.sampled_from(["none", "int", "float"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_block_walk_across_blocks(n, decimals, residual, weighted, seed):
    """Several blocks of samples, tie groups across block ends, einsum chunks and ECE bins
    (weighted 0/1 residuals or soft ones)."""
    rng = np.random.default_rng(seed)
    if residual == "binary":
        r = (rng.random(n) < 0.2).astype(np.float64)
        if weighted == "none":
            weighted = "float"
    else:
        r = rng.random(n) * 2.0
    c = rng.random(n) - 0.2 * r * rng.random(n)
    if decimals is not None:
        c = np.round(c, decimals)
    w = {"none": None, "int": rng.integers(1, 5, n) * 1.0, "float": rng.random(n) + 0.01}
    _assert_engine_equal(r, c, w[weighted])


def test_block_walk_single_tie_group_over_blocks():
    """One tie group spanning every block, and one sample: every entry as the engine's."""
    rng = np.random.default_rng(1)
    n = 2 * _blockwise.BLOCK + 3
    r = (rng.random(n) < 0.3).astype(np.float64)
    _assert_engine_equal(r, np.full(n, 0.7), rng.random(n) + 0.5)
    _assert_engine_equal(r * 0.5, np.full(n, 0.7), None)
    _assert_engine_equal(np.array([1.0]), np.array([0.2]), np.array([3.0]))
    _assert_engine_equal(np.array([0.4]), np.array([0.2]), None)


@settings(max_examples=50, deadline=None)
@given(
    r=st.lists(st.floats(0, 10, width=32), min_size=1, max_size=3 * 1024),
)
def test_unit_optimum_equals_unit_cumulative(r):
    residuals = np.array(r, dtype=np.float64)
    expected = optimal_from_unit_cumulative(np.cumsum(np.sort(residuals)))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_blockwise, "BLOCK", 256)
        assert _blockwise.unit_optimum(residuals) == expected


def test_block_walk_memory_and_path(monkeypatch):
    """evaluate_all walks in blocks exactly for weighted 0/1 or soft residuals without labels,
    and holds at most twice the confidence array besides its inputs."""
    calls = []
    walk = _blockwise.blockwise_suite
    monkeypatch.setattr(suite, "blockwise_suite", lambda *a: calls.append(1) or walk(*a))
    rng = np.random.default_rng(0)
    r = (rng.random(1000) < 0.1).astype(np.float64)
    c = rng.random(1000)
    evaluate_all(r, c)
    evaluate_all(r, c, sample_weight=np.ones(1000), labels=rng.integers(0, 3, 1000))
    assert not calls
    n = 2_000_000
    r = (rng.random(n) < 0.1).astype(np.float64)
    c = rng.random(n)
    w = rng.random(n) + 0.5
    soft = r * 0.5
    for residuals, weights in ((r, w), (soft, None), (soft, w)):
        tracemalloc.start()
        evaluate_all(residuals, c, sample_weight=weights)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        if residuals is r or weights is None:
            assert peak <= 2 * c.nbytes
    assert calls == [1, 1, 1]
