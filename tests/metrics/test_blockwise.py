"""The block walk of ``evaluate_all`` (weighted 0/1 or soft residuals, no labels) equals the
argsort engine bit for bit. The compiled walk orders a tie group's samples by position (the
stable arg-sort's order), where the engine takes ``np.argsort``'s own: it is compared with the
engine under a stable ``np.argsort``."""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fdbench
import fdbench.metrics.suite as suite
from fdbench.core import threads as thread_module
from fdbench.metrics import _blockwise, _blockwise_kernel, evaluate_all
from fdbench.metrics._core import optimal_from_unit_cumulative

from .test_valuesort import EXTREMES, _assert_identical


@contextlib.contextmanager
def stable_argsort():
    """``np.argsort`` that keeps equal values in position order (``kind="stable"``)."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(np, "argsort", functools.partial(np.argsort, kind="stable"))
        yield


def _assert_engine_equal(r, c, w) -> None:
    """The block walk's output equals the argsort engine's, key for key and bit for bit: under
    a stable ``np.argsort`` where the compiled walk runs (from its MIN_SAMPLES on)."""
    compiled = c.size >= _blockwise_kernel.MIN_SAMPLES
    with stable_argsort() if compiled else contextlib.nullcontext():
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
        # the first call loads the compiled kernels (numba's objects are not the walk's)
        part = slice(0, 300_000)
        evaluate_all(residuals[part], c[part], sample_weight=None if weights is None else w[part])
        tracemalloc.start()
        evaluate_all(residuals, c, sample_weight=weights)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        if residuals is r or weights is None:
            assert peak <= 2 * c.nbytes
    assert calls == [1] * 6


@pytest.fixture
def compiled_walk(monkeypatch):
    """Every block walk takes the compiled kernels (:mod:`~fdbench.metrics._blockwise_kernel`)."""
    assert _blockwise_kernel.compiled_kernels() is not None
    monkeypatch.setattr(_blockwise_kernel, "MIN_SAMPLES", 0)


@settings(max_examples=400, deadline=None)
@given(_inputs())
def test_compiled_walk_equals_argsort_engine(inputs):
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_blockwise_kernel, "MIN_SAMPLES", 0)
        _assert_engine_equal(*inputs)


@settings(max_examples=20, deadline=None)
@given(
    n=st.integers(2, 3 * _blockwise_kernel.CHUNK + 5),
    decimals=st.sampled_from([None, 1, 3, 5]),
    residual=st.sampled_from(["binary", "soft"]),
    weighted=st.sampled_from(["none", "int", "float"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_compiled_walk_across_chunks(n, decimals, residual, weighted, seed):
    """Several chunks of groups and gathers, tie groups across their ends, ECE bins."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_blockwise_kernel, "MIN_SAMPLES", 0)
        test_block_walk_across_blocks.hypothesis.inner_test(
            n=n, decimals=decimals, residual=residual, weighted=weighted, seed=seed
        )


def test_compiled_walk_single_tie_group_and_unit_optimum(compiled_walk):
    test_block_walk_single_tie_group_over_blocks()
    rng = np.random.default_rng(5)
    for n in (1, 2, _blockwise_kernel.CHUNK, _blockwise_kernel.CHUNK + 1, 3 * 8192 + 7):
        residuals = np.round(rng.random(n) * 3, 2)
        expected = optimal_from_unit_cumulative(np.cumsum(np.sort(residuals)))
        assert _blockwise.unit_optimum(residuals) == expected


def test_compiled_walk_is_taken_from_min_samples(monkeypatch):
    """Below MIN_SAMPLES the NumPy walk runs, from it on the compiled one, same values."""
    calls = []
    kernels = _blockwise_kernel.compiled_kernels()
    assert kernels is not None
    walk = kernels.walk
    monkeypatch.setattr(kernels, "walk", lambda *a: calls.append(1) or walk(*a))
    monkeypatch.setattr(_blockwise_kernel, "MIN_SAMPLES", 5000)
    rng = np.random.default_rng(3)
    r = (rng.random(5000) < 0.2).astype(np.float64)
    c, w = np.round(rng.random(5000), 3), rng.random(5000) + 0.1
    compiled = evaluate_all(r, c, sample_weight=w)
    assert calls == [1]
    monkeypatch.setattr(_blockwise_kernel, "MIN_SAMPLES", 5001)
    with stable_argsort():  # ties: the compiled walk's order within them
        _assert_identical(compiled, evaluate_all(r, c, sample_weight=w))
    assert calls == [1]


