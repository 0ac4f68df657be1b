"""Seeded, paired bootstrap: multinomial counts as sample weights over one sort per CSF."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, cast

import numpy as np
from numpy.typing import ArrayLike

from ._core import (
    FailureIndex,
    Ranking,
    Workspace,
    ap_error_from_cum,
    ap_success_from_cum,
    augrc_auroc_binary,
    augrc_auroc_from_sums,
    augrc_from_cum,
    aurc_from_cum,
    binary_cumulative,
    coverage_at_risk_from_cum,
    failure_index,
    fpr_at_tpr_from_cum,
    min_risk_at_coverage_from_risks,
    optimal_from_counts,
    rank,
    risk_at_coverage_from_cum,
    selective_risks_from_cum,
    success_cumulative,
)
from ._validation import check_inputs
from .calibration import bin_indices, ece_mce_from_sums
from .selective import naurc_from_parts
from .specs import metric_specs
from .suite import BINARY_ONLY_KEYS, METRIC_KEYS, SOFT_METRIC_KEYS

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["bootstrap", "bootstrap_counts", "bootstrap_summary", "iter_bootstrap_counts"]

_CHUNK_ELEMENTS = 1 << 17
_CACHED_BYTES = 64 << 20
_OPTIMUM_KEYS = frozenset({"eaurc", "eaugrc", "naurc"})
#: Metrics that need the cumulative losses L no more once AURC and AUGRC are computed: with
#: no other, AURC may overwrite L with its selective risks.
_WITHOUT_L = frozenset(
    {"aurc", "augrc", "eaurc", "eaugrc", "naurc", "auroc_f"}
    | {"accuracy", "mean_residual", "ece", "mce"}
)


def _check_count(value: int, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}: expected an integer, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name}: expected an integer >= {minimum}, got {value}")
    return int(value)


#: Bytes a resample holds until the end of a call: the child ``SeedSequence`` it draws from
#: (about 380 bytes, measured), rounded up.
SEED_BYTES = 512
#: Bytes per value of a resample in :func:`bootstrap`'s result: its block, the concatenated
#: column and, for several CSFs, the long table's four columns.
_VALUE_BYTES = 48


def available_memory() -> int | None:
    """Bytes of memory this process can still allocate without swapping: ``psutil``'s
    ``available`` if installed, else ``MemAvailable`` of /proc/meminfo, else the free pages
    of ``os.sysconf``; ``None`` when none of them can tell."""
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except ImportError:
        pass
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _gib(n_bytes: float) -> str:
    return f"{n_bytes / 2**30:.3g} GiB" if n_bytes >= 2**30 else f"{n_bytes / 2**20:.3g} MiB"


def check_memory(needed: float, what: str) -> None:
    """Refuse, before allocating anything, work whose memory ``needed`` (bytes) exceeds what
    is available (:func:`available_memory`), with a ``ValueError`` that says both and names
    ``what`` (e.g. ``"n_resamples: 10^12 resamples"``)."""
    available = available_memory()
    if available is not None and needed > available:
        raise ValueError(
            f"{what} need about {_gib(needed)} of memory, more than the {_gib(available)} "
            "available; use fewer resamples"
        )


def _groups(n: int, stratify: ArrayLike | None) -> list[np.ndarray] | None:
    if stratify is None:
        return None
    groups = np.asarray(stratify)
    if groups.ndim != 1 or groups.size != n:
        raise ValueError(
            f"stratify: expected {n} group labels (one per sample), got shape {groups.shape}"
        )
    _, inverse = np.unique(groups, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    bounds = np.flatnonzero(np.diff(inverse[order])) + 1
    return np.split(order, bounds)


def iter_bootstrap_counts(
    n: int,
    n_resamples: int = 500,
    seed: int = 0,
    stratify: ArrayLike | None = None,
    *,
    chunk_size: int = 64,
) -> Iterator[np.ndarray]:
    """Yield the bootstrap counts of :func:`bootstrap_counts` in blocks of ``chunk_size`` rows.

    Resample b draws from its own generator ``default_rng(SeedSequence(seed).spawn(B)[b])``,
    so the counts depend only on (n, seed, stratify) and b, not on ``chunk_size`` nor on
    ``n_resamples`` (the first k rows are the same for every B >= k).
    """
    n = _check_count(n, "n", 1)
    n_resamples = _check_count(n_resamples, "n_resamples", 1)
    seed = _check_count(seed, "seed", 0)
    chunk_size = _check_count(chunk_size, "chunk_size", 1)
    groups = _groups(n, stratify)
    check_memory(
        n_resamples * SEED_BYTES + min(chunk_size, n_resamples) * n * 4,
        f"n_resamples: {n_resamples} resamples",
    )
    children = np.random.SeedSequence(seed).spawn(n_resamples)
    for start in range(0, n_resamples, chunk_size):
        block = children[start : start + chunk_size]
        counts = np.empty((len(block), n), dtype=np.int32)
        for row, child in enumerate(block):
            rng = np.random.default_rng(child)
            if groups is None:
                drawn = rng.integers(0, n, size=n)
            else:
                drawn = np.concatenate([g[rng.integers(0, g.size, size=g.size)] for g in groups])
            counts[row] = np.bincount(drawn, minlength=n)
        yield counts


@functools.lru_cache(maxsize=1)
def _shared_counts(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """Read-only unstratified counts, kept for the next call with the same (n, B, seed): an
    analysis bootstraps many runs and studies of the same test set, each with these counts."""
    counts = bootstrap_counts(n, n_resamples, seed)
    counts.setflags(write=False)
    return counts


def _count_blocks(
    n: int, n_resamples: int, seed: int, stratify: ArrayLike | None, chunk: int
) -> Iterator[np.ndarray]:
    """The rows of :func:`bootstrap_counts` in blocks of ``chunk`` (from the cache when the
    whole table is small)."""
    if stratify is not None or n * n_resamples * 4 > _CACHED_BYTES:
        yield from iter_bootstrap_counts(n, n_resamples, seed, stratify, chunk_size=chunk)
        return
    counts = _shared_counts(n, n_resamples, seed)
    for start in range(0, n_resamples, chunk):
        yield counts[start : start + chunk]


@functools.lru_cache(maxsize=1)
def _shared_small(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """:func:`_shared_counts` as :func:`_small` makes them (read-only, kept the same way)."""
    small = _small(_shared_counts(n, n_resamples, seed))
    small.setflags(write=False)
    return small


def _small(counts: np.ndarray) -> np.ndarray:
    """``counts`` as uint8 when every count is at most 255 (a multinomial count of n draws
    over n samples hardly exceeds ln n / ln ln n), else ``counts`` itself: the compiled pass
    gathers from rows a quarter of the size."""
    return counts.astype(np.uint8) if counts.size and counts.max() <= 255 else counts


def _small_blocks(
    n: int, n_resamples: int, seed: int, stratify: ArrayLike | None, chunk: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The blocks of :func:`_count_blocks`, each with its counts as :func:`_small` makes
    them."""
    if stratify is not None or n * n_resamples * 4 > _CACHED_BYTES:
        for counts in iter_bootstrap_counts(n, n_resamples, seed, stratify, chunk_size=chunk):
            yield counts, _small(counts)
        return
    counts, small = _shared_counts(n, n_resamples, seed), _shared_small(n, n_resamples, seed)
    for start in range(0, n_resamples, chunk):
        yield counts[start : start + chunk], small[start : start + chunk]


