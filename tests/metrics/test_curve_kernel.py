"""The compiled bootstrap pass (``_curve_kernel``) against the NumPy path and brute force."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdbench import metrics as M
from fdbench.metrics import _curve_kernel
from fdbench.metrics._core import (
    Workspace,
    _rowdot,
    augrc_auroc_binary,
    aurc_from_cum,
    binary_cumulative,
)
from fdbench.metrics._curve_kernel import compiled_pass, einsum_order_holds
from fdbench.metrics._ordered_sums import EINSUM_BUFFER
from fdbench.metrics.bootstrap import (
    _Batch,
    _curves_from_sums,
    _prepare_csf,
    _small,
    compiled_curves,
    einsum_buffers,
)

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


def _compiled(csfs, counts, buffers):
    """The compiled pass over ``counts`` for every CSF of ``csfs`` at once, as the bootstrap
    calls it."""
    kernel = compiled_pass()
    assert kernel is not None
    b = _Batch.of(csfs)
    sums = np.empty((len(csfs), counts.shape[0], 6))
    kernel(counts, b.orders, b.ends, b.ends_at, b.failed, b.groups, b.groups_at, buffers, sums)
    return [_curves_from_sums(part, CURVES) for part in sums]


@st.composite
def counted_samples(draw):
    """0/1 residuals, two CSFs' confidences (ties, all equal), and int32 counts over a wider
    set, some rows of no weight on the samples evaluated."""
    n = draw(st.integers(1, 40))
    r = draw(residuals(n, "binary"))
    c = draw(confidences(n))
    other = draw(confidences(n))
    extra = draw(st.integers(0, 5))
    rows = draw(st.integers(1, 6))
    values = st.lists(st.integers(0, 6), min_size=n + extra, max_size=n + extra)
    counts = np.array(draw(st.lists(values, min_size=rows, max_size=rows)), dtype=np.int32)
    zero = draw(st.lists(st.booleans(), min_size=rows, max_size=rows))
    picked = np.array(draw(st.permutations(range(n + extra)))[:n], dtype=np.intp)
    for row, empty in enumerate(zero):
        if empty:
            counts[row, picked] = 0
    return r, (c, other), counts, picked


def _placed(r, c, picked):
    s = _prepare_csf(r, c, False, True)
    return replace(s, ranking=replace(s.ranking, order=picked[s.ranking.order]))


@settings(max_examples=300, deadline=None)
@given(counted_samples(), st.booleans())
def test_compiled_pass_equals_numpy_path_bytes(data, small):
    """Same bytes (NaNs and signs of zero included) as binary_cumulative + augrc_auroc_binary
    + aurc_from_cum on the same block, for each of two CSFs passed together, with ties,
    all-equal scores, one class, rows of no weight, int32 or uint8 counts."""
    r, confs, counts, picked = data
    csfs = [_placed(r, c, picked) for c in confs]
    rows = counts.shape[0]
    buffers = np.full(rows, EINSUM_BUFFER if rows == 1 else 0, dtype=np.intp)
    with np.errstate(invalid="ignore", divide="ignore"):
        got = _compiled(csfs, _small(counts) if small else counts, buffers)
        for s, values in zip(csfs, got, strict=True):
            expected = _numpy_path(s, counts, Workspace(rows, r.size, int(r.sum()), np.int32))
            for key in CURVES:
                assert values[key].tobytes() == expected[key].tobytes(), key


@settings(max_examples=200, deadline=None)
@given(counted_samples())
def test_row_pass_writes_the_cumulative_sums(data):
    """cum, risks and sums from brute-force cumulative sums of the gathered counts; the AURC sum
    as NumPy's einsum adds it."""
    r, (c, _), counts, picked = data
    s = _prepare_csf(r, c, False, True)
    order = picked[s.ranking.order]
    rows, t = counts.shape[0], s.ranking.n_groups
    cum, risks, sums = np.empty((rows, t + 2)), np.empty((rows, t + 1)), np.empty((rows, 6))
    assert compiled_pass() is not None
    for b in range(rows):
        args = (s.failed, s.failures.groups, cum[b], risks[b], sums[b])
        _curve_kernel.row_pass(counts[b], order, s.group_ends, *args, 0)
    gathered = counts[:, order].astype(np.float64)
    ends = np.arange(r.size) if s.ranking.ends is None else s.ranking.ends
    W = np.cumsum(gathered, axis=1)[:, ends]
    L = np.cumsum(gathered * r[s.ranking.order], axis=1)[:, ends]
    np.testing.assert_array_equal(cum, np.concatenate([np.zeros((rows, 1)), W, W[:, -1:]], axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        np.testing.assert_array_equal(risks[:, 1:], np.where(W > 0, L / W, 0.0))
    np.testing.assert_array_equal(risks[:, 0], 0.0)
    w_prev = np.concatenate([np.zeros((rows, 1)), W[:, :-1]], axis=1)
    l_prev = np.concatenate([np.zeros((rows, 1)), L[:, :-1]], axis=1)
    loss = L - l_prev
    np.testing.assert_array_equal(sums[:, 0], W[:, -1])
    np.testing.assert_array_equal(sums[:, 1], L[:, -1])
    coef = cum[:, 2:] - cum[:, :-2]
    assert sums[:, 5].tobytes() == np.einsum("ij,ij->i", coef, risks[:, 1:]).tobytes()
    for b in range(rows):
        positive = np.flatnonzero(W[b] > 0)
        assert sums[b, 2] == (L[b, positive[0]] if positive.size else 0.0)
        assert sums[b, 3] == np.sum(loss[b] * w_prev[b])
        assert sums[b, 4] == np.sum(loss[b] * (W[b] - w_prev[b]))
        # the sum the pass leaves out: sum_g l_g L_{g-1} + 1/2 l_g^2 = 1/2 L_tot^2
        assert np.sum(loss[b] * l_prev[b]) + 0.5 * np.sum(loss[b] ** 2) == 0.5 * L[b, -1] ** 2


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
    buffers = np.full(rows, EINSUM_BUFFER if rows == 1 else 0, dtype=np.intp)
    (got,) = _compiled([s], _small(counts), buffers)
    expected = _numpy_path(s, counts, Workspace(rows, n, int(r.sum()), np.int32))
    for key in CURVES:
        assert got[key].tobytes() == expected[key].tobytes(), key


def test_einsum_buffers_mark_the_resamples_of_one_row_blocks():
    """Blocks of ``chunk`` resamples leave a block of one row at the end when B = 1 (mod chunk),
    and every block is one row when chunk = 1."""
    assert np.flatnonzero(einsum_buffers(13, 6)).tolist() == [12]
    assert not einsum_buffers(12, 6).any()
    assert not einsum_buffers(14, 6).any()
    assert (einsum_buffers(4, 1) == EINSUM_BUFFER).all()
    assert (einsum_buffers(1, 40) == EINSUM_BUFFER).all()


def test_einsum_order_check_tells_another_order():
    """The check holds for the NumPy path's einsum here and fails for a pairwise sum."""
    compiled_pass()
    assert einsum_order_holds(_rowdot)
    assert not einsum_order_holds(lambda a, b: np.sum(a * b, axis=1))


def test_totals_beyond_exact_integer_products_take_the_numpy_path(monkeypatch):
    """Resamples whose total weight squared may exceed 2^53 (more than MAX_TOTAL samples) are
    left to the NumPy engine, which gives the same values where the pass applies."""
    rng = np.random.default_rng(5)
    r = (rng.random(50) < 0.3).astype(float)
    c = {"a": rng.normal(size=50) - r, "b": rng.integers(0, 4, 50).astype(float)}
    s = [_prepare_csf(r, v, False, True) for v in c.values()]
    assert compiled_curves(s, 50, 7, 0, None, 7, CURVES) is not None
    fast = M.bootstrap(r, c, metrics=CURVES, n_resamples=7)
    monkeypatch.setattr(_curve_kernel, "MAX_TOTAL", 49)
    assert compiled_curves(s, 50, 7, 0, None, 7, CURVES) is None
    slow = M.bootstrap(r, c, metrics=CURVES, n_resamples=7)
    assert fast["value"].to_numpy().tobytes() == slow["value"].to_numpy().tobytes()


@pytest.mark.parametrize(
    ("n", "n_resamples"), [(1, 30), (2, 30), (7, 30), (999, 30), (20_000, 13), (70_000, 2)]
)
@pytest.mark.parametrize("ties", [True, False])
def test_bootstrap_values_do_not_depend_on_the_path(n, n_resamples, ties):
    """AURC, AUGRC and AUROC_f alone (compiled pass) equal the same columns computed beside a
    metric that needs the cumulative arrays (NumPy path, in blocks of 2^17 // n resamples),
    bit for bit; strata and the 1e300 scale included. At n = 20,000 the NumPy path's last
    block of 13 resamples is one row, at 70,000 every block (sums in pieces of 8,192)."""
    rng = np.random.default_rng(n)
    r = (rng.random(n) < 0.3).astype(float)
    c = np.where(rng.random(n) < 0.5, 1e300, -1e300) if ties else rng.normal(size=n) - r
    strata = rng.integers(0, 3, size=n)
    fast = M.bootstrap(
        r, {"a": c, "b": np.zeros(n)}, metrics=CURVES, n_resamples=n_resamples, stratify=strata
    )
    slow = M.bootstrap(
        r,
        {"a": c, "b": np.zeros(n)},
        metrics=[*CURVES, "ap_f_error"],
        n_resamples=n_resamples,
        stratify=strata,
    )
    slow = slow[slow["metric"] != "ap_f_error"].reset_index(drop=True)
    assert fast["value"].to_numpy().tobytes() == slow["value"].to_numpy().tobytes()