def test_compiled_walk_ties_are_the_same_on_every_machine(compiled_walk):
    """With ties the compiled walk sums each tie group in position order, not in the order
    of ``np.argsort`` (a sorting network that differs between processors): its values equal
    the NumPy walk's under a stable ``np.argsort`` and differ from the argsort engine's at
    most in the last bits."""
    rng = np.random.default_rng(8)
    n = 40_000
    c = np.round(rng.random(n), 2)  # tie groups of ~400 samples
    r, w = (rng.random(n) < 0.2).astype(np.float64), rng.random(n) + 0.1
    got = evaluate_all(r, c, sample_weight=w)
    with stable_argsort(), pytest.MonkeyPatch.context() as m:
        m.setattr(_blockwise_kernel, "MIN_SAMPLES", n + 1)
        _assert_identical(got, evaluate_all(r, c, sample_weight=w))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(suite, "BLOCKWISE_MAX_SAMPLES", 0)
        engine = evaluate_all(r, c, sample_weight=w)
    assert got.keys() == engine.keys()
    for key, value in engine.items():
        assert got[key] == pytest.approx(value, rel=1e-13, nan_ok=True), key


def _outcome(r, c, w):
    try:
        return evaluate_all(r, c, sample_weight=w)
    except (ValueError, TypeError) as error:
        return type(error), str(error)


def test_one_pass_input_check_answers_as_check_inputs(monkeypatch):
    """From MIN_SAMPLES on, weighted or soft inputs are checked in one compiled pass: the same
    values where they are valid, and where anything needs check_inputs (NaN, inf, negative
    residuals or weights, zero weights, weights at the ends of the float64 range, float32
    weights, other shapes) the same values or the same error."""
    monkeypatch.setattr(_blockwise_kernel, "MIN_SAMPLES", 0)
    rng = np.random.default_rng(9)
    n = 3000
    r = (rng.random(n) < 0.2).astype(np.float64)
    soft, c, w = rng.random(n), rng.standard_normal(n), rng.random(n) + 0.1
    cases = [(r, c, w), (soft, c, None), (soft, c, w), (r, c, None)]
    for position, value in ((0, np.nan), (7, np.inf), (n - 1, -np.inf)):
        bad_c = c.copy()
        bad_c[position] = value
        cases.append((soft, bad_c, None))
    for bad in (-0.5, np.nan, np.inf):
        bad_r = soft.copy()
        bad_r[11] = bad
        cases += [(bad_r, c, None), (bad_r, c, w)]
    for bad in (0.0, -1.0, np.nan, np.inf):
        bad_w = w.copy()
        bad_w[5] = bad
        cases.append((r, c, bad_w))
    cases += [(r, c, w * 1e300), (r, c, w * 1e-300), (r, c, w.astype(np.float32))]
    cases += [(soft, c, w[:-1]), (soft[:-1], c, None), (soft.reshape(2, -1), c, None)]
    taken = []
    real = suite.compiled_inputs
    monkeypatch.setattr(suite, "compiled_inputs", lambda *a: taken.append(real(*a)) or taken[-1])
    for inputs in cases:
        got = _outcome(*inputs)
        with monkeypatch.context() as m:
            m.setattr(suite, "compiled_inputs", lambda *a: None)
            want = _outcome(*inputs)
        if isinstance(want, dict):
            _assert_identical(got, want)
        else:
            assert got == want
    assert [t is not None for t in taken[:4]] == [True] * 4
    assert sum(t is not None for t in taken[4:]) == 0


