"""Failure labels per study and the filtering rules of each evaluation protocol."""

from fdbench.protocol.evaluation_set import (
    NEW_CLASS_LABEL,
    EvaluationSet,
    Protocol,
    build_evaluation_set,
)
from fdbench.protocol.pooling import (
    PER_TYPE_CORRUPTION,
    POOLED_CORRUPTION,
    corruption_pools,
    pooled_corruption_study,
    study_splits,
)
from fdbench.protocol.unknown_detection import (
    FAR_OOD_KIND,
    FAR_OOD_STUDY,
    NEAR_OOD_KIND,
    NEAR_OOD_STUDY,
    OOD_METRICS,
    UNKNOWN_STUDY,
    unknown_detection_pools,
)

__all__ = [
    "FAR_OOD_KIND",
    "FAR_OOD_STUDY",
    "NEAR_OOD_KIND",
    "NEAR_OOD_STUDY",
    "NEW_CLASS_LABEL",
    "OOD_METRICS",
    "PER_TYPE_CORRUPTION",
    "POOLED_CORRUPTION",
    "UNKNOWN_STUDY",
    "EvaluationSet",
    "Protocol",
    "build_evaluation_set",
    "corruption_pools",
    "pooled_corruption_study",
    "study_splits",
    "unknown_detection_pools",
]
