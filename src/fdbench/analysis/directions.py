"""Which direction is better for each metric of the results table."""

from __future__ import annotations

LOWER_IS_BETTER_PREFIXES = (
    "aurc",
    "augrc",
    "eaurc",
    "eaugrc",
    "naurc",
    "ece",
    "mce",
    "nll",
    "brier",
    "fpr@",
    "fpr_",
    "selective_risk",
    "risk@",
    "mean_residual",
)
HIGHER_IS_BETTER_PREFIXES = (
    "auroc",
    "ap_",
    "accuracy",
    "balanced_accuracy",
    "coverage_at_risk",
    "coverage@",
)


def higher_is_better(metric: str) -> bool:
    """Return True if larger values of ``metric`` are better, False if smaller ones are.

    Risk-type metrics (AURC, AUGRC and their excess/normalised variants, ECE, MCE, NLL, Brier,
    FPR@TPR, selective risk at a coverage, mean residual) are lower-is-better; AUROC_f, AP_f,
    accuracy and coverage at a risk are higher-is-better, as in FD-Shifts (Jaeger et al., ICLR
    2023) and Traub et al. (NeurIPS 2024). Names are matched by prefix, so every key of
    ``fdbench.metrics.evaluate_all`` (``aurc_ba``, ``fpr@95tpr``, ``risk@95cov``,
    ``selective_risk@95cov``, ``coverage@risk5``, …) is covered.
    """
    if not isinstance(metric, str):
        raise TypeError(f"metric must be a str; got {type(metric).__name__}")
    name = metric.lower()
    if name.startswith(HIGHER_IS_BETTER_PREFIXES):
        return True
    if name.startswith(LOWER_IS_BETTER_PREFIXES):
        return False
    raise ValueError(
        f"metric {metric!r} has no known direction; expected one of the prefixes "
        f"{LOWER_IS_BETTER_PREFIXES + HIGHER_IS_BETTER_PREFIXES}"
    )