def test_whole_number_weights_beyond_exact_totals_take_the_numpy_walk(compiled_walk):
    """W - L of whole-number weights summing past 2^53 is inexact: the NumPy walk answers."""
    r = np.array([0.0, 1.0, 0.0, 1.0])
    c = np.array([0.9, 0.8, 0.7, 0.6])
    w = np.array([2.0**60, 3.0, 2.0**60, 1.0])
    assert _blockwise._compiled_suite(r, c, w, True) is None
    assert _blockwise._compiled_suite(r, c, np.array([1.0, 3.0, 2.0, 1.0]), True) is not None
    _assert_engine_equal(r, c, w)


_NO_FMA_CHILD = """
import numpy as np
from fdbench.metrics import _blockwise_kernel as K, _soft_optimum as S, evaluate_all
K.MIN_SAMPLES = 0
rng = np.random.default_rng(0)
r, c = (rng.random(500) < 0.2) * 1.0, rng.random(500)
evaluate_all(r, c, sample_weight=rng.random(500) + 0.1)
evaluate_all(r * 0.5, c)
kernels = K.compiled_kernels()
S.blocked_optimum(r * 0.5 + rng.random(500), rng.random(500) + 0.1, kernels)
compiled = [kernels.walk, kernels.gather_weights, kernels.unit_optimum, kernels.row_dot]
compiled += [K.chunk_sum, K.chunk_sum3, K.terms, K._flush_, S._compiled_terms()]
from fdbench.metrics import _digamma as D
compiled += [D.compiled_step_terms(), D.psi_above_ten]
code = [k.inspect_asm(s) for k in compiled for s in k.signatures]
print(len(code), sum("fma" in text.lower() for text in code))
"""


def test_compiled_sums_follow_einsum_and_hold_no_fma(tmp_path):
    """The compiled dot product equals einsum's order (and a pairwise sum does not); the
    machine code of the kernels, compiled afresh (numba inspects no cached code), holds no
    fused multiply-add."""
    kernels = _blockwise_kernel.compiled_kernels()
    assert kernels is not None
    assert _blockwise_kernel.dot_order_holds(kernels.row_dot)
    assert not _blockwise_kernel.dot_order_holds(lambda a, b, p: float(np.sum(a * b)))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    src = str(Path(fdbench.__file__).parents[1])
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", _NO_FMA_CHILD], env=env, capture_output=True, text=True, check=True
    )
    kernels_seen, with_fma = map(int, done.stdout.split())
    assert kernels_seen >= 11
    assert with_fma == 0


def test_soft_optimum_beside_the_walk_equals_the_optimum_after(monkeypatch):
    """Soft residuals without weights: the optimal CSF's sort runs on a second thread beside
    the compiled walk (``beside``), and e-AURC, e-AUGRC and NAURC are those of
    :func:`~fdbench.metrics._blockwise.unit_optimum` computed after it, bit for bit."""
    rng = np.random.default_rng(7)
    n = _blockwise_kernel.MIN_SAMPLES + 1_001
    soft, c = rng.random(n), np.round(rng.random(n), 4)
    started = []
    real = _blockwise.beside
    monkeypatch.setattr(_blockwise, "beside", lambda f, *a: started.append(f) or real(f, *a))
    beside_values = evaluate_all(soft, c)
    assert started, "the optimum did not go to beside()"
    monkeypatch.setenv("FDBENCH_THREADS", "1")  # beside() then runs it in this thread
    _assert_identical(beside_values, evaluate_all(soft, c))
    aurc_opt, augrc_opt = _blockwise.unit_optimum(soft)
    assert beside_values["eaurc"] == beside_values["aurc"] - aurc_opt
    assert beside_values["eaugrc"] == beside_values["augrc"] - augrc_opt


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(2 * _blockwise_kernel.CHUNK, 5 * _blockwise_kernel.CHUNK),
    kind=st.sampled_from(
        ["continuous", "float32", "decimals 4", "decimals 2", "outside", "0.8 n values"]
    ),
    weighted=st.sampled_from(["int", "float", "spread", "front", "soft"]),
    rate=st.sampled_from([0.0, 0.02, 0.3, 0.97, 1.0]),
    seed=st.integers(0, 2**32 - 1),
)
def test_weighted_walk_in_two_segments_equals_one(n, kind, weighted, rate, seed):
    """Weighted 0/1 residuals, or soft residuals without weights (``weighted`` "soft"),
    walked in two segments on two threads (the second starting at a chunk's first group,
    from the gather's checkpoints or the residuals before it) give the one walk's entries
    bit for bit: ties across the split, fewer groups than the split (the first walks them
    all), the ECE's bins (confidences in [0, 1]) or none, whole-number or fractional weights
    (W - L or TP), no failure, every sample a failure, 95 % coverage and the TPRs reached
    in either."""
    _walk_in_two_segments(n, kind, weighted, rate, seed)


