"""Authors' code conventions: quantities that published code computes under a paper's name.

fdbench's defaults are the papers' definitions (METRICS.md). Where an author's released code
computes something else under the same name, the code's quantity is offered here under its own
name, never as a default, so that a paper's table can be reproduced to the digit:

- :func:`aurc_per_sample`: AURC as Galil et al.'s and Kim et al.'s code compute it (mean, over
  the samples in a descending order, of the selective risk at each sample; no tie groups, no
  end point at coverage 0);
- :func:`auroc_f_ordered`: AUROC as Galil et al.'s code computes it (tied pairs ranked by the
  sort order, no half credit);
- :func:`coverage_at_accuracy_first_drop`: Galil et al.'s selective accuracy constraint
  (``coverage_for_desired_accuracy``);
- :func:`fpr_at_tpr_ood_positive`: OpenOOD's FPR@95 (out-of-distribution samples positive).

The per-sample quantities depend on the order of tied confidences. ``tie_order="stable"``
keeps tied samples in input order (a stable sort of ``-confidence``: Python's
``sorted(..., reverse=True)`` of Kim et al.'s code, ``torch.argsort(..., stable=True)``);
``tie_order="torch"`` takes ``torch.argsort(torch.as_tensor(confidence), descending=True)``, the
unstable sort of Galil et al.'s code, whose order of ties depends on the PyTorch version and on
the dtype (their code sorts a float32 tensor: pass float32 confidences to reproduce it).
"""

from __future__ import annotations

import warnings
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from ._validation import UndefinedMetricWarning, check_inputs, check_unit_interval
from .ranking import fpr_at_tpr_out

__all__ = [
    "CONVENTION_KEYS",
    "OOD_CONVENTION_KEYS",
    "TIE_ORDERS",
    "aurc_per_sample",
    "auroc_f_ordered",
    "check_convention_keys",
    "coverage_at_accuracy_first_drop",
    "descending_order",
    "evaluate_conventions",
    "fpr_at_tpr_ood_positive",
]

TieOrder = Literal["stable", "torch"]
#: The orders of tied confidences the per-sample conventions accept.
TIE_ORDERS: tuple[str, ...] = ("stable", "torch")

#: Galil et al.'s code starts looking for the accuracy drop after this many samples.
GALIL_START_INDEX = 200


def descending_order(confidence: ArrayLike, tie_order: TieOrder = "stable") -> np.ndarray:
    """The permutation that sorts ``confidence`` in descending order, ties in ``tie_order``.

    ``"stable"``: tied samples keep their input order (``np.argsort(-confidence,
    kind="stable")``). ``"torch"``: ``torch.argsort(torch.as_tensor(confidence),
    descending=True)`` as in Galil et al.'s ``utils/uncertainty_metrics.py`` (PyTorch's default,
    unstable sort; requires PyTorch). The confidence keeps its dtype.
    """
    c = np.asarray(confidence)
    if tie_order == "stable":
        return np.argsort(-c, kind="stable")
    if tie_order == "torch":
        try:
            import torch
        except ImportError as err:
            raise ImportError("tie_order='torch' needs PyTorch (fdbench's train extra)") from err
        return torch.argsort(torch.as_tensor(c), descending=True).numpy()
    raise ValueError(f"tie_order: expected one of {list(TIE_ORDERS)}, got {tie_order!r}")


def _sorted_residuals(
    residuals: ArrayLike, confidence: ArrayLike, tie_order: TieOrder, *, binary: bool
) -> np.ndarray:
    """Validated residuals in :func:`descending_order` of the confidence as given (its dtype
    kept, which the ``"torch"`` order depends on)."""
    r, _, _, _ = check_inputs(residuals, confidence, binary=binary)
    return r[descending_order(confidence, tie_order)]


def _per_sample_aurc(r: np.ndarray) -> float:
    return float(np.mean(np.cumsum(r) / np.arange(1, r.size + 1)))


def _ordered_auroc(failed: np.ndarray) -> float:
    n_fail = failed.sum()
    n_success = failed.size - n_fail
    if n_fail == 0 or n_success == 0:
        return float("nan")
    failures_before = np.cumsum(failed) - failed
    discordant = float(failures_before[failed == 0].sum())
    return 1.0 - discordant / (n_success * n_fail)


