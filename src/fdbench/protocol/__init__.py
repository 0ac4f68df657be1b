"""Failure labels per study and the filtering rules of each evaluation protocol."""

from fdbench.protocol.evaluation_set import (
    NEW_CLASS_LABEL,
    EvaluationSet,
    Protocol,
    build_evaluation_set,
)

__all__ = ["NEW_CLASS_LABEL", "EvaluationSet", "Protocol", "build_evaluation_set"]
