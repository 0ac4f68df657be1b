"""The interval every metric's value lies in by its definition (METRICS.md), for checking
results tables that enter from a user."""

from __future__ import annotations

import math

__all__ = ["METRIC_RANGES"]

_INF = math.inf

#: Metric name of a results row -> the closed interval its value lies in (NaN, an undefined
#: metric, aside). Rates, areas under ROC/PR curves, coverages, accuracies and calibration
#: errors lie in [0, 1]; the AURC family and selective risks in [0, inf) (residuals are
#: non-negative and may exceed 1, e.g. the balanced-accuracy error, METRICS.md "Inputs");
#: NLL in [0, inf); the Brier score of a probability vector in [0, 2].
METRIC_RANGES: dict[str, tuple[float, float]] = {
    **dict.fromkeys(
        (
            "auroc_f",
            "ap_f_success",
            "ap_f_error",
            "fpr@95tpr",
            "fpr@80tpr",
            "ece",
            "mce",
            "coverage@risk5",
            "accuracy",
            "balanced_accuracy",
            "roc_auc",
            "auroc_out",
            "fpr@95tpr_out",
        ),
        (0.0, 1.0),
    ),
    **dict.fromkeys(
        (
            "aurc",
            "augrc",
            "eaurc",
            "eaugrc",
            "naurc",
            "aurc_ba",
            "augrc_ba",
            "risk@95cov",
            "selective_risk@95cov",
            "mean_residual",
            "nll",
        ),
        (0.0, _INF),
    ),
    "brier": (0.0, 2.0),
}
