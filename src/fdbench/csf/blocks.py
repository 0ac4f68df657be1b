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

The block's operations are NumPy's, in the order SciPy 1.17's ``log_softmax`` and ``logsumexp``
and :func:`fdbench.csf.doctor` run them on real finite input (:func:`_block_csfs` says which
step is whose), sharing what they have in common: the shifted logits ``u = z - max z`` and
``exp(u)``. No SciPy is imported, and each array-level pass runs once instead of once per CSF.

The blocks are computed on up to :data:`MAX_THREADS` threads
(:func:`fdbench.core.threads.usable_threads`; NumPy's passes release the GIL), each writing
its own rows of the results, so the values do not depend on the threads; the temporaries of
that many blocks are alive at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from fdbench.core.threads import thread_map, usable_threads

from .temperature import temp_mls

__all__ = ["BLOCK_BYTES", "SOFTMAX_CSFS", "LogitTerms", "row_blocks", "softmax_csfs"]

#: Bytes of logits computed at once (a block of rows of at least one row).
BLOCK_BYTES = 2**22
#: Most blocks computed at once (on as many threads).
MAX_THREADS = 4
#: The CSFs :func:`softmax_csfs` returns, in order (``TEMP-MLS`` only with a temperature).
SOFTMAX_CSFS = ("MSR", "MLS", "PE", "energy", "DOCTOR", "TEMP-MLS")


class LogitTerms(NamedTuple):
    """Per-sample terms of the logit metrics of one split, from the log-softmax of the CSF
    blocks: ``nll`` = ``-log p_i(y_i)`` and ``brier`` = ``Σ_c (p_ic - [y_i = c])²`` (the terms
    of :func:`fdbench.metrics.per_sample_scores`, bit for bit; NaN where the label is not a
    class index) and ``predicted`` = ``argmax_c z_ic``."""

    nll: np.ndarray
    brier: np.ndarray
    predicted: np.ndarray


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
    functions. :func:`softmax_csfs_and_terms` also gives the split's :class:`LogitTerms`.
    """
    return softmax_csfs_and_terms(logits, None, temperature=temperature, block_bytes=block_bytes)[0]


def softmax_csfs_and_terms(
    logits: np.ndarray,
    labels: np.ndarray | None,
    *,
    temperature: float | None = None,
    block_bytes: int = BLOCK_BYTES,
) -> tuple[dict[str, np.ndarray], LogitTerms | None]:
    """:func:`softmax_csfs` and, with ``labels`` (N integers, -1 for new-class samples), the
    :class:`LogitTerms` of the same row blocks: each block's log-softmax and its exponential
    (which PE needs too) give the NLL and Brier terms, the arg-max of the block the
    prediction. Computed where the logits are C-contiguous (a block is then the same
    contiguous rows that :func:`fdbench.evaluation.logit_scores.study_logit_scores` reads,
    so each term is that function's bit for bit) and the labels are N integers; ``None``
    otherwise."""
    z = np.asarray(logits)
    if z.dtype != np.float64 or z.ndim != 2 or z.shape[0] == 0 or z.shape[1] == 0:
        raise ValueError(f"logits must be a non-empty float64 N x K array, got {z.dtype} {z.shape}")
    names = SOFTMAX_CSFS if temperature is not None else SOFTMAX_CSFS[:-1]
    out = {name: np.empty(z.shape[0]) for name in names}
    terms = None
    y = None
    if labels is not None and z.flags.c_contiguous:
        y = np.asarray(labels)
        if y.shape == (z.shape[0],) and y.dtype.kind in "iu":
            n = z.shape[0]
            terms = LogitTerms(np.empty(n), np.empty(n), np.empty(n, dtype=np.int64))

    def compute(rows: slice) -> None:
        block = z[rows]
        if not np.all(np.isfinite(block)):
            bad = int((~np.isfinite(z)).sum())
            raise ValueError(f"logits must be finite, found {bad} NaN/inf")
        block_terms = None if terms is None or y is None else (terms, rows, y[rows])
        for name, values in _block_csfs(block, block_terms).items():
            out[name][rows] = values
        if temperature is not None:
            out["TEMP-MLS"][rows] = temp_mls(block, temperature)

    blocks = row_blocks(z.shape[0], z.shape[1] * z.itemsize, block_bytes)
    thread_map(compute, blocks, threads=min(usable_threads(), MAX_THREADS))
    return out, terms


def _block_csfs(
    z: np.ndarray, terms: tuple[LogitTerms, slice, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """MSR, MLS, PE, energy and DOCTOR of one float64 block ``z`` (n × K, finite).

    With ``top = max z`` (per row: the value at the first arg-max, which needs no second
    pass over the row; ``np.max`` itself where a maximum is zero, whose sign it picks),
    ``u = z - top`` and ``e = exp(u)``:

    - SciPy's ``log_softmax``: ``log p = u - log(Σ e)`` (``x_max`` is finite, so it is not
      replaced); MSR is ``exp(max log p)``, and ``max log p = 0 - log(Σ e)`` exactly because
      ``max u = 0`` and rounded subtraction is monotone;
    - SciPy's ``logsumexp``: the maxima are left out of the sum and counted (``m``), then
      ``log1p(s / m) + log(m) + top`` with ``s`` the sum of the other terms (``s / m`` is 0
      where ``s`` is 0 since ``m >= 1``; the sign and the non-finite fallback never apply to
      finite rows); ``s`` is DOCTOR's ``S1 - 1`` (the first maximum left out) and ``m`` is 1
      unless a block has a row with tied maxima, when the block counts them and sums again
      without any maximum (the arrays keep the layout of ``z``, as SciPy's do, so each row
      sums in the same order);
    - :func:`fdbench.csf.doctor` as written there.

    ``terms`` = (the split's :class:`LogitTerms`, the block's rows, its labels): the block's
    terms are written there, as :func:`fdbench.metrics.per_sample_scores` computes them from
    the same ``log p`` (its ``log_softmax`` runs the steps above) and ``exp(log p)``.
    """
    first = np.argmax(z, axis=1)
    first_top = first[:, None]
    top = np.take_along_axis(z, first_top, axis=1)
    if not np.all(top):  # a zero maximum: the sign of zero is np.max's to choose
        top = np.max(z, axis=1, keepdims=True)
    u = z - top
    e = np.exp(u)
    log_sum = np.log(np.sum(e, axis=1, keepdims=True))
    log_probs = u - log_sum
    probs = np.exp(log_probs)
    pe = np.sum(probs * log_probs, axis=1)  # -entropy_from_log_probs: -(-x) is x exactly
    if terms is not None:
        _write_terms(terms, log_probs, probs, first)
    del log_probs, probs
    msr = np.exp(0.0 - log_sum[:, 0])
    np.put_along_axis(e, first_top, 0.0, axis=1)
    rest = np.sum(e, axis=1)
    tied = u == 0.0
    np.put_along_axis(tied, first_top, False, axis=1)
    others = rest
    count_f = np.ones(rest.size)
    if np.any(tied):
        others = np.sum(np.where(tied, 0.0, e), axis=1)
        count_f += np.count_nonzero(tied, axis=1)
    energy = np.log1p(others / count_f) + np.log(count_f) + top[:, 0]
    e2 = np.exp(2.0 * u)
    np.put_along_axis(e2, first_top, 0.0, axis=1)
    log_sum_sq = np.log1p(np.sum(e2, axis=1)) - 2.0 * np.log1p(rest)
    doctor = np.minimum(-np.expm1(-log_sum_sq), 0.0)
    return {"MSR": msr, "MLS": top[:, 0], "PE": pe, "energy": energy, "DOCTOR": doctor}


def _write_terms(
    terms: tuple[LogitTerms, slice, np.ndarray],
    log_probs: np.ndarray,
    probs: np.ndarray,
    predicted: np.ndarray,
) -> None:
    """A block's NLL and Brier terms (``fdbench.metrics.scoring``'s ``_nll_terms`` and
    ``_brier_terms``: the same operations on the same ``log p`` and ``p``), NaN where the
    label is not a class index, and its arg-max."""
    split_terms, rows, y = terms
    valid = (y >= 0) & (y < log_probs.shape[1])
    index = np.where(valid, y, 0)
    at = np.arange(y.size)
    nll = -log_probs[at, index]
    brier = np.einsum("ij,ij->i", probs, probs) - 2.0 * probs[at, index] + 1.0
    split_terms.nll[rows] = np.where(valid, nll, np.nan)
    split_terms.brier[rows] = np.where(valid, brier, np.nan)
    split_terms.predicted[rows] = predicted