def bootstrap_counts(
    n: int, n_resamples: int = 500, seed: int = 0, stratify: ArrayLike | None = None
) -> np.ndarray:
    """Bootstrap resamples of n samples as multinomial counts, shape (n_resamples, n), int32.

    Row b holds how often each sample is drawn in resample b (n draws with replacement; with
    ``stratify``, n_g draws within each group g, so every resample keeps the group sizes).
    Seeded: the same (n, seed, stratify) gives the same counts in every call, which makes
    bootstraps of different CSFs on the same samples paired.
    """
    n_resamples = _check_count(n_resamples, "n_resamples", 1)
    check_memory(
        2 * n_resamples * (_check_count(n, "n", 1) * 4 + SEED_BYTES),
        f"n_resamples: {n_resamples} resamples of {n} samples",
    )
    return np.concatenate(list(iter_bootstrap_counts(n, n_resamples, seed, stratify)), axis=0)


@dataclass(frozen=True)
class _Sorted:
    """One CSF prepared for weighted evaluation: its ranking and sorted per-sample data."""

    ranking: Ranking
    residuals: np.ndarray
    failures: FailureIndex | None
    bin_order: np.ndarray | None
    bin_starts: np.ndarray | None
    group_ends: np.ndarray | None = None
    """The tie-group ends of ``ranking`` (empty without ties), for the compiled pass."""
    failed: np.ndarray | None = None
    """The failures (uint8 0/1) in the order of ``ranking``, for the compiled pass."""


