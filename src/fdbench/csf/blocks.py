"""The logit CSFs of one set of logits computed row block by row block.

MSR, MLS, PE, energy, DOCTOR and TEMP-MLS are row-wise: each sample's confidence depends on its
own row of logits only. :func:`softmax_csfs` therefore computes them on blocks of
:data:`BLOCK_BYTES` of logits, sharing one log-softmax per block between MSR and PE, and writes
each into a float64 vector of N confidences. The temporaries of a block (a few times its size)
replace the several N × K temporaries that one whole-array call per CSF allocates, so the peak
memory of the CSFs is the logits plus the N-vectors (ImageNet's 50,000 × 1,000 logits: 381 MiB
of logits, 0.4 MiB per CSF). Each value is the one the array-level function of
:mod:`fdbench.csf.softmax` (or :func:`fdbench.csf.temp_mls`) gives on the whole array, bit for
bit: the same NumPy operations run on each row, and every reduction runs along a row (a row's
sum does not depend on the rows beside it; ``tests/csf/test_blocks.py`` checks odd block
sizes, one block and N = 1).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from scipy.special import logsumexp

from . import softmax as sm
from .temperature import temp_mls

__all__ = ["BLOCK_BYTES", "SOFTMAX_CSFS", "row_blocks", "softmax_csfs"]

#: Bytes of logits computed at once (a block of rows of at least one row).
BLOCK_BYTES = 2**22
#: The CSFs :func:`softmax_csfs` returns, in order (``TEMP-MLS`` only with a temperature).
SOFTMAX_CSFS = ("MSR", "MLS", "PE", "energy", "DOCTOR", "TEMP-MLS")


def row_blocks(n_rows: int, row_bytes: int, block_bytes: int = BLOCK_BYTES) -> Iterator[slice]:
    """Consecutive slices covering ``range(n_rows)``, each of ``block_bytes // row_bytes`` rows
    (at least one)."""
    if n_rows < 0 or row_bytes < 1 or block_bytes < 1:
        raise ValueError(
            f"n_rows must be >= 0 and row_bytes, block_bytes >= 1; got {n_rows}, {row_bytes}, "
            f"{block_bytes}"
        )
    step = max(1, block_bytes // row_bytes)
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))


def softmax_csfs(
    logits: np.ndarray,
    *,
    temperature: float | None = None,
    block_bytes: int = BLOCK_BYTES,
) -> dict[str, np.ndarray]:
    """:data:`SOFTMAX_CSFS` of float64 ``logits`` (N × K, finite), computed in row blocks of
    ``block_bytes``.

    - ``MSR`` = :func:`fdbench.csf.msr` and ``PE`` = :func:`fdbench.csf.pe`, from one
      log-softmax of the block;
    - ``MLS`` = :func:`fdbench.csf.mls`, ``energy`` = :func:`fdbench.csf.energy`,
      ``DOCTOR`` = :func:`fdbench.csf.doctor` (its own stable sums of the block);
    - ``TEMP-MLS`` = :func:`fdbench.csf.temp_mls` at ``temperature``, when one is given.

    Returns ``{name: confidence}`` (float64, length N), equal bit for bit to the whole-array
    functions.
    """
    z = np.asarray(logits)
    if z.dtype != np.float64 or z.ndim != 2 or z.shape[0] == 0 or z.shape[1] == 0:
        raise ValueError(f"logits must be a non-empty float64 N x K array, got {z.dtype} {z.shape}")
    names = SOFTMAX_CSFS if temperature is not None else SOFTMAX_CSFS[:-1]
    out = {name: np.empty(z.shape[0]) for name in names}
    for rows in row_blocks(z.shape[0], z.shape[1] * z.itemsize, block_bytes):
        block = z[rows]
        if not np.all(np.isfinite(block)):
            bad = int((~np.isfinite(z)).sum())
            raise ValueError(f"logits must be finite, found {bad} NaN/inf")
        log_probs = sm.log_softmax(block)
        out["MSR"][rows] = sm.msr_from_log_probs(log_probs)
        out["PE"][rows] = -sm.entropy_from_log_probs(log_probs, axis=1)
        del log_probs
        out["MLS"][rows] = np.max(block, axis=1)
        out["energy"][rows] = logsumexp(block, axis=1)
        out["DOCTOR"][rows] = sm.doctor(block)
        if temperature is not None:
            out["TEMP-MLS"][rows] = temp_mls(block, temperature)
    return out
