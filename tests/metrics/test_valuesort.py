"""The value-sort path of ``evaluate_all`` (0/1 residuals, no weights) equals the argsort
engine bit for bit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fdbench.metrics.suite as suite
from fdbench.metrics import _valuesort, evaluate_all
from fdbench.metrics._ordered_sums import RowDot
from fdbench.metrics._valuesort import binary_unit_suite, compiled_binary_unit

EXTREMES = (-1.7e308, -1.0, -5e-324, -0.0, 0.0, 5e-324, 0.5, 1.0, 1.7e308)


def _both(
    r: np.ndarray, c: np.ndarray, monkeypatch: pytest.MonkeyPatch, compiled: bool = False
) -> tuple[dict, dict]:
    """evaluate_all by the value sort (its compiled passes if ``compiled``, whatever N) and by
    the argsort engine."""
    with monkeypatch.context() as m:
        m.setattr(_valuesort, "COMPILED_MIN_SAMPLES", 1 if compiled else _valuesort.MAX_SAMPLES + 1)
        fast = evaluate_all(r, c)
    with monkeypatch.context() as m:
        m.setattr(suite, "MAX_SAMPLES", 0)
        engine = evaluate_all(r, c)
    return fast, engine


def _assert_identical(fast: dict, engine: dict) -> None:
    assert list(fast) == list(engine)
    for key, expected in engine.items():
        got = fast[key]
        if math.isnan(expected):
            assert math.isnan(got), key
        else:
            assert got == expected, (key, got, expected)


@st.composite
def _binary_inputs(draw):
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
    classes = draw(st.sampled_from(["both", "successes", "failures"]))
    if classes == "both":
        r = np.array(draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n)))
    else:
        r = np.full(n, 0.0 if classes == "successes" else 1.0)
    if kind != "extreme" and draw(st.booleans()):
        c = c.astype(np.float32)
    return r, c


def _assert_same_bits(a: dict, b: dict) -> None:
    assert list(a) == list(b)
    assert np.array(list(a.values())).tobytes() == np.array(list(b.values())).tobytes()


@settings(max_examples=300, deadline=None)
@given(_binary_inputs(), st.booleans())
def test_value_sort_equals_argsort_engine(inputs, compiled):
    r, c = inputs
    with pytest.MonkeyPatch.context() as monkeypatch:
        _assert_identical(*_both(r, c, monkeypatch, compiled))


@settings(max_examples=200, deadline=None)
@given(_binary_inputs())
def test_compiled_passes_equal_numpy_passes_bit_for_bit(inputs):
    """The compiled passes give the NumPy passes' values bit for bit (signs of zero and NaNs
    included)."""
    r, c = inputs
    with pytest.MonkeyPatch.context() as monkeypatch:
        compiled = _both(r, c, monkeypatch, True)[0]
        numpy = _both(r, c, monkeypatch, False)[0]
    _assert_same_bits(compiled, numpy)


def test_order_check_of_the_compiled_sums():
    """The compiled sums follow einsum's order here, and the check refuses another order."""
    from fdbench.metrics import _valuesort_kernel as kernel

    assert kernel.compiled() is not None
    assert kernel.order_holds(kernel.ordered_sums)

    def left_to_right(p, m, m_last, acc):
        for k, stop in enumerate((m, m, m_last)):
            for j in range(stop):
                acc[k] += p[k + 1, j]

    assert not kernel.order_holds(left_to_right)


