"""Sums in NumPy's order fed in pieces equal NumPy's own reductions bit for bit: the pairwise
sum of a run formed leaf by leaf is ``np.add.reduce`` of the whole run, and the optimal CSF's
AURC for 0/1 residuals, summed that way, is the closed form over one array of F."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fdbench.metrics import _ordered_sums
from fdbench.metrics._core import optimal_binary_unit
from fdbench.metrics._ordered_sums import pairwise, pairwise_rows


def _spread(n: int, seed: int) -> np.ndarray:
    """Values whose sum changes with the order of the additions."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=n) * 2.0 ** rng.integers(-40, 41, n)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 5 * _ordered_sums.PAIRWISE_LEAF), seed=st.integers(0, 2**32 - 1))
def test_pairwise_is_add_reduce(n, seed):
    values = _spread(n, seed)
    calls = []

    def leaf(i: int, j: int) -> np.ndarray:
        calls.append(j - i)
        return values[i:j].copy()

    assert pairwise(leaf, 0, n) == np.add.reduce(values)
    assert max(calls) <= _ordered_sums.PAIRWISE_LEAF and sum(calls) == n
    rows = np.stack([values, values[::-1].copy()])
    got = pairwise_rows(lambda i, j: rows[:, i:j], 0, n)
    assert got.tobytes() == np.add.reduce(rows, axis=1).tobytes()


def _closed_form(n_ok: int, n_fail: int) -> tuple[float, float]:
    """The optimum's closed form over one array of the F failures (the definition in
    ``optimal_binary_unit``'s docstring, as it was computed before it was formed in leaves)."""
    n = n_ok + n_fail
    if n_fail == 0:
        return 0.0, 0.0
    k = np.arange(1.0, n_fail + 1.0)
    risk_sum = float(np.sum(k / (k + n_ok)))
    first = 1.0 if n_ok == 0 else 0.0
    return (risk_sum + 0.5 * first - 0.5 * n_fail / n) / n, 0.5 * float(n_fail**2) / n**2


@settings(max_examples=60, deadline=None)
@given(
    n_ok=st.one_of(st.integers(0, 20), st.integers(0, 10**7)),
    n_fail=st.one_of(st.integers(0, 20), st.integers(0, 3 * _ordered_sums.PAIRWISE_LEAF + 9)),
)
def test_optimal_binary_unit_in_leaves_is_the_closed_form(n_ok, n_fail):
    if n_ok + n_fail == 0:
        return
    assert optimal_binary_unit(n_ok, n_fail) == _closed_form(n_ok, n_fail)


def test_optimal_binary_unit_many_failures():
    for n_ok, n_fail in ((0, 10**6), (10**5, 9 * 10**5), (1, 2**20 + 3)):
        assert optimal_binary_unit(n_ok, n_fail) == _closed_form(n_ok, n_fail)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 3 * _ordered_sums.PAIRWISE_LEAF), seed=st.integers(0, 2**32 - 1))
def test_pairwise_of_reversed_views_is_add_reduce_of_the_copy(n, seed):
    """The value sort's ECE sums runs of the descending confidences as reversed views of the
    ascending ones, without copies: the same bits as ``np.add.reduce`` of each copy."""
    values = _spread(n, seed)
    reversed_view = values[::-1]
    got = pairwise(lambda i, j: reversed_view[i:j], 0, n)
    assert got == np.add.reduce(np.ascontiguousarray(reversed_view))
