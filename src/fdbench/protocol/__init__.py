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

__all__ = [
    "NEW_CLASS_LABEL",
    "PER_TYPE_CORRUPTION",
    "POOLED_CORRUPTION",
    "EvaluationSet",
    "Protocol",
    "build_evaluation_set",
    "corruption_pools",
    "pooled_corruption_study",
    "study_splits",
]
