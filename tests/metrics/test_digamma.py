"""The compiled digamma above 10 is SciPy's bit for bit, and the compiled digamma step of the
weighted soft optimum forms the terms NumPy's path forms: groups at or below 10 left to
SciPy, shared arguments, NaN; a probe that disagrees turns the compiled path off."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdbench.metrics import _digamma, _soft_optimum
from fdbench.metrics._core import digamma_steps

pytest.importorskip("numba")
special = pytest.importorskip("scipy.special")


@pytest.fixture(scope="module")
def step_terms():
    compiled = _digamma.compiled_step_terms()
    assert compiled is not None  # numba and this SciPy: the probe holds here
    return compiled


def _numpy_terms(out: np.ndarray, upper: np.ndarray, lower: np.ndarray) -> np.ndarray:
    want = out.copy()
    harmonic = digamma_steps(upper.copy(), lower.copy())
    np.add(want[1], np.multiply(want[2], harmonic, out=harmonic), out=want[2])
    return want


def test_psi_above_ten_is_scipys_digamma(step_terms):
    """Log-uniform over (10, 1e300], near 10 and 1e17, and infinity (the probe's ranges and
    others drawn apart from them)."""
    rng = np.random.default_rng(1)
    x = np.concatenate(
        [
            np.exp(rng.uniform(np.log(10.0), np.log(1e300), 200_000)),
            10.0 + rng.random(10_000) * 1e-6,
            1e17 * (1.0 + (rng.random(1_000) - 0.5) * 1e-12),
            [np.nextafter(10.0, 11.0), 11.0, 1e300, np.inf],
        ]
    )
    from numba import njit

    got = np.empty_like(x)
    njit(_digamma._psi_values)(x, got)  # calls psi_above_ten as the fixture compiled it
    assert got.tobytes() == special.digamma(x).tobytes()


@settings(max_examples=200, deadline=None)
@given(
    k=st.integers(1, 500),
    kind=st.sampled_from(["scaled", "whole", "tiny first", "spread", "huge"]),
    start=st.sampled_from([0.0, 3.5, 9.0, 10.0, 1e6]),
    seed=st.integers(0, 2**32 - 1),
)
def test_step_terms_equal_numpys_digamma_steps(step_terms, k, kind, start, seed):
    """Runs starting below 10 (their first groups left to SciPy: the count returned), at
    10, far above; weights whole, spread over 2^-30..2^30, tiny at first (many groups at or
    below 10), huge; a group's lower argument equal to the one before's upper or not."""
    rng = np.random.default_rng(seed)
    if kind == "scaled":
        w = rng.random(k) * 2.0
    elif kind == "whole":
        w = np.round(rng.random(k) * 10.0) + 1.0
    elif kind == "tiny first":
        w = np.where(np.arange(k) < k // 2, 1e-3, 1.0) * rng.random(k) + 1e-300
    elif kind == "spread":
        w = rng.random(k) * 2.0 ** rng.integers(-30, 31, k) + 1e-300
    else:
        w = rng.random(k) * 1e200
    W0 = start + np.cumsum(w) - w
    upper, lower = W0 + w + 1.0, W0 + 1.0
    out = rng.normal(size=(4, k))
    want = _numpy_terms(out, upper, lower)
    got = out.copy()
    left = step_terms(got, upper, lower)
    assert left == np.count_nonzero(~(lower > 10.0))
    small = ~(lower > 10.0)
    assert got[:, ~small].tobytes() == want[:, ~small].tobytes()
    assert got[:, small].tobytes() == out[:, small].tobytes()  # left as they were
    finished = _soft_optimum._finish_terms(out.copy(), upper.copy(), lower.copy(), step_terms)
    assert finished.tobytes() == np.add.reduce(want, axis=1).tobytes()


def test_nan_arguments_are_left_to_scipy(step_terms):
    upper = np.array([12.0, np.nan, 15.0, 17.0])
    lower = np.array([11.0, np.nan, 13.0, 15.0])
    out = np.arange(16.0).reshape(4, 4)
    got = out.copy()
    assert step_terms(got, upper, lower) == 1
    finished = _soft_optimum._finish_terms(out.copy(), upper.copy(), lower.copy(), step_terms)
    want = np.add.reduce(_numpy_terms(out, upper, lower), axis=1)
    assert finished.tobytes() == want.tobytes()


def test_a_probe_that_differs_turns_the_compiled_step_off(monkeypatch):
    """A digamma that differs from SciPy's in one value on the probes is refused."""

    def off_by_one_ulp(x: np.ndarray, out: np.ndarray) -> None:
        out[:] = special.digamma(x)
        out[len(out) // 2] = np.nextafter(out[len(out) // 2], np.inf)

    assert not _digamma.digamma_holds(off_by_one_ulp)
    assert _digamma.digamma_holds(lambda x, out: np.copyto(out, special.digamma(x)))
    _digamma.compiled_step_terms.cache_clear()
    try:
        monkeypatch.setattr(_digamma, "digamma_holds", lambda psi_values: False)
        assert _digamma.compiled_step_terms() is None
    finally:
        monkeypatch.undo()
        _digamma.compiled_step_terms.cache_clear()
    assert _digamma.compiled_step_terms() is not None
