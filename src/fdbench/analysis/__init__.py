"""Aggregation over runs, rankings, bootstrap rank-then-aggregate and significance tests."""

from fdbench.analysis.accepted_calibration import (
    acceptance_threshold,
    accepted_calibration,
    accepted_calibration_table,
)
from fdbench.analysis.aggregate import aggregate_seeds
from fdbench.analysis.agreement import ranking_agreement
from fdbench.analysis.bootstrap import (
    BOOTSTRAP_COLUMNS,
    StudySamples,
    bootstrap_analysis,
    bootstrap_study,
)
from fdbench.analysis.calibration import (
    FD_SHIFTS_CALIBRATION_BINS,
    calibration_analysis,
    calibration_treatment,
    csf_calibration,
    mean_calibration,
    platt_collapsed,
    reliability_table,
)
from fdbench.analysis.directions import higher_is_better
from fdbench.analysis.friedman import (
    FriedmanNemenyi,
    FriedmanResult,
    block_ranks,
    friedman_nemenyi,
    friedman_test,
    nemenyi_critical_difference,
    nemenyi_p_values,
    nemenyi_q,
)
from fdbench.analysis.leaderboard import (
    column_bootstrap,
    leaderboard_ranks,
    leaderboard_significance,
    paired_delta,
    paired_deltas,
    seed_summary,
    study_column,
)
from fdbench.analysis.operating_points import (
    OPERATING_POINT_COLUMNS,
    operating_point_table,
    split_operating_point_table,
)
from fdbench.analysis.paired import PairedSamples, paired_bootstrap, unfiltered_positions
from fdbench.analysis.ranking import (
    bootstrap_ranks,
    overall_bootstrap_ranks,
    overall_ranks,
    rank_csfs,
    rank_distribution,
    rank_then_aggregate,
)
from fdbench.analysis.scoring_methods import add_scoring_method, scoring_method_name
from fdbench.analysis.selection import best_configs, select_models
from fdbench.analysis.severity import severity_curves, severity_level
from fdbench.analysis.sgr import (
    SGRThreshold,
    risk_excess,
    risk_upper_bound,
    selective_outcome,
    sgr_threshold,
)
from fdbench.analysis.significance import holm, pairwise_wilcoxon, significance_matrix

__all__ = [
    "BOOTSTRAP_COLUMNS",
    "FD_SHIFTS_CALIBRATION_BINS",
    "OPERATING_POINT_COLUMNS",
    "FriedmanNemenyi",
    "FriedmanResult",
    "PairedSamples",
    "SGRThreshold",
    "StudySamples",
    "acceptance_threshold",
    "accepted_calibration",
    "accepted_calibration_table",
    "add_scoring_method",
    "aggregate_seeds",
    "best_configs",
    "block_ranks",
    "bootstrap_analysis",
    "bootstrap_ranks",
    "bootstrap_study",
    "calibration_analysis",
    "calibration_treatment",
    "column_bootstrap",
    "csf_calibration",
    "friedman_nemenyi",
    "friedman_test",
    "higher_is_better",
    "holm",
    "leaderboard_ranks",
    "leaderboard_significance",
    "mean_calibration",
    "nemenyi_critical_difference",
    "nemenyi_p_values",
    "nemenyi_q",
    "operating_point_table",
    "overall_bootstrap_ranks",
    "overall_ranks",
    "paired_bootstrap",
    "paired_delta",
    "paired_deltas",
    "pairwise_wilcoxon",
    "platt_collapsed",
    "rank_csfs",
    "rank_distribution",
    "rank_then_aggregate",
    "ranking_agreement",
    "reliability_table",
    "risk_excess",
    "risk_upper_bound",
    "scoring_method_name",
    "seed_summary",
    "select_models",
    "selective_outcome",
    "severity_curves",
    "severity_level",
    "sgr_threshold",
    "significance_matrix",
    "split_operating_point_table",
    "study_column",
    "unfiltered_positions",
]
