"""Build the experiments a benchmark configuration names (no PyTorch needed)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fdbench.config.schema import BenchmarkConfig
from fdbench.core.callables import import_callable
from fdbench.core.io import atomic_path
from fdbench.data.types import Experiment

__all__ = ["SPLIT_FILE", "build_experiments", "experiment_for_run", "write_split"]

#: Name of the file recording a run's class draw in its run folder.
SPLIT_FILE = "split.json"

_PER_RUN_CACHE: dict[tuple[str, int], list[Experiment]] = {}


def build_experiments(config: BenchmarkConfig, *, run_seed: int | None = None) -> list[Experiment]:
    """Call the builder of ``config.data`` with its ``args`` and keep the experiments named
    in ``config.data.experiments`` (all when unset), in the builder's order.

    With ``run_seed`` (only where ``config.data.per_run`` is set) the builder also gets
    ``run_seed=run_seed``: the experiments of that run. A builder ``"module:callable"`` is
    imported (your own data); any other is a name of the registry of builders
    (:func:`fdbench.data.suites.get_builder`: the suites' builders, e.g.
    ``fashion_mnist_experiments``, ``folder_experiments``, and those of the ``fdbench.builders``
    entry points). A missing builder or unknown experiment name raises ``ValueError``; a
    builder returning anything but a non-empty list of :class:`~fdbench.data.types.Experiment` a
    ``TypeError``.
    """
    data = config.data
    if run_seed is not None and not data.per_run:
        raise ValueError("run_seed is only given where config.data.per_run is set")
    builder = _builder(data.builder)
    args = dict(data.args)
    if run_seed is not None:
        args["run_seed"] = run_seed
    experiments = list(builder(**args))
    wrong = [type(e).__name__ for e in experiments if not isinstance(e, Experiment)]
    if wrong or not experiments:
        raise TypeError(
            f"data.builder {data.builder!r} must return a non-empty list of "
            f"fdbench.data.types.Experiment, got {wrong or 'none'}"
        )
    if data.experiments is None:
        return experiments
    names = [e.name for e in experiments]
    unknown = sorted(set(data.experiments) - set(names))
    if unknown:
        raise ValueError(f"data.experiments names {unknown}, but {data.builder} builds {names}")
    return [e for e in experiments if e.name in data.experiments]


def _builder(name: str) -> Callable[..., Any]:
    """The builder function ``name``: ``"module:callable"``, or a builder of the registry of
    :mod:`fdbench.data.suites` (``ValueError`` listing them if there is none)."""
    if ":" in name:
        return import_callable(name, "data.builder")
    from fdbench.data.suites import get_builder

    return get_builder(name)


def experiment_for_run(config: BenchmarkConfig, experiment: Experiment, seed: int) -> Experiment:
    """The experiment that run ``seed`` trains and is tested on.

    ``experiment`` itself unless ``config.data.per_run`` is set; then the experiment of the same
    name built with ``run_seed=seed`` (:func:`build_experiments`; built once per config and
    seed in this process).
    """
    if not config.data.per_run:
        return experiment
    key = (config.model_dump_json(), int(seed))
    if key not in _PER_RUN_CACHE:
        _PER_RUN_CACHE[key] = build_experiments(config, run_seed=int(seed))
    for candidate in _PER_RUN_CACHE[key]:
        if candidate.name == experiment.name:
            return candidate
    raise ValueError(f"run seed {seed} builds no experiment named {experiment.name!r}")


def write_split(experiment: Experiment, folder: str | os.PathLike[str]) -> Path | None:
    """Write ``experiment.split`` (its per-run class draw) to ``folder/split.json``; nothing
    for a fixed split. Returns the path written, or ``None``."""
    if experiment.split is None:
        return None
    path = Path(folder) / SPLIT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(experiment.split, indent=2, sort_keys=True))
    return path