def _prepare_csf(r: np.ndarray, c: np.ndarray, want_bins: bool, binary: bool) -> _Sorted:
    ranking = rank(c)
    # a contiguous order: every block gathers with it, and np.take copies strided indices
    ranking = replace(ranking, order=np.ascontiguousarray(ranking.order))
    bin_order = bin_starts = None
    if want_bins and binary and c.min() >= 0 and c.max() <= 1:
        idx = bin_indices(c, 15)
        bin_order = np.argsort(idx, kind="stable")
        sorted_idx = idx[bin_order]
        bin_starts = np.flatnonzero(np.r_[True, sorted_idx[1:] != sorted_idx[:-1]])
    failures = failure_index(ranking, r) if binary else None
    r_sorted = r[ranking.order]
    if not binary:
        return _Sorted(ranking, r_sorted, failures, bin_order, bin_starts)
    ends = np.empty(0, np.intp) if ranking.ends is None else ranking.ends
    failed = (r_sorted > 0).astype(np.uint8)
    return _Sorted(ranking, r_sorted, failures, bin_order, bin_starts, ends, failed)


def _csf_metrics(
    s: _Sorted,
    weights: np.ndarray,
    r: np.ndarray,
    c: np.ndarray,
    metrics: Sequence[str],
    shared: dict[str, np.ndarray],
    binary: bool,
    work: Workspace,
) -> dict[str, np.ndarray]:
    scratch = None
    if s.failures is not None:
        W, L = binary_cumulative(s.ranking, s.failures, weights, work)
        scratch = [work.big(k, *W.shape) for k in (2, 3, 4)]
    else:
        ws = weights[:, s.ranking.order].astype(np.float64)
        W = s.ranking.at_ends(np.cumsum(ws, axis=1))
        ws *= s.residuals
        L = s.ranking.at_ends(np.cumsum(ws, axis=1))
        del ws
    out: dict[str, np.ndarray] = {}
    tp = None
    if {"augrc", "eaugrc", "auroc_f"}.intersection(metrics):
        if s.failures is not None:
            out["augrc"], out["auroc_f"] = augrc_auroc_binary(W, L, s.failures, work)
        else:
            out["augrc"] = augrc_from_cum(W, L)
    if "aurc" in metrics or _OPTIMUM_KEYS.intersection(metrics):
        last = _WITHOUT_L.issuperset(metrics)
        out["aurc"] = aurc_from_cum(W, L, scratch, overwrite=last)
    with np.errstate(invalid="ignore", divide="ignore"):
        for key in metrics:
            if key in out or (key in BINARY_ONLY_KEYS and not binary):
                continue
            if key == "ap_f_success":
                out[key] = ap_success_from_cum(W, L, scratch)
            elif key == "ap_f_error":
                out[key] = ap_error_from_cum(W, L, scratch)
            elif key in ("fpr@95tpr", "fpr@80tpr"):
                if tp is None and weights.dtype.kind == "f":
                    tp = success_cumulative(s.ranking, r, weights)
                x = 0.95 if key == "fpr@95tpr" else 0.80
                out[key] = fpr_at_tpr_from_cum(W, L, x, scratch, tp)
            elif key == "risk@95cov":
                risks = selective_risks_from_cum(W, L, scratch[0] if scratch else None)
                out[key] = min_risk_at_coverage_from_risks(W, risks, 0.95)
            elif key == "selective_risk@95cov":
                out[key] = risk_at_coverage_from_cum(W, L, 0.95)
            elif key == "coverage@risk5":
                out[key] = coverage_at_risk_from_cum(W, L, 0.05, scratch)
    return _other_metrics(out, s, weights, r, c, metrics, shared, binary)


