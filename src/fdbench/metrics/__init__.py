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
from .specs import (
    MetricSpec,
    add_metric,
    find_metric,
    metric_spec,
    metric_specs,
    register_metric,
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
    "MetricSpec",
    "ReliabilityBins",
    "RiskCoverageCurve",
    "UndefinedMetricWarning",
    "accuracy",
    "add_metric",
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
    "find_metric",
    "fpr_at_tpr",
    "fpr_at_tpr_ood_positive",
    "fpr_at_tpr_out",
    "iter_bootstrap_counts",
    "log_softmax",
    "mce",
    "metric_keys",
    "metric_spec",
    "metric_specs",
    "min_selective_risk_at_coverage",
    "naurc",
    "nll",
    "nll_from_probs",
    "optimal_aurc_augrc",
    "register_metric",
    "reliability_bins",
    "risk_coverage_curve",
    "selective_risk_at_coverage",
]


def _import_modules() -> None:
    """Import every module of this package, so that a module that registers a metric with
    :func:`register_metric` (the recipe of CONTRIBUTING.md: one new file) is in the list without any
    other file naming it."""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


_import_modules()
