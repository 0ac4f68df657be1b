"""What a user writes: the benchmark configuration as validated shapes (:mod:`.schema`) and the
one YAML reader (:mod:`.loader`). No behaviour and no registry: the training methods a
configuration's methods are validated against are handed in
(:func:`fdbench.jobs.plan.parse_config` hands in fdbench's)."""

from fdbench.config.loader import read_yaml, validate_config
from fdbench.config.schema import (
    DATA_ARGS,
    METHODS_CONTEXT,
    NEW_CLASS_KINDS,
    AnalysisConfig,
    ArchitectureConfig,
    AugmentationOp,
    BenchmarkConfig,
    DataConfig,
    EnsembleCombinations,
    FolderDataArgs,
    FolderStudyConfig,
    InferenceConfig,
    MethodConfig,
    MethodLookup,
    NpzDataArgs,
    NpzStudyConfig,
    OpenMaxConfig,
    ScheduleConfig,
    SelectionConfig,
    TrainingConfig,
    config_digest,
)

__all__ = [
    "DATA_ARGS",
    "METHODS_CONTEXT",
    "NEW_CLASS_KINDS",
    "AnalysisConfig",
    "ArchitectureConfig",
    "AugmentationOp",
    "BenchmarkConfig",
    "DataConfig",
    "EnsembleCombinations",
    "FolderDataArgs",
    "FolderStudyConfig",
    "InferenceConfig",
    "MethodConfig",
    "MethodLookup",
    "NpzDataArgs",
    "NpzStudyConfig",
    "OpenMaxConfig",
    "ScheduleConfig",
    "SelectionConfig",
    "TrainingConfig",
    "config_digest",
    "read_yaml",
    "validate_config",
]