def einsum_buffers(n_resamples: int, chunk: int) -> np.ndarray:
    """Per resample, the ``buffer`` of :func:`~fdbench.metrics._curve_kernel._row_pass` that
    sums its AURC as the NumPy path summed it in blocks of ``chunk`` resamples: in pieces of
    ``EINSUM_BUFFER`` for a resample that was a block of its own (``chunk`` = 1, or the last
    resample when ``n_resamples`` = 1 (mod ``chunk``)), else 0 (one loop over the row)."""
    from ._ordered_sums import EINSUM_BUFFER

    buffers = np.zeros(n_resamples, dtype=np.intp)
    if chunk == 1:
        buffers[:] = EINSUM_BUFFER
    elif n_resamples % chunk == 1:
        buffers[-1] = EINSUM_BUFFER
    return buffers


@dataclass(frozen=True)
class _Batch:
    """Several CSFs of the same 0/1 residuals, packed for the compiled pass."""

    orders: np.ndarray
    failed: np.ndarray
    ends: np.ndarray
    ends_at: np.ndarray
    groups: np.ndarray
    groups_at: np.ndarray

    @classmethod
    def of(cls, csfs: Sequence[_Sorted]) -> _Batch:
        ends = [cast(np.ndarray, s.group_ends) for s in csfs]
        groups = [cast(FailureIndex, s.failures).groups for s in csfs]
        return cls(
            orders=np.stack([s.ranking.order for s in csfs]).astype(np.intp, copy=False),
            failed=np.stack([cast(np.ndarray, s.failed) for s in csfs]),
            ends=np.concatenate(ends).astype(np.intp, copy=False),
            ends_at=np.cumsum([0] + [e.size for e in ends], dtype=np.intp),
            groups=np.concatenate(groups).astype(np.intp, copy=False),
            groups_at=np.cumsum([0] + [g.size for g in groups], dtype=np.intp),
        )


def compiled_curves(
    csfs: Sequence[_Sorted],
    n: int,
    n_resamples: int,
    seed: int,
    stratify: ArrayLike | None,
    chunk: int,
    metrics: Sequence[str],
) -> Iterator[tuple[np.ndarray, list[dict[str, np.ndarray]]]] | None:
    """AUGRC, AUROC_f and AURC of 0/1 residuals by the compiled pass of
    :mod:`fdbench.metrics._curve_kernel`, bit-identical to :func:`binary_cumulative`,
    :func:`augrc_auroc_binary` and :func:`aurc_from_cum` in blocks of ``chunk`` resamples (that
    module says why): per block of the counts of :func:`bootstrap_counts` (n, seed, stratify),
    the block and, per CSF of ``csfs`` (orders into the n samples), its values. ``None`` when
    the pass does not apply: no metric needs the cumulative losses beyond these (``_WITHOUT_L``),
    every resample's total weight (at most n) keeps its integer sums exact in float64, and this
    NumPy's ``einsum`` adds in the order the pass follows."""
    if not _WITHOUT_L.issuperset(metrics) or not csfs or csfs[0].failed is None:
        return None
    from ._curve_kernel import MAX_TOTAL, compiled_pass

    kernel = compiled_pass()
    if kernel is None or n > MAX_TOTAL:
        return None
    return _curve_blocks(kernel, _Batch.of(csfs), n, n_resamples, seed, stratify, chunk, metrics)


#: Counts per block of the compiled pass (its blocks do not change its sums: each resample's
#: sum follows the NumPy path's blocks of ``chunk`` resamples through ``einsum_buffers``).
_COMPILED_ELEMENTS = 1 << 22