def _first_drop(failed: np.ndarray, target: float, start_index: int) -> float:
    n = failed.size
    below = np.cumsum(1.0 - failed) / np.arange(1, n + 1) < target
    first = int(np.argmax(below))
    after = int(np.argmax(below[start_index:])) + start_index
    return (after if after > start_index else first) / (n + 1)


def aurc_per_sample(
    residuals: ArrayLike, confidence: ArrayLike, *, tie_order: TieOrder = "stable"
) -> float:
    """AURC as the mean of the selective risk at every sample, in descending confidence order.

    With the samples sorted by descending ``confidence`` (ties in ``tie_order``, see
    :func:`descending_order`), AURC = (1/N) Σ_{i=1..N} (Σ_{j<=i} r_(j)) / i. Tied samples are
    not grouped (each is a curve point of its own, so the value depends on their order) and
    the curve has no end point at coverage 0. The paper definition (tie groups, end point,
    trapezoids) is :func:`fdbench.metrics.aurc`; without ties it exceeds this one by
    (r_(1) - mean residual) / (2N), the trapezoids and the end point.

    Authors' code: ``AURC_calc`` in ``utils/uncertainty_metrics.py`` of
    IdoGalil/benchmarking-uncertainty-estimation-performance (Galil et al., ICLR 2023;
    ``tie_order="torch"``) and ``aurc_eaurc`` in ``metrics_md.py`` of
    daintlab/unknown-detection-benchmarks (Kim et al., 2023; ``tie_order="stable"``).
    """
    return _per_sample_aurc(_sorted_residuals(residuals, confidence, tie_order, binary=False))


