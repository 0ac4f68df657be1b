"""Metrics of failure detection: risk-coverage curves, AURC/AUGRC, ranking, calibration, bootstrap.

Pure NumPy (no PyTorch), following the project's metric definitions (METRICS.md). Every
ranking-based metric comes from one sort of the confidence, tie groups as single steps.
``evaluate_all`` returns the whole suite (keys: ``metric_keys``); ``bootstrap`` resamples it
with seeded, paired multinomial counts (``bootstrap_counts``).
"""

from ._validation import UndefinedMetricWarning
from .bootstrap import bootstrap, bootstrap_counts, bootstrap_summary, iter_bootstrap_counts
from .calibration import ReliabilityBins, ece, mce, reliability_bins
from .conventions import (
    CONVENTION_KEYS,
    OOD_CONVENTION_KEYS,
    aurc_per_sample,
    auroc_f_ordered,
    coverage_at_accuracy_first_drop,
    evaluate_conventions,
    fpr_at_tpr_ood_positive,
)
from .curves import RiskCoverageCurve, risk_coverage_curve
from .probabilities import brier_from_probs, check_probs, nll_from_probs
from .ranking import ap_f_error, ap_f_success, auroc_f, auroc_out, fpr_at_tpr, fpr_at_tpr_out
from .scoring import accuracy, balanced_accuracy, brier, log_softmax, nll
from .selective import (
    augrc,
    augrc_ba,
    aurc,
    aurc_ba,
    aurc_balanced_residuals,
    balanced_residuals,
    coverage_at_risk,
    eaugrc,
    eaurc,
    min_selective_risk_at_coverage,
    naurc,
    optimal_aurc_augrc,
    selective_risk_at_coverage,
)
from .suite import (
    BINARY_ONLY_KEYS,
    LABEL_KEYS,
    LOGIT_KEYS,
    METRIC_KEYS,
    SOFT_METRIC_KEYS,
    evaluate_all,
    metric_keys,
)

__all__ = [
    "BINARY_ONLY_KEYS",
    "CONVENTION_KEYS",
    "LABEL_KEYS",
    "LOGIT_KEYS",
    "METRIC_KEYS",
    "OOD_CONVENTION_KEYS",
    "SOFT_METRIC_KEYS",
    "ReliabilityBins",
    "RiskCoverageCurve",
    "UndefinedMetricWarning",
    "accuracy",
    "ap_f_error",
    "ap_f_success",
    "augrc",
    "augrc_ba",
    "aurc",
    "aurc_ba",
    "aurc_balanced_residuals",
    "aurc_per_sample",
    "auroc_f",
    "auroc_f_ordered",
    "auroc_out",
    "balanced_accuracy",
    "balanced_residuals",
    "bootstrap",
    "bootstrap_counts",
    "bootstrap_summary",
    "brier",
    "brier_from_probs",
    "check_probs",
    "coverage_at_accuracy_first_drop",
    "coverage_at_risk",
    "eaugrc",
    "eaurc",
    "ece",
    "evaluate_all",
    "evaluate_conventions",
    "fpr_at_tpr",
    "fpr_at_tpr_ood_positive",
    "fpr_at_tpr_out",
    "iter_bootstrap_counts",
    "log_softmax",
    "mce",
    "metric_keys",
    "min_selective_risk_at_coverage",
    "naurc",
    "nll",
    "nll_from_probs",
    "optimal_aurc_augrc",
    "reliability_bins",
    "risk_coverage_curve",
    "selective_risk_at_coverage",
]