def _curve_blocks(
    kernel: Callable[..., None],
    batch: _Batch,
    n: int,
    n_resamples: int,
    seed: int,
    stratify: ArrayLike | None,
    chunk: int,
    metrics: Sequence[str],
) -> Iterator[tuple[np.ndarray, list[dict[str, np.ndarray]]]]:
    """The blocks of :func:`compiled_curves`: one call of ``kernel`` per block of counts."""
    buffers = einsum_buffers(n_resamples, chunk)
    rows = max(chunk, _COMPILED_ELEMENTS // n)
    start = 0
    for counts, small in _small_blocks(n, n_resamples, seed, stratify, rows):
        sums = np.empty((batch.orders.shape[0], counts.shape[0], 6))
        kernel(
            small,
            batch.orders,
            batch.ends,
            batch.ends_at,
            batch.failed,
            batch.groups,
            batch.groups_at,
            buffers[start : start + counts.shape[0]],
            sums,
        )
        start += counts.shape[0]
        yield counts, [_curves_from_sums(part, metrics) for part in sums]


def _curves_from_sums(sums: np.ndarray, metrics: Sequence[str]) -> dict[str, np.ndarray]:
    """AUGRC and AUROC_f, AURC (those ``metrics`` need) from a CSF's rows of the pass's sums."""
    total, fail, head = sums[:, 0], sums[:, 1], sums[:, 2]
    out: dict[str, np.ndarray] = {}
    if {"augrc", "eaugrc", "auroc_f"}.intersection(metrics):
        # sum_g l_g L_{g-1} + 1/2 l_g^2 = 1/2 F^2: the NumPy path's two exact sums of integers
        # (F^2 <= 2^53) add up to this number, exactly
        loss_dot = 0.5 * (fail * fail)
        out["augrc"], out["auroc_f"] = augrc_auroc_from_sums(
            total, fail, sums[:, 3], sums[:, 4], loss_dot
        )
    if "aurc" in metrics or _OPTIMUM_KEYS.intersection(metrics):
        # a resample of no weight: 0 / 0 here; NumPy's path divides 0 by 0 in its risks (the
        # same default NaN, carried through the sum)
        with np.errstate(invalid="ignore"):
            out["aurc"] = 0.5 * (sums[:, 5] + head) / total
    return out


def _other_metrics(
    out: dict[str, np.ndarray],
    s: _Sorted,
    weights: np.ndarray,
    r: np.ndarray,
    c: np.ndarray,
    metrics: Sequence[str],
    shared: dict[str, np.ndarray],
    binary: bool,
) -> dict[str, np.ndarray]:
    """``out`` (the metrics from the cumulative weights) and those that need them not."""
    nan = np.full(weights.shape[0], np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        for key in metrics:
            if key in out:
                continue
            if key in BINARY_ONLY_KEYS and not binary:
                out[key] = nan
            elif key == "eaurc":
                out[key] = out["aurc"] - shared["aurc_opt"]
            elif key == "eaugrc":
                out[key] = out["augrc"] - shared["augrc_opt"]
            elif key == "naurc":
                out[key] = cast(
                    np.ndarray,
                    naurc_from_parts(out["aurc"], shared["aurc_opt"], shared["mean_residual"]),
                )
            elif key == "accuracy":
                out[key] = 1.0 - shared["mean_residual"]
            elif key == "mean_residual":
                out[key] = shared["mean_residual"]
            elif key in ("ece", "mce"):
                out.update(_calibration(s, weights, r, c, nan))
    return {key: out[key] for key in metrics}


def _calibration(s: _Sorted, weights, r, c, nan) -> dict[str, np.ndarray]:
    if s.bin_order is None:
        return {"ece": nan, "mce": nan}
    starts = cast(np.ndarray, s.bin_starts)
    wb = weights[:, s.bin_order]
    count = np.add.reduceat(wb, starts, axis=1)
    fail = np.add.reduceat(wb * r[s.bin_order], starts, axis=1)
    conf = np.add.reduceat(wb * c[s.bin_order], starts, axis=1)
    ece_value, mce_value = ece_mce_from_sums(count, count - fail, conf)
    return {"ece": ece_value, "mce": mce_value}


def _shared(
    r: np.ndarray,
    weights: np.ndarray,
    metrics: Sequence[str],
    binary: bool,
    res_groups,
    n_drawn: np.ndarray | None,
) -> dict[str, np.ndarray]:
    """Per-resample quantities that depend on the residuals only (not on a CSF).

    ``n_drawn`` is the number of samples of positive weight each resample drew (``None`` when
    the weights are the counts themselves, which sum to it): the optimum of a resample is that
    of its drawn samples, sample weights in units of their mean (:func:`optimal_aurc_augrc`).
    """
    shared: dict[str, np.ndarray] = {}
    optimum = bool(_OPTIMUM_KEYS.intersection(metrics))
    if not (optimum or {"accuracy", "mean_residual"}.intersection(metrics)):
        return shared
    total = weights.sum(axis=1, dtype=np.float64)
    if binary:
        fail = weights[:, r > 0].sum(axis=1, dtype=np.float64)
    else:
        fail = weights.astype(np.float64) @ r
    shared["mean_residual"] = fail / total
    if optimum:
        if binary:
            values = np.array([0.0, 1.0])
            per_value = np.stack([total - fail, fail], axis=1)
        else:
            values, order, starts = res_groups
            per_value = np.add.reduceat(weights[:, order], starts, axis=1).astype(np.float64)
        shared["aurc_opt"], shared["augrc_opt"] = optimal_from_counts(values, per_value, n_drawn)
    return shared


def _check_metrics(metrics: Sequence[str] | None, binary: bool) -> tuple[str, ...]:
    specs = metric_specs()
    keys = METRIC_KEYS if binary else SOFT_METRIC_KEYS
    allowed = tuple(k for k in keys if specs[k].bootstrappable)
    if metrics is None:
        return allowed
    if isinstance(metrics, str):
        metrics = (metrics,)
    unknown = [m for m in metrics if m not in allowed]
    if unknown:
        raise ValueError(
            f"metrics: unknown or unsupported for these residuals: {unknown}; "
            f"expected names from {allowed}"
        )
    return tuple(dict.fromkeys(metrics))


def bootstrap(
    residuals: ArrayLike,
    confidence: ArrayLike | Mapping[str, ArrayLike],
    *,
    metrics: Sequence[str] | None = None,
    n_resamples: int = 500,
    seed: int = 0,
    stratify: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
) -> pd.DataFrame:
    """Bootstrap distribution of the metrics of :func:`evaluate_all`.

    Each resample draws the n samples with replacement (within each ``stratify`` group,
    keeping group sizes), as the counts of :func:`bootstrap_counts`; the counts (times
    ``sample_weight``, if given) are the sample weights of that resample. Every CSF is sorted
    once and all resamples are evaluated together, in blocks of rows. Counts depend only on
    (n, seed, stratify): bootstraps of several CSFs of the same samples with the same seed are
    paired, resample by resample.

    ``metrics`` are names from ``METRIC_KEYS`` (0/1 residuals) or ``SOFT_METRIC_KEYS``
    (default: all of them). Undefined values (e.g. AUROC_f of a resample with one class) are
    NaN. With one confidence array the result has one row per resample (index ``resample``)
    and one column per metric. With a mapping ``{csf_name: confidence}`` all CSFs share the
    same counts and the result is a long table with columns ``resample, csf, metric, value``.

    Source: Efron & Tibshirani, "An introduction to the bootstrap", 1993; bootstrap over test
    samples as in Traub et al., NeurIPS 2024.
    """
    single = not isinstance(confidence, Mapping)
    csfs = cast(
        "dict[str, ArrayLike]",
        {"": confidence} if single else dict(cast(Mapping[str, ArrayLike], confidence)),
    )
    if not csfs:
        raise ValueError("confidence: expected at least one CSF in the mapping, got none")
    n_resamples = _check_count(n_resamples, "n_resamples", 1)
    checked = {}
    keep = None
    for name, conf in csfs.items():
        r, c, w, keep = check_inputs(residuals, conf, sample_weight)
        checked[name] = c
    n_all = np.asarray(residuals).shape[0]
    binary = bool(np.all((r == 0) | (r == 1)))
    metrics = _check_metrics(metrics, binary)
    check_memory(
        n_resamples * (SEED_BYTES + _VALUE_BYTES * len(checked) * len(metrics)),
        f"n_resamples: {n_resamples} resamples of {len(checked)} CSF(s) × {len(metrics)} metric(s)",
    )
    want_bins = "ece" in metrics or "mce" in metrics
    prepared = {name: _prepare_csf(r, c, want_bins, binary) for name, c in checked.items()}
    res_groups = None
    if _OPTIMUM_KEYS.intersection(metrics) and not binary:
        levels, inverse = np.unique(r, return_inverse=True)
        order = np.argsort(inverse, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(inverse[order]) != 0])
        res_groups = (levels, order, starts)

    chunk = max(1, _CHUNK_ELEMENTS // max(r.size, 1))
    columns: dict[str, dict[str, list[np.ndarray]]] = {
        name: {m: [] for m in metrics} for name in prepared
    }
    compiled = None
    if binary and w is None:
        compiled = compiled_curves(
            list(prepared.values()), n_all, n_resamples, seed, stratify, chunk, metrics
        )
    if compiled is not None:
        for counts, curves in compiled:
            shared = _shared(r, counts, metrics, binary, res_groups, None)
            for (name, s), out in zip(prepared.items(), curves, strict=True):
                values = _other_metrics(out, s, counts, r, checked[name], metrics, shared, binary)
                for m in metrics:
                    columns[name][m].append(values[m])
    else:
        dtype = np.dtype(np.int32 if w is None else np.float64)
        work = Workspace(min(chunk, n_resamples), r.size, int(r.sum()) if binary else 0, dtype)
        for counts in _count_blocks(n_all, n_resamples, seed, stratify, chunk):
            weights = (counts if keep is None else counts[:, keep]).astype(dtype)
            n_drawn = None
            if w is not None:
                n_drawn = weights.sum(axis=1)
                weights *= w
            shared = _shared(r, weights, metrics, binary, res_groups, n_drawn)
            for name, s in prepared.items():
                values = _csf_metrics(s, weights, r, checked[name], metrics, shared, binary, work)
                for m in metrics:
                    columns[name][m].append(values[m])
    import pandas as pd  # lazy: pandas costs ~0.4 s to import

    if single:
        index = pd.RangeIndex(n_resamples, name="resample")
        return pd.DataFrame({m: np.concatenate(v) for m, v in columns[""].items()}, index=index)
    names = list(columns)
    metric_names = np.repeat(np.array(metrics, dtype=object), n_resamples)
    blocks_of = [np.concatenate(blocks) for name in names for blocks in columns[name].values()]
    return pd.DataFrame(
        {
            "resample": np.tile(np.arange(n_resamples), len(names) * len(metrics)),
            "csf": np.repeat(np.array(names, dtype=object), n_resamples * len(metrics)),
            "metric": np.tile(metric_names, len(names)),
            "value": np.concatenate(blocks_of),
        }
    )


def bootstrap_summary(df: pd.DataFrame, confidence_level: float = 0.95) -> pd.DataFrame:
    """Mean, standard deviation (ddof 1) and percentile interval of a :func:`bootstrap` table.

    For the wide table (one column per metric) the result has one row per metric; for the
    long table (``resample, csf, metric, value``) one row per (csf, metric). ``lower`` and
    ``upper`` are the (1 - level)/2 and (1 + level)/2 percentiles; NaN resamples are skipped.
    With fewer than two (non-NaN) resamples there is no interval: ``lower``, ``upper`` and
    ``std`` are NaN (the percentiles of one value would be a zero-width "interval" that need
    not even contain the estimate).
    """
    import pandas as pd  # lazy: pandas costs ~0.4 s to import

    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level: expected a value in (0, 1), got {confidence_level!r}")
    lo, hi = (1 - confidence_level) / 2, (1 + confidence_level) / 2
    if {"metric", "value"}.issubset(df.columns):
        keys = [col for col in df.columns if col not in ("resample", "value")]
        grouped = df.groupby(keys, sort=False)["value"]
    else:
        grouped = df.melt(var_name="metric", value_name="value").groupby("metric", sort=False)[
            "value"
        ]
    enough = grouped.count() >= 2
    return pd.DataFrame(
        {
            "mean": grouped.mean(),
            "std": grouped.std(),
            "lower": grouped.quantile(lo).where(enough),
            "upper": grouped.quantile(hi).where(enough),
        }
    )
