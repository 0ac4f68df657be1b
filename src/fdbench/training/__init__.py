"""Training methods, inference and model selection (PyTorch + Lightning, imported lazily)."""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = [
    "build_experiments",
    "deterministic",
    "load_checkpoint",
    "output_stores",
    "plan_jobs",
    "predict_experiment",
    "predict_split",
    "run_dir",
    "run_training_job",
    "train_or_load",
    "validation_score",
]

_LAZY = {
    "build_experiments": "experiments",
    "deterministic": "determinism",
    "load_checkpoint": "jobs",
    "output_stores": "jobs",
    "plan_jobs": "jobs",
    "predict_experiment": "inference",
    "predict_split": "inference",
    "run_dir": "jobs",
    "run_training_job": "jobs",
    "train_or_load": "jobs",
    "validation_score": "jobs",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
