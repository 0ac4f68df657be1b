"""``torchmetrics.Metric`` classes of failure detection whose ``compute()`` is ``fdbench.metrics``.

Each metric accumulates two states over batches, ``confidence`` (higher = more confident) and
``residuals`` (the per-sample error, 1 for a failure), both as float64 tensors with
``dist_reduce_fx="cat"``: under several processes torchmetrics gathers every process's samples
before ``compute()``. ``compute()`` concatenates them, moves them to the CPU as float64 NumPy
arrays and calls the exact NumPy function of :mod:`fdbench.metrics`, so the value is the one
that function gives on the concatenated samples (ties as single steps, the end point at
coverage 0, see METRICS.md). Metrics are sample-level rankings: there is no per-batch value,
``forward`` computes the metric of the batch alone.

``update(confidence, residuals)`` takes the score first and the error second, as torchmetrics'
``update(preds, target)`` does; both are 1-D of the same length. Needs the optional extra
``integrations`` (``pip install "fdbench[integrations]"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:
    import torch
    from torchmetrics import Metric
    from torchmetrics.utilities import dim_zero_cat
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "fdbench.integrations.torchmetrics needs torch and torchmetrics; install the extra: "
        'pip install "fdbench[integrations]"'
    ) from err

from fdbench import metrics as M
from fdbench.metrics._validation import check_unit_interval
from fdbench.metrics.selective import _check_range

__all__ = [
    "AUGRC",
    "AURC",
    "EAURC",
    "AUROCFailure",
    "CoverageAtRisk",
    "FPRAtTPR",
    "FailureDetectionMetric",
    "SelectiveRiskAtCoverage",
]


class FailureDetectionMetric(Metric):
    """Base class: accumulates ``confidence`` and ``residuals``; subclasses define
    :meth:`_value`, the fdbench function of the concatenated float64 arrays."""

    is_differentiable = False
    higher_is_better: bool | None = False
    full_state_update = False

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("confidence", default=[], dist_reduce_fx="cat")
        self.add_state("residuals", default=[], dist_reduce_fx="cat")

    def update(self, confidence: torch.Tensor, residuals: torch.Tensor) -> None:
        """Add a batch: ``confidence`` and ``residuals``, 1-D tensors (or array-likes) of one
        length. Values are checked by ``compute()`` (finite confidence, finite non-negative
        residuals), as :mod:`fdbench.metrics` checks them."""
        c = torch.as_tensor(confidence)
        r = torch.as_tensor(residuals)
        for name, value in (("confidence", c), ("residuals", r)):
            if value.ndim != 1:
                raise ValueError(f"{name}: expected a 1-D tensor, got shape {tuple(value.shape)}")
            if value.is_complex():
                raise TypeError(f"{name}: expected real numbers, got dtype {value.dtype}")
        if c.shape != r.shape:
            raise ValueError(
                f"residuals: expected {c.shape[0]} values (one per confidence), got {r.shape[0]}"
            )
        self.confidence.append(c.detach().to(device=self.device, dtype=torch.float64))
        self.residuals.append(r.detach().to(device=self.device, dtype=torch.float64))

    def compute(self) -> torch.Tensor:
        """The metric of every sample seen (on every process), a float64 scalar tensor."""
        if isinstance(self.confidence, list) and not self.confidence:
            raise ValueError(
                f"{type(self).__name__}: no samples to compute the metric of; call update() first"
            )
        confidence = dim_zero_cat(self.confidence).cpu().numpy().astype(np.float64, copy=False)
        residuals = dim_zero_cat(self.residuals).cpu().numpy().astype(np.float64, copy=False)
        return torch.tensor(self._value(residuals, confidence), dtype=torch.float64)

    def _value(self, residuals: np.ndarray, confidence: np.ndarray) -> float:
        raise NotImplementedError


class AURC(FailureDetectionMetric):
    """Area under the risk-coverage curve, :func:`fdbench.metrics.aurc` (optionally over
    ``coverage_range=(a, b)``). Lower is better."""

    def __init__(self, coverage_range: tuple[float, float] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.coverage_range = None if coverage_range is None else _check_range(coverage_range)

    def _value(self, residuals: np.ndarray, confidence: np.ndarray) -> float:
        return M.aurc(residuals, confidence, coverage_range=self.coverage_range)


class AUGRC(FailureDetectionMetric):
    """Area under the generalized-risk-coverage curve, :func:`fdbench.metrics.augrc`
    (Traub et al., NeurIPS 2024). Lower is better."""

    def _value(self, residuals: np.ndarray, confidence: np.ndarray) -> float:
        return M.augrc(residuals, confidence)


class EAURC(FailureDetectionMetric):
    """Excess AURC over the finite-sample optimum, :func:`fdbench.metrics.eaurc`. Lower is
    better."""

    def __init__(self, coverage_range: tuple[float, float] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.coverage_range = None if coverage_range is None else _check_range(coverage_range)

    def _value(self, residuals: np.ndarray, confidence: np.ndarray) -> float:
        return M.eaurc(residuals, confidence, coverage_range=self.coverage_range)


class AUROCFailure(FailureDetectionMetric):
    """Failure AUROC (successes positive), :func:`fdbench.metrics.auroc_f`; needs 0/1
    residuals. Higher is better."""

    higher_is_better = True

    def _value(self, residuals: np.ndarray, confidence: np.ndarray) -> float:
        return M.auroc_f(residuals, confidence)


class FPRAtTPR(FailureDetectionMetric):
    """Smallest false-positive rate at true-positive rate >= ``tpr`` (successes positive),
    :func:`fdbench.metrics.fpr_at_tpr`; needs 0/1 residuals. Lower is better."""

    def __init__(self, tpr: float = 0.95, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tpr = check_unit_interval(tpr, "tpr")

    def _value(self, residuals: np.ndarray, confidence: np.ndarray) -> float:
        return M.fpr_at_tpr(residuals, confidence, self.tpr)


class SelectiveRiskAtCoverage(FailureDetectionMetric):
    """Selective risk of the largest threshold with coverage >= ``coverage``,
    :func:`fdbench.metrics.selective_risk_at_coverage`. Lower is better."""

    def __init__(self, coverage: float = 0.95, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.coverage = check_unit_interval(coverage, "coverage")

    def _value(self, residuals: np.ndarray, confidence: np.ndarray) -> float:
        return M.selective_risk_at_coverage(residuals, confidence, self.coverage)


class CoverageAtRisk(FailureDetectionMetric):
    """Largest coverage whose selective risk is <= ``risk``,
    :func:`fdbench.metrics.coverage_at_risk` (Galil et al.'s coverage at a selective accuracy
    constraint 1 - risk). Higher is better."""

    higher_is_better = True

    def __init__(self, risk: float = 0.05, **kwargs: Any) -> None:
        try:
            target = float(risk)
        except (TypeError, ValueError) as err:
            raise TypeError(f"risk: expected a number, got {type(risk).__name__}") from err
        if not (np.isfinite(target) and target >= 0):
            raise ValueError(f"risk: expected a finite non-negative number, got {risk!r}")
        super().__init__(**kwargs)
        self.risk = target

    def _value(self, residuals: np.ndarray, confidence: np.ndarray) -> float:
        return M.coverage_at_risk(residuals, confidence, self.risk)