def _walk_in_two_segments(n: int, kind: str, weighted: str, rate: float, seed: int) -> list[int]:
    """The check of :func:`test_weighted_walk_in_two_segments_equals_one`; the shifts the
    walk's segments returned."""
    rng = np.random.default_rng(seed)
    c = rng.random(n)
    if kind == "float32":
        c = c.astype(np.float32).astype(np.float64)
    elif kind.startswith("decimals"):
        c = np.round(c, int(kind.split()[1]))
    elif kind == "outside":
        c = rng.normal(size=n) * 3.0
    elif kind == "0.8 n values":  # many values, yet often fewer groups than the split
        c = rng.choice(rng.random(int(0.8 * n)), n)
    r = (rng.random(n) < rate).astype(np.float64)
    if weighted == "int":
        w = rng.integers(1, 5, n).astype(np.float64)
    elif weighted == "float":
        w = rng.random(n) * 2.0 + 0.01
    elif weighted == "spread":
        w = rng.random(n) * 2.0 ** rng.integers(-20, 21, n) + 1e-300
    elif weighted == "front":  # the confident half weighs most (95 % of the weight within
        # the first segment), the rest succeeds: the selective risk falls to its minimum in
        # the second
        w = np.where(c >= np.median(c), 1e3, 1.0) * (rng.random(n) + 0.5)
        r[c < np.median(c)] = 0.0
    else:  # soft residuals, a share of them 0, without weights
        r = np.where(r > 0, 0.0, rng.random(n) * 3.0)
        w = None
    roles: list[int] = []

    shifts: list[int] = []

    def spy(*args, **kwargs):
        roles.append(args[5])
        shift = walk_segment(*args, **kwargs)
        shifts.append(shift)
        return shift

    walk_segment = _blockwise._walk_segment
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_blockwise, "_walk_segment", spy)
        m.setattr(_blockwise, "SPLIT_MIN_SAMPLES", 0)
        m.setattr(thread_module, "usable_threads", lambda: 2)
        split = _blockwise._compiled_suite(r, c, w, w is not None)
        # both roles (twice where a run left unread was out of order), or the counted walk
        assert set(roles) == {1, 2} or roles == [0]
        if kind in ("continuous", "float32", "outside"):
            assert 2 in roles
        m.setattr(_blockwise, "SPLIT_MIN_SAMPLES", 1 << 62)
        roles.clear()
        whole = _blockwise._compiled_suite(r, c, w, w is not None)
        assert set(roles) == {0}
    assert (split is None) == (whole is None)
    if whole is not None:
        _assert_identical(split, whole)
    return shifts


def test_a_second_segment_without_groups_leaves_the_walk_to_the_first():
    """Fewer groups than the split: the second segment finds no group to start from (-1)
    and the first walks every group, the one walk's values."""
    n = 3 * _blockwise_kernel.CHUNK
    shifts = _walk_in_two_segments(n, "0.8 n values", "float", 0.3, 4)
    assert -1 in shifts
    shifts = _walk_in_two_segments(n, "continuous", "float", 0.3, 4)
    assert min(shifts) >= 0
