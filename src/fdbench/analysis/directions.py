"""Which direction is better for each metric of the results table."""

from __future__ import annotations

from fdbench.metrics import find_metric, metric_specs


def higher_is_better(metric: str) -> bool:
    """Return True if larger values of ``metric`` are better, False if smaller ones are.

    The direction is the ``higher_is_better`` field of the metric's spec
    (:class:`fdbench.metrics.MetricSpec`, plug-ins included): risk-type metrics (AURC, AUGRC
    and their excess/normalised variants, ECE, MCE, NLL, Brier, FPR@TPR, selective risk at a
    coverage, mean residual) are lower-is-better; AUROC_f, AP_f, accuracy and coverage at a
    risk are higher-is-better, as in FD-Shifts (Jaeger et al., ICLR 2023) and Traub et al.
    (NeurIPS 2024). ``ValueError`` for a name that is no registered metric.
    """
    if not isinstance(metric, str):
        raise TypeError(f"metric must be a str; got {type(metric).__name__}")
    spec = find_metric(metric)
    if spec is None:
        raise ValueError(
            f"metric {metric!r} has no known direction; expected one of {sorted(metric_specs())}"
        )
    return spec.higher_is_better
