"""Fixtures shared by the metric tests."""

from __future__ import annotations

from types import SimpleNamespace

import pytest


@pytest.fixture(scope="session")
def kernels() -> SimpleNamespace:
    """The block walk's compiled kernels (:mod:`fdbench.metrics._blockwise_kernel`); the test
    is skipped without numba or where numba's sums differ from this NumPy's einsum."""
    pytest.importorskip("numba")
    from fdbench.metrics import _blockwise_kernel

    compiled = _blockwise_kernel.compiled_kernels()
    if compiled is None:
        pytest.skip("numba's sums differ from this NumPy's einsum")
    return compiled