def test_compiled_passes_refuse_what_check_inputs_refuses(monkeypatch):
    """Inputs the compiled check does not accept take check_inputs (same errors) or, for soft
    residuals, the block walk."""
    monkeypatch.setattr(_valuesort, "COMPILED_MIN_SAMPLES", 1)
    r, c = np.array([0.0, 1.0, 0.0]), np.array([0.2, 0.5, 0.9])
    for bad_r, bad_c, match in (
        (r, np.array([0.2, np.nan, 0.9]), "confidence: expected finite"),
        (r, np.array([0.2, np.inf, 0.9]), "confidence: expected finite"),
        (np.array([0.0, -1.0, 0.0]), c, "residuals: expected finite non-negative"),
        (np.array([0.0, np.nan, 1.0]), c, "residuals: expected finite non-negative"),
        (r[:2], c, "the same length"),
    ):
        with pytest.raises(ValueError, match=match):
            evaluate_all(bad_r, bad_c)
    soft = np.array([0.0, 0.5, 1.0])
    got = evaluate_all(soft, c)
    monkeypatch.setattr(_valuesort, "COMPILED_MIN_SAMPLES", _valuesort.MAX_SAMPLES + 1)
    _assert_same_bits(got, evaluate_all(soft, c))


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(2, 3 * _valuesort.BLOCK),
    decimals=st.sampled_from([None, 1, 3, 5]),
    rate=st.sampled_from([0.0, 0.02, 0.3, 0.7, 0.98, 1.0]),
    seed=st.integers(0, 2**32 - 1),
)
@pytest.mark.parametrize("compiled", [False, True])
def test_value_sort_equals_argsort_engine_across_blocks(n, decimals, rate, seed, compiled):
    """Several blocks of tie groups, einsum chunks and pairwise-summation leaves; more
    failures than successes (the compiled passes place the successes)."""
    rng = np.random.default_rng(seed)
    r = (rng.random(n) < rate).astype(np.float64)
    c = rng.random(n) - 0.2 * r * rng.random(n)
    if decimals is not None:
        c = np.round(c, decimals)
    with pytest.MonkeyPatch.context() as monkeypatch:
        _assert_identical(*_both(r, c, monkeypatch, compiled))


def test_value_sort_large_pairwise_bins(monkeypatch):
    """A calibration bin of more tie groups than a pairwise leaf, with and without ties."""
    rng = np.random.default_rng(3)
    n = 3 * _valuesort.BLOCK + 17
    r = (rng.random(n) < 0.1).astype(np.float64)
    for c in (rng.random(n) * 0.01 + 0.95, np.round(rng.random(n) * 0.05 + 0.94, 6)):
        for compiled in (False, True):
            _assert_identical(*_both(r, c, monkeypatch, compiled))


