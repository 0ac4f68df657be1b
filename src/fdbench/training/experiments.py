"""Build the experiments a benchmark configuration names (no PyTorch needed)."""

from __future__ import annotations

from importlib import import_module

from ..config import BenchmarkConfig
from ..data.studies import Experiment

__all__ = ["build_experiments"]


def build_experiments(config: BenchmarkConfig) -> list[Experiment]:
    """Call ``fdbench.data.<builder>(**args)`` of ``config.data`` and keep the experiments named
    in ``config.data.experiments`` (all when unset), in the builder's order.

    The builder is looked up in ``fdbench.data`` and then ``fdbench.data.studies``; a missing
    builder or unknown experiment name raises ``ValueError``.
    """
    data = config.data
    builder = None
    for module in ("fdbench.data", "fdbench.data.studies"):
        builder = getattr(import_module(module), data.builder, None)
        if builder is not None:
            break
    if not callable(builder):
        raise ValueError(f"data.builder {data.builder!r} is not a function of fdbench.data")
    experiments = list(builder(**data.args))
    if data.experiments is None:
        return experiments
    names = [e.name for e in experiments]
    unknown = sorted(set(data.experiments) - set(names))
    if unknown:
        raise ValueError(f"data.experiments names {unknown}, but {data.builder} builds {names}")
    return [e for e in experiments if e.name in data.experiments]