def auroc_f_ordered(
    residuals: ArrayLike, confidence: ArrayLike, *, tie_order: TieOrder = "stable"
) -> float:
    """Failure AUROC without half credit for ties: pairs ranked by the sort order.

    With the samples sorted by descending ``confidence`` (ties in ``tie_order``), the fraction
    of (success, failure) pairs in which the success comes first. A tied pair counts 1 or 0 as
    the sort placed it, where :func:`fdbench.metrics.auroc_f` counts it 1/2. Requires 0/1
    residuals; NaN with an ``UndefinedMetricWarning`` when only one class is present.

    Authors' code: ``AUROC`` in ``utils/uncertainty_metrics.py`` of
    IdoGalil/benchmarking-uncertainty-estimation-performance (Galil et al., ICLR 2023:
    n_s / (n_s + n_d) over concordant and discordant pairs of the sorted samples).
    """
    value = _ordered_auroc(_sorted_residuals(residuals, confidence, tie_order, binary=True))
    if np.isnan(value):
        warnings.warn(
            "auroc_f_ordered: undefined because only one class (all successes or all failures) "
            "is present; returning NaN",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    return value


def coverage_at_accuracy_first_drop(
    residuals: ArrayLike,
    confidence: ArrayLike,
    accuracy: float = 0.95,
    *,
    start_index: int = GALIL_START_INDEX,
    tie_order: TieOrder = "stable",
) -> float:
    """Galil et al.'s selective accuracy constraint: the first drop of the running accuracy.

    With the samples sorted by descending ``confidence`` (ties in ``tie_order``), let a_i be
    the accuracy of the first i + 1 samples (i = 0..N-1) and d(s) the first index i >= s with
    a_i < ``accuracy`` (0 when there is none). The result is d(``start_index``) / (N + 1) if
    d(``start_index``) > ``start_index``, else d(0) / (N + 1); in particular 0 when the running
    accuracy never falls below the target. The paper's definition (Galil et al., ICLR 2023,
    Section 2: the largest coverage whose selective accuracy meets the target) is
    :func:`fdbench.metrics.coverage_at_risk` at risk ``1 - accuracy``. Requires 0/1 residuals
    and more than ``start_index`` samples.

    Authors' code: ``coverage_for_desired_accuracy`` in ``utils/uncertainty_metrics.py`` of
    IdoGalil/benchmarking-uncertainty-estimation-performance (called with
    ``accuracy=0.99, start_index=200`` by ``benchmark_models.py``).
    """
    target = check_unit_interval(accuracy, "accuracy")
    if not isinstance(start_index, int | np.integer) or start_index < 0:
        raise ValueError(f"start_index: expected an int >= 0, got {start_index!r}")
    failed = _sorted_residuals(residuals, confidence, tie_order, binary=True)
    n = failed.size
    if n <= start_index:
        raise ValueError(
            f"residuals: expected more than start_index = {start_index} samples, got {n}"
        )
    return _first_drop(failed, target, int(start_index))


def fpr_at_tpr_ood_positive(
    is_ood: ArrayLike,
    confidence: ArrayLike,
    tpr: float = 0.95,
    *,
    sample_weight: ArrayLike | None = None,
) -> float:
    """OpenOOD's FPR@TPR: out-of-distribution samples positive, scored by ``-confidence``.

    The smallest fraction of in-distribution samples (``is_ood`` = 0) flagged as OOD among the
    thresholds that flag at least ``tpr`` of the OOD samples (``is_ood`` = 1); ties flagged
    together. :func:`fdbench.metrics.fpr_at_tpr_out` (``fpr@95tpr_out``) takes the
    in-distribution samples as positives instead (the fraction of OOD samples accepted while
    ``tpr`` of the in-distribution samples are): another number on the same scores.

    Authors' code: ``auc_and_fpr_recall`` in ``openood/evaluators/metrics.py`` of
    Jingkang50/OpenOOD (v1.5: ``roc_curve(ood_indicator, -conf)``, the FPR at the first point
    with TPR >= 0.95).
    """
    ood, c, w, _ = check_inputs(
        is_ood, confidence, sample_weight, binary=True, residuals_name="is_ood"
    )
    return fpr_at_tpr_out(1.0 - ood, -c, tpr, sample_weight=w)


#: Keys of :func:`evaluate_conventions` computed from the failure labels: the results-table
#: names of the per-sample conventions.
CONVENTION_KEYS: tuple[str, ...] = (
    "aurc_per_sample",
    "auroc_f_ordered",
    "coverage@acc99_first_drop",
)
#: Keys of :func:`evaluate_conventions` computed from the OOD labels.
OOD_CONVENTION_KEYS: tuple[str, ...] = ("fpr@95tpr_ood_positive",)


def check_convention_keys(keys: tuple[str, ...]) -> tuple[str, ...]:
    """``keys`` if each is one of ``CONVENTION_KEYS + OOD_CONVENTION_KEYS``, else ValueError."""
    known = CONVENTION_KEYS + OOD_CONVENTION_KEYS
    unknown = [k for k in keys if k not in known]
    if unknown:
        raise ValueError(f"conventions: unknown {unknown[0]!r}; expected some of {list(known)}")
    return tuple(keys)


def evaluate_conventions(
    residuals: ArrayLike,
    confidence: ArrayLike,
    keys: tuple[str, ...] = CONVENTION_KEYS,
    *,
    is_ood: ArrayLike | None = None,
    tie_order: TieOrder = "stable",
) -> dict[str, float]:
    """The authors'-code quantities named by ``keys``, for a results table.

    ``aurc_per_sample`` is :func:`aurc_per_sample`, ``auroc_f_ordered``
    :func:`auroc_f_ordered` and ``coverage@acc99_first_drop``
    :func:`coverage_at_accuracy_first_drop` at accuracy 0.99 (as Galil et al.'s
    ``benchmark_models.py`` reports it), all with ``tie_order``; ``fpr@95tpr_ood_positive`` is
    :func:`fpr_at_tpr_ood_positive` at 0.95 of ``is_ood`` (the OOD labels of the same samples;
    left out of the result when ``is_ood`` is None). Undefined entries are NaN without a
    warning: the ranking ones when only one class (or group) is present, the accuracy
    constraint with at most 200 samples.
    """
    check_convention_keys(keys)
    failed = _sorted_residuals(residuals, confidence, tie_order, binary=True)
    values: dict[str, float] = {}
    for key in keys:
        if key == "aurc_per_sample":
            values[key] = _per_sample_aurc(failed)
        elif key == "auroc_f_ordered":
            values[key] = _ordered_auroc(failed)
        elif key == "coverage@acc99_first_drop":
            big_enough = failed.size > GALIL_START_INDEX
            values[key] = _first_drop(failed, 0.99, GALIL_START_INDEX) if big_enough else np.nan
        elif is_ood is not None:
            ood = np.asarray(is_ood)
            one_group = bool(np.all(ood == ood.flat[0])) if ood.size else True
            values[key] = np.nan if one_group else fpr_at_tpr_ood_positive(ood, confidence)
    return {k: float(v) for k, v in values.items()}
