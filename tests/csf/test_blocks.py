"""The logit CSFs computed in row blocks equal the whole-array functions bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fdbench.csf import doctor, energy, mls, msr, pe, temp_mls
from fdbench.csf.blocks import SOFTMAX_CSFS, row_blocks, softmax_csfs


def _whole(z: np.ndarray, temperature: float | None) -> dict[str, np.ndarray]:
    out = {"MSR": msr(z), "MLS": mls(z), "PE": pe(z), "energy": energy(z), "DOCTOR": doctor(z)}
    if temperature is not None:
        out["TEMP-MLS"] = temp_mls(z, temperature)
    return out


def _assert_identical(blocked: dict[str, np.ndarray], whole: dict[str, np.ndarray]) -> None:
    assert list(blocked) == list(whole)
    for name, values in whole.items():
        assert blocked[name].dtype == np.float64
        np.testing.assert_array_equal(blocked[name], values, err_msg=name)
        np.testing.assert_array_equal(  # the sign of zero too
            blocked[name].view(np.uint64), values.view(np.uint64), err_msg=name
        )


@settings(max_examples=60, deadline=None)
@given(
    z=st.integers(1, 40).flatmap(
        lambda n: st.integers(2, 12).flatmap(
            lambda k: arrays(
                np.float64,
                (n, k),
                elements=st.one_of(
                    st.sampled_from([0.0, -0.0, 1.0, -1.0, 30.0]),
                    st.floats(-60, 60, allow_nan=False),
                ),
            )
        )
    ),
    rows=st.integers(1, 45),
    temperature=st.one_of(st.none(), st.floats(0.05, 20)),
)
def test_blocks_equal_whole_array(z, rows, temperature):
    """Any block size (odd, one row, one block, more rows than N), N = 1 included, heavy ties."""
    blocked = softmax_csfs(z, temperature=temperature, block_bytes=rows * z.shape[1] * 8)
    _assert_identical(blocked, _whole(z, temperature))


@pytest.mark.parametrize("n, k", [(1, 1000), (1, 2), (4099, 10), (777, 1000)])
@pytest.mark.parametrize("rows", [1, 3, 511, 10**6])
def test_blocks_equal_whole_array_wide_and_tall(n, k, rows):
    """K = 1000 (pairwise row sums), K = 10, odd block sizes, a block larger than N."""
    z = np.random.default_rng(n + k).standard_normal((n, k)) * 4
    blocked = softmax_csfs(z, temperature=1.7, block_bytes=rows * k * 8)
    _assert_identical(blocked, _whole(z, 1.7))


def test_zero_maxima_keep_the_sign_np_max_picks():
    """np.max picks +0.0 from (-0.0, 0.0) and -0.0 from (0.0, -0.0): not the first arg-max."""
    z = np.array([[-0.0, 0.0, -1.0], [0.0, -0.0, -1.0], [-0.0, -1.0, -0.0], [2.0, 0.0, -0.0]])
    _assert_identical(softmax_csfs(z, block_bytes=z.shape[1] * 8), _whole(z, None))


def test_names_and_refusals():
    z = np.zeros((3, 4))
    assert tuple(softmax_csfs(z)) == SOFTMAX_CSFS[:-1]
    assert tuple(softmax_csfs(z, temperature=2.0)) == SOFTMAX_CSFS
    with pytest.raises(ValueError, match="logits must be finite"):
        softmax_csfs(np.array([[0.0, np.inf]]), block_bytes=8)
    with pytest.raises(ValueError, match="logits must be a non-empty float64"):
        softmax_csfs(np.zeros((3, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="logits must be a non-empty float64"):
        softmax_csfs(np.zeros((0, 4)))


def test_row_blocks():
    assert list(row_blocks(7, 8, 24)) == [slice(0, 3), slice(3, 6), slice(6, 7)]
    assert list(row_blocks(2, 100, 1)) == [slice(0, 1), slice(1, 2)]
    assert list(row_blocks(0, 8)) == []
    with pytest.raises(ValueError, match="row_bytes"):
        list(row_blocks(3, 0))


@settings(max_examples=80, deadline=None)
@given(
    z=st.integers(1, 12).flatmap(
        lambda n: st.integers(1, 20).flatmap(
            lambda k: arrays(
                np.float64,
                (n, k),
                elements=st.one_of(
                    st.sampled_from([0.0, -0.0, 5e-324, 1e308, -1e308, 700.0, -745.0]),
                    st.floats(allow_nan=False, allow_infinity=False),
                ),
            )
        )
    ),
    fortran=st.booleans(),
)
def test_blocks_equal_scipy_on_extreme_logits(z, fortran):
    """The NumPy block kernel equals SciPy's ``log_softmax``/``logsumexp`` (through the
    whole-array CSFs) at any magnitude, with signed zeros, subnormals, K = 1 and tied maxima,
    for C- and Fortran-ordered logits."""
    z = np.asfortranarray(z) if fortran else z
    with np.errstate(all="ignore"):
        whole = _whole(z, None)
        blocked = softmax_csfs(z, block_bytes=z.nbytes)
    for name, values in whole.items():
        np.testing.assert_array_equal(blocked[name], values, err_msg=name)
        np.testing.assert_array_equal(  # the sign of zero too
            blocked[name].view(np.uint64), values.view(np.uint64), err_msg=name
        )