@given(
    sizes=st.lists(st.integers(0, 20_000), min_size=1, max_size=6),
    seed=st.integers(0, 2**32 - 1),
)
@settings(max_examples=30, deadline=None)
def test_row_dot_equals_einsum(sizes, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.random(sum(sizes)) * 3.0, rng.random(sum(sizes))
    dot = RowDot()
    start = 0
    for size in sizes:
        dot.feed(a[start : start + size], b[start : start + size])
        start += size
    assert dot.total() == np.einsum("ij,ij->i", a[None], b[None])[0]


def test_row_dot_ignores_setbufsize():
    """einsum sums a row in chunks of 8,192 whatever np.setbufsize says; so does RowDot."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal(50_000) * 10 ** rng.uniform(-6, 6, 50_000)
    b = rng.random(50_000)
    saved = np.setbufsize(4096)
    try:
        dot = RowDot()
        for start in range(0, a.size, 5_000):
            dot.feed(a[start : start + 5_000], b[start : start + 5_000])
        expected = np.einsum("ij,ij->i", a[None], b[None])[0]
    finally:
        np.setbufsize(saved)
    assert dot.total() == expected


def test_value_sort_memory_and_path(monkeypatch):
    """evaluate_all takes the value-sort path exactly for 0/1 residuals without weights or
    labels, and holds at most twice the confidence array besides its inputs."""
    import tracemalloc

    calls = []
    monkeypatch.setattr(
        suite, "binary_unit_suite", lambda r, c: calls.append(1) or binary_unit_suite(r, c)
    )
    monkeypatch.setattr(
        suite,
        "compiled_binary_unit",
        lambda r, c, m: (out := compiled_binary_unit(r, c, m)) and (calls.append(2) or out),
    )
    rng = np.random.default_rng(0)
    r = (rng.random(1000) < 0.1).astype(np.float64)
    c = rng.random(1000)
    evaluate_all(r, c, sample_weight=np.ones(1000))
    evaluate_all(r * 0.5, c)
    evaluate_all(r, c, labels=rng.integers(0, 3, 1000))
    assert not calls
    n = 2_000_000
    r = (rng.random(n) < 0.1).astype(np.float64)
    c = rng.random(n)
    _valuesort.compiled()  # numba's one-time load is not the call's memory
    tracemalloc.start()
    evaluate_all(r, c)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert calls == [2]
    assert peak <= 2 * c.nbytes


def test_import_of_metrics_loads_neither_scipy_nor_pandas():
    """scipy and pandas (about 0.3 and 0.4 s to import) load where a function needs them."""
    import subprocess
    import sys

    code = (
        "import sys, fdbench.metrics; "
        "print(sorted(m for m in ('scipy', 'pandas') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("compiled", [False, True])
def test_value_sort_ignores_setbufsize(compiled, monkeypatch):
    """A changed np.setbufsize changes neither einsum's sums nor the value-sort path's."""
    rng = np.random.default_rng(5)
    c = rng.standard_normal(40_000) * 10 ** rng.uniform(-6, 6, 40_000)
    r = (rng.random(40_000) < 0.3).astype(np.float64)
    saved = np.setbufsize(4096)
    try:
        fast, engine = _both(r, c, monkeypatch, compiled)
    finally:
        np.setbufsize(saved)
    _assert_same_bits(fast, engine)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(2, 6 * 8192),
    decimals=st.sampled_from([None, 0, 1, 2, 4]),
    rate=st.sampled_from([0.0, 0.01, 0.05, 0.3, 0.6, 0.97, 1.0]),
    ordered=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_compiled_walk_in_two_segments_equals_one(n, decimals, rate, ordered, seed):
    """With a second CPU the sort runs beside the failures' extraction and the groups are
    walked in two segments on two threads (here blocks of one einsum chunk, so that small
    inputs split): every value equals the one-thread walk and the argsort engine, bit for bit,
    whether 95 % coverage, the TPR thresholds or the last risk <= 0.05 fall in the first
    segment, the second or at the split (``ordered``: failures at the lowest confidences)."""
    rng = np.random.default_rng(seed)
    r = (rng.random(n) < rate).astype(np.float64)
    c = rng.random(n) - (1.5 if ordered else 0.2) * r * rng.random(n)
    if decimals is not None:
        c = np.round(c, decimals)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_valuesort, "COMPILED_MIN_SAMPLES", 1)
        m.setattr(_valuesort, "BLOCK", 8192)
        split = []
        real = _valuesort._segment_state
        m.setattr(_valuesort, "_segment_state", lambda *a: split.append(a[4]) or real(*a))
        m.setattr(_valuesort, "second_thread_allowed", lambda: True)
        two = evaluate_all(r, c)
        m.setattr(_valuesort, "second_thread_allowed", lambda: False)
        one = evaluate_all(r, c)
        m.setattr(suite, "MAX_SAMPLES", 0)
        engine = evaluate_all(r, c)
    groups = np.unique(c).size
    assert (max(split) > 0) == (groups >= 2 * 8192)
    _assert_same_bits(two, one)
    _assert_identical(two, engine)


@pytest.mark.parametrize("threads", [1, 2])
def test_confidences_already_in_order_are_not_sorted_again(monkeypatch, threads):
    """Ascending, non-decreasing (ties, signed zeros) and descending confidences take no sort
    (``np.argsort`` of sorted data is a copy, cheaper than any sort) and give the argsort
    engine's values."""
    from fdbench.core import threads as thread_module

    pytest.importorskip("numba")
    monkeypatch.setattr(thread_module, "usable_threads", lambda: threads)
    rng = np.random.default_rng(9)
    n = 5000
    r = (rng.random(n) < 0.3).astype(np.float64)
    ascending = np.sort(rng.random(n))
    ties = np.sort(np.round(rng.random(n), 2) - 0.5)
    ties[np.flatnonzero(ties == 0.0)[:3]] = -0.0
    sorts = []
    real_sort = _valuesort._sorted_changes
    monkeypatch.setattr(_valuesort, "_sorted_changes", lambda *a: sorts.append(1) or real_sort(*a))
    for c in (ascending, ties, ascending[::-1].copy(), ascending[::-1]):
        engine = _both(r, c, monkeypatch, compiled=False)[1]
        _assert_identical(_both(r, c, monkeypatch, compiled=True)[0], engine)
    assert len(sorts) == 1  # the strided descending view only, which is not scanned


@pytest.mark.parametrize("order", ["unsorted", "ascending", "descending"])
def test_compiled_passes_place_the_smaller_class(monkeypatch, order):
    """Where the successes are fewer, the compiled passes place them instead of the failures
    (both extractions: the sort beside on a second thread, and the buffer filled from both
    ends where the confidences are in order) with the argsort engine's values, at one failure
    more or fewer than half."""
    rng = np.random.default_rng(11)
    n = 2 * _valuesort.BLOCK + 9
    c = np.round(rng.random(n), 4) if order == "unsorted" else np.sort(rng.random(n))
    if order == "descending":
        c = c[::-1].copy()
    for n_fail in (n // 2, n // 2 + 1, n - 3):
        r = np.zeros(n)
        r[rng.permutation(n)[:n_fail]] = 1.0
        _assert_identical(*_both(r, c, monkeypatch, compiled=True))


_FLOAT32_VALUES = st.one_of(
    st.floats(width=32, allow_nan=False),
    st.sampled_from([0.0, -0.0, 1e-45, -1e-45, 0.5, 3.4028234663852886e38]),
    st.floats(allow_nan=False),
)


@settings(max_examples=300, deadline=None)
@given(values=st.lists(_FLOAT32_VALUES, min_size=0, max_size=200), ties=st.booleans())
def test_float32_values_are_sorted_as_float32_with_the_same_bits(values, ties):
    """_sorted_changes gives np.sort's array bit for bit and its number of value changes;
    the float32 sort is taken exactly where every value is a float32 other than -0.0."""
    pytest.importorskip("numba")
    K = _valuesort.compiled()
    c = np.array(values + (values[: len(values) // 2] if ties else []), dtype=np.float64)
    np.random.default_rng(len(c)).shuffle(c)
    got, changes = _valuesort._sorted_changes(c, K)
    want = np.sort(c)
    assert got.tobytes() == want.tobytes()
    assert changes == K.count_changes(want)
    with np.errstate(over="ignore"):  # a float64 beyond float32's range: not a float32
        exact = bool(np.all(c.astype(np.float32).astype(np.float64) == c))
    narrow = exact and not np.any((c == 0) & np.signbit(c))
    assert bool(K.narrow(c, np.empty(c.size))) == narrow


def test_float32_softmax_maxima_take_the_float32_sort(monkeypatch):
    """At 2^19 samples (the compiled passes), softmax maxima of float32 logits: the suite
    sorts them as float32, and its values are the argsort engine's; with one float64 value
    among them it does not."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(11)
    logits = rng.normal(size=(1 << 19, 10)).astype(np.float32) * 3
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    c = (e.max(axis=1) / e.sum(axis=1)).astype(np.float64)
    r = (rng.random(c.size) < 0.2).astype(np.float64)
    K = _valuesort.compiled()
    narrowed = []

    def narrow(c, buffer):
        narrowed.append(bool(K_narrow(c, buffer)))
        return narrowed[-1]

    K_narrow = K.narrow
    monkeypatch.setattr(K, "narrow", narrow)
    fast = evaluate_all(r, c)
    assert narrowed == [True]
    with monkeypatch.context() as m:
        m.setattr(suite, "MAX_SAMPLES", 0)
        _assert_identical(fast, evaluate_all(r, c))
    c[7] = 0.1
    evaluate_all(r, c)
    assert narrowed == [True, False]
