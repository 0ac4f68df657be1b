"""Metrics of failure detection: risk-coverage curves, AURC/AUGRC, ranking, calibration, bootstrap.

Pure NumPy (no PyTorch), following the project's metric definitions (METRICS.md). Every
ranking-based metric comes from one sort of the confidence, tie groups as single steps.
``evaluate_all`` returns the whole suite (keys: ``metric_keys``); ``bootstrap`` resamples it
with seeded, paired multinomial counts (``bootstrap_counts``). Beside the areas: certified
operating points (``certify``), population-AURC estimators, per-group risk and conformal sets.
"""

from ._validation import UndefinedMetricWarning
from .bootstrap import bootstrap, bootstrap_counts, bootstrap_summary, iter_bootstrap_counts
from .calibration import ReliabilityBins, ece, mce, reliability_bins
from .conformal import (
    conformal_quantile,
    conformal_scores,
    conformal_sets,
    mean_set_size,
    per_class_coverage,
    set_coverage,
)
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
from .groups import GroupMetrics, group_metrics, mondrian_operating_points, worst_group
from .operating_points import (
    OPERATING_POINT_METHODS,
    OperatingPoint,
    OperatingPointOutcome,
    apply_operating_point,
    binomial_p_value,
    calibration_split,
    certify,
    crc_threshold,
    fixed_sequence_testing,
    hoeffding_bentkus_p_value,
    ltt_threshold,
    sgr_threshold,
    simulate_operating_points,
)
from .population import population_aurc, population_aurc_interval
from .probabilities import brier_from_probs, check_probs, nll_from_probs
from .ranking import ap_f_error, ap_f_success, auroc_f, auroc_out, fpr_at_tpr, fpr_at_tpr_out
from .scoring import (
    accuracy,
    balanced_accuracy,
    balanced_accuracy_of_predictions,
    brier,
    log_softmax,
    nll,
    per_sample_scores,
)
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
    "OPERATING_POINT_METHODS",
    "SOFT_METRIC_KEYS",
    "GroupMetrics",
    "MetricSpec",
    "OperatingPoint",
    "OperatingPointOutcome",
    "ReliabilityBins",
    "RiskCoverageCurve",
    "UndefinedMetricWarning",
    "accuracy",
    "add_metric",
    "ap_f_error",
    "ap_f_success",
    "apply_operating_point",
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
    "balanced_accuracy_of_predictions",
    "balanced_residuals",
    "binomial_p_value",
    "bootstrap",
    "bootstrap_counts",
    "bootstrap_summary",
    "brier",
    "brier_from_probs",
    "calibration_split",
    "certify",
    "check_probs",
    "conformal_quantile",
    "conformal_scores",
    "conformal_sets",
    "coverage_at_accuracy_first_drop",
    "coverage_at_risk",
    "crc_threshold",
    "eaugrc",
    "eaurc",
    "ece",
    "evaluate_all",
    "evaluate_conventions",
    "find_metric",
    "fixed_sequence_testing",
    "fpr_at_tpr",
    "fpr_at_tpr_ood_positive",
    "fpr_at_tpr_out",
    "group_metrics",
    "hoeffding_bentkus_p_value",
    "iter_bootstrap_counts",
    "log_softmax",
    "ltt_threshold",
    "mce",
    "mean_set_size",
    "metric_keys",
    "metric_spec",
    "metric_specs",
    "min_selective_risk_at_coverage",
    "mondrian_operating_points",
    "naurc",
    "nll",
    "nll_from_probs",
    "optimal_aurc_augrc",
    "per_class_coverage",
    "per_sample_scores",
    "population_aurc",
    "population_aurc_interval",
    "register_metric",
    "reliability_bins",
    "risk_coverage_curve",
    "selective_risk_at_coverage",
    "set_coverage",
    "sgr_threshold",
    "simulate_operating_points",
    "worst_group",
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
