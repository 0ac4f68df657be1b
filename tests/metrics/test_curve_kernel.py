"""The compiled bootstrap pass (``_curve_kernel``) against the NumPy path and brute force."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdbench import metrics as M
from fdbench.metrics._core import (
    Workspace,
    _rowdot,
    augrc_auroc_binary,
    aurc_from_cum,
    binary_cumulative,
)
from fdbench.metrics._curve_kernel import (
    EINSUM_BUFFER,
    MAX_TOTAL,
    compiled_pass,
    einsum_order_holds,
)
from fdbench.metrics.bootstrap import _binary_curves, _prepare_csf

from .strategies import confidences, residuals

CURVES = ["augrc", "auroc_f", "aurc"]


def _numpy_path(s, counts, work):
    """The NumPy engine the compiled pass replaces, as the bootstrap called it."""
    W, L = binary_cumulative(s.ranking, s.failures, counts, work)
    scratch = [work.big(k, *W.shape) for k in (2, 3, 4)]
    augrc, auroc = augrc_auroc_binary(W, L, s.failures, work)
    with np.errstate(invalid="ignore", divide="ignore"):
        aurc = aurc_from_cum(W, L, scratch, overwrite=True)
    return {"augrc": augrc, "auroc_f": auroc, "aurc": aurc}


@st.composite
def counted_samples(draw):
    """0/1 residuals, confidences (ties, all equal), and int32 counts over a wider set, some
    rows of no weight on the samples evaluated."""
    n = draw(st.integers(1, 40))
    r = draw(residuals(n, "binary"))
    c = draw(confidences(n))
    extra = draw(st.integers(0, 5))
    rows = draw(st.integers(1, 6))
    values = st.lists(st.integers(0, 6), min_size=n + extra, max_size=n + extra)
    counts = np.array(draw(st.lists(values, min_size=rows, max_size=rows)), dtype=np.int32)
    zero = draw(st.lists(st.booleans(), min_size=rows, max_size=rows))
    picked = np.array(draw(st.permutations(range(n + extra)))[:n], dtype=np.intp)
    for row, empty in enumerate(zero):
        if empty:
            counts[row, picked] = 0
    return r, c, counts, picked


@settings(max_examples=300, deadline=None)
@given(counted_samples())
def test_compiled_pass_equals_numpy_path_bytes(data):
    """Same bytes (NaNs and signs of zero included) as binary_cumulative + augrc_auroc_binary
    + aurc_from_cum, with ties, all-equal scores, one class, rows of no weight."""
    r, c, counts, picked = data
    s = _prepare_csf(r, c, False, True)
    s = replace(s, ranking=replace(s.ranking, order=picked[s.ranking.order]))
    rows = counts.shape[0]
    work = Workspace(rows, r.size, int(r.sum()), np.int32)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = _numpy_path(s, counts, work)
        got = _binary_curves(s, counts, CURVES, Workspace(rows, r.size, int(r.sum()), np.int32))
    assert got is not None
    for key in CURVES:
        assert got[key].tobytes() == expected[key].tobytes(), key


@settings(max_examples=200, deadline=None)
@given(counted_samples())
def test_compiled_pass_writes_the_cumulative_sums(data):
    """cum, risks and sums from brute-force cumulative sums of the gathered counts; the AURC sum
    as NumPy's einsum adds it."""
    r, c, counts, picked = data
    s = _prepare_csf(r, c, False, True)
    order = picked[s.ranking.order]
    rows, t = counts.shape[0], s.ranking.n_groups
    cum, risks, sums = np.empty((rows, t + 2)), np.empty((rows, t)), np.empty((rows, 8))
    kernel = compiled_pass()
    assert kernel is not None
    for b in range(rows):
        args = (s.group_ends, s.failed, s.failures.groups, cum[b], risks[b], sums[b : b + 1])
        kernel(counts[b : b + 1], order, *args, 0)
    gathered = counts[:, order].astype(np.float64)
    ends = np.arange(r.size) if s.ranking.ends is None else s.ranking.ends
    W = np.cumsum(gathered, axis=1)[:, ends]
    L = np.cumsum(gathered * r[s.ranking.order], axis=1)[:, ends]
    np.testing.assert_array_equal(cum, np.concatenate([np.zeros((rows, 1)), W, W[:, -1:]], axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        np.testing.assert_array_equal(risks, np.where(W > 0, L / W, 0.0))
    w_prev = np.concatenate([np.zeros((rows, 1)), W[:, :-1]], axis=1)
    l_prev = np.concatenate([np.zeros((rows, 1)), L[:, :-1]], axis=1)
    loss = L - l_prev
    np.testing.assert_array_equal(sums[:, 0], W[:, -1])
    np.testing.assert_array_equal(sums[:, 1], L[:, -1])
    coef = cum[:, 2:] - cum[:, :-2]
    assert sums[:, 7].tobytes() == np.einsum("ij,ij->i", coef, risks).tobytes()
    for b in range(rows):
        positive = np.flatnonzero(W[b] > 0)
        assert sums[b, 2] == (L[b, positive[0]] if positive.size else 0.0)
        assert sums[b, 3] == np.sum(loss[b] * w_prev[b])
        assert sums[b, 4] == np.sum(loss[b] * (W[b] - w_prev[b]))
        assert sums[b, 5] == np.sum(loss[b] * l_prev[b])
        assert sums[b, 6] == np.sum(loss[b] ** 2)


@pytest.mark.parametrize("rows", [1, 3])
@pytest.mark.parametrize("ties", [True, False])
def test_rows_longer_than_einsums_buffer_equal_numpy_path_bytes(rows, ties):
    """A block of one row, which NumPy's einsum sums buffer by buffer, and a block of several,
    summed row by row, give the NumPy path's bytes on rows of more than two buffers."""
    rng = np.random.default_rng(rows)
    n = 2 * EINSUM_BUFFER + 101
    r = (rng.random(n) < 0.2).astype(float)
    c = rng.integers(0, 40, n).astype(float) if ties else rng.normal(size=n) - r
    s = _prepare_csf(r, c, False, True)
    counts = M.bootstrap_counts(n, rows, seed=rows)
    work = Workspace(rows, n, int(r.sum()), np.int32)
    got = _binary_curves(s, counts, CURVES, Workspace(rows, n, int(r.sum()), np.int32))
    expected = _numpy_path(s, counts, work)
    assert got is not None
    for key in CURVES:
        assert got[key].tobytes() == expected[key].tobytes(), key


def test_einsum_order_check_tells_another_order():
    """The check holds for the NumPy path's einsum here and fails for a pairwise sum."""
    compiled_pass()
    assert einsum_order_holds(_rowdot)
    assert not einsum_order_holds(lambda a, b: np.sum(a * b, axis=1))


def test_totals_beyond_exact_integer_products_take_the_numpy_path():
    """A resample whose total weight squared exceeds 2^53 is left to the NumPy engine."""
    r = np.array([0.0, 1.0, 0.0])
    s = _prepare_csf(r, np.array([0.3, 0.2, 0.1]), False, True)
    counts = np.array([[MAX_TOTAL, 1, 0]], dtype=np.int32)
    work = Workspace(1, 3, 1, np.int32)
    assert _binary_curves(s, counts, CURVES, work) is None
    assert _binary_curves(s, counts - np.array([[1, 0, 0]], np.int32), CURVES, work) is not None


@pytest.mark.parametrize("n", [1, 2, 7, 999])
@pytest.mark.parametrize("ties", [True, False])
def test_bootstrap_values_do_not_depend_on_the_path(n, ties):
    """AURC, AUGRC and AUROC_f alone (compiled pass) equal the same columns computed beside a
    metric that needs the cumulative arrays (NumPy path), bit for bit; strata and the
    1e300 scale included."""
    rng = np.random.default_rng(n)
    r = (rng.random(n) < 0.3).astype(float)
    c = np.where(rng.random(n) < 0.5, 1e300, -1e300) if ties else rng.normal(size=n) - r
    strata = rng.integers(0, 3, size=n)
    fast = M.bootstrap(
        r, {"a": c, "b": np.zeros(n)}, metrics=CURVES, n_resamples=30, stratify=strata
    )
    slow = M.bootstrap(
        r,
        {"a": c, "b": np.zeros(n)},
        metrics=[*CURVES, "ap_f_error"],
        n_resamples=30,
        stratify=strata,
    )
    slow = slow[slow["metric"] != "ap_f_error"].reset_index(drop=True)
    assert fast["value"].to_numpy().tobytes() == slow["value"].to_numpy().tobytes()
