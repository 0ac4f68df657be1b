"""SciPy's digamma above 10, compiled: the weighted soft optimum's digamma steps in one pass.

The optimal CSF's AURC with weights (:func:`~fdbench.metrics._core.optimal_from_counts`)
takes one difference of digammas per group of equal residuals, psi(W0 + w + 1) - psi(W0 + 1),
where W0 is the scaled weight before the group: ``scipy.special.digamma`` costs ~16 ns a
value, and with NumPy's passes around it (the shared arguments, the difference, the product
and the sum of the term) the step was ~17 ms of the soft optimum's ~50 at 10^6.

Here :func:`_step_terms` forms the term in one compiled pass. For x > 10, SciPy's digamma
(``xsf::digamma`` -> Cephes ``psi`` in SciPy's ``special/xsf/cephes/psi.h``; Moshier, Cephes
Math Library) is the asymptotic series alone, ``psi_asy``::

    y = z * polevl(z, A, 6) with z = 1 / x^2   (y = 0 from x = 1e17 on)
    psi(x) = log(x) - 0.5 / x - y

with A the series' coefficients B_2k / 2k (1/12, -1/120, 1/252, -1/240, 1/132,
-691/32760, 1/12, highest power first, Horner's rule as ``polevl`` evaluates it). The
compiled :func:`_psi_above_ten` performs the same IEEE operations in the same order (numba
without fast-math: nothing reordered or fused; the C library's ``log`` of this process, which
SciPy calls too), so its value is SciPy's bit for bit. That is checked once per process on
probes across (10, 1e300] and at the breakpoints (:func:`digamma_holds`); where it does not
hold (another SciPy, another ``log``), the NumPy path is taken. Arguments of 10 or less (the
first groups only: W0 grows by about one per group) are left to SciPy itself.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

#: The asymptotic series' coefficients, highest power first (Cephes ``psi_asy``'s ``A``).
_A0, _A1, _A2, _A3, _A4, _A5, _A6 = (
    1.0 / 12.0,
    -691.0 / 32760.0,
    1.0 / 132.0,
    -1.0 / 240.0,
    1.0 / 252.0,
    -1.0 / 120.0,
    1.0 / 12.0,
)
#: Where SciPy's digamma is the asymptotic series alone (x > 10), and where the series'
#: correction is dropped (x >= 1e17).
ABOVE = 10.0
_SERIES_END = 1.0e17


def _psi_above_ten(x: float) -> float:
    """``scipy.special.digamma(x)`` for x > 10 (Cephes ``psi_asy``; see the module
    docstring)."""
    y = 0.0
    if x < _SERIES_END:
        z = 1.0 / (x * x)
        y = z * ((((((_A0 * z + _A1) * z + _A2) * z + _A3) * z + _A4) * z + _A5) * z + _A6)
    return math.log(x) - (0.5 / x) - y


def _psi_values(x: np.ndarray, out: np.ndarray) -> None:
    """out[i] = :func:`_psi_above_ten` of x[i] (the probe's loop)."""
    for i in range(x.shape[0]):
        out[i] = psi_above_ten(x[i])


def _step_terms(out: np.ndarray, upper: np.ndarray, lower: np.ndarray) -> int:
    """Row 2 of a run's terms made w r + (L0 - r W0) h in place, with h = psi(upper) -
    psi(lower), for every group whose ``lower`` (hence ``upper`` >= ``lower``) is above 10:
    out[2, k] = out[1, k] + out[2, k] * (psi(upper[k]) - psi(lower[k])), the operations of
    NumPy's ``digamma_steps``, multiply and add in their order. A group's psi(lower) is the
    group before's psi(upper) where the two arguments are equal (the same float: the same
    value). Returns the number of groups left as they were (lower <= 10, or NaN)."""
    left = 0
    previous_upper = math.nan
    previous_psi = math.nan
    for k in range(upper.shape[0]):
        lo = lower[k]
        if not lo > ABOVE:
            left += 1
            previous_upper = math.nan
            continue
        at_lower = previous_psi if lo == previous_upper else psi_above_ten(lo)
        hi = upper[k]
        at_upper = psi_above_ten(hi)
        out[2, k] = out[1, k] + out[2, k] * (at_upper - at_lower)
        previous_upper = hi
        previous_psi = at_upper
    return left


def digamma_holds(psi_values: Callable[[np.ndarray, np.ndarray], None]) -> bool:
    """Whether the compiled :func:`_psi_values` equals ``scipy.special.digamma`` bit for bit
    on probes above 10: log-uniform over (10, 1e300], the whole numbers 11..10^4, the floats
    next to 10, 1e17 and its neighbours, and infinity."""
    from scipy.special import digamma  # lazy: scipy costs ~0.3 s to import

    rng = np.random.default_rng(10)
    x = np.concatenate(
        [
            np.exp(rng.uniform(math.log(ABOVE), math.log(1e300), 20_000)),
            np.exp(rng.uniform(math.log(ABOVE), math.log(1e4), 20_000)),
            np.arange(11.0, 10_001.0),
            [np.nextafter(ABOVE, np.inf), np.nextafter(_SERIES_END, 0.0), _SERIES_END],
            [np.nextafter(_SERIES_END, np.inf), np.inf],
        ]
    )
    x = x[x > ABOVE]
    got = np.empty_like(x)
    psi_values(x, got)
    return bool(np.array_equal(got.view(np.uint64), digamma(x).view(np.uint64)))


#: The compiled :func:`_psi_above_ten` that the other kernels call (numba resolves it when it
#: compiles them).
psi_above_ten = _psi_above_ten


@functools.cache
def compiled_step_terms() -> Callable[[np.ndarray, np.ndarray, np.ndarray], int] | None:
    """:func:`_step_terms` compiled by numba (imported here), or ``None`` where numba is
    missing or the compiled digamma differs from SciPy's (:func:`digamma_holds`)."""
    global psi_above_ten
    try:
        from numba import njit
    except ImportError:
        return None
    jit = njit(cache=True, error_model="numpy", nogil=True)
    psi_above_ten = jit(_psi_above_ten)
    if not digamma_holds(jit(_psi_values)):
        return None
    step_terms: Callable[[np.ndarray, np.ndarray, np.ndarray], int] = jit(_step_terms)
    return step_terms
