"""The search of each post-hoc score's hyper-parameters on validation data only, in two modes:
in-distribution validation, and with a validation OOD set disjoint from every test study."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fdbench.outputs.schema import RunOutputs

from ._base import PostHocInputs, grid_points, posthoc_score, posthoc_scores

__all__ = [
    "SEARCH_MODES",
    "PostHocChoice",
    "posthoc_confidences",
    "search_posthoc",
    "selection_data",
]

#: ``"id"``: select on the in-distribution ``val`` split (failures: its misclassifications);
#: ``"ood"``: on ``val`` plus validation OOD splits disjoint from every test study, whose
#: samples are all failures (OpenOOD's "APS" mode, without touching a test split).
SEARCH_MODES = ("id", "ood")


@dataclass(frozen=True)
class PostHocChoice:
    """The hyper-parameters a search chose for score ``name``, its selection metric's value on
    the selection data, and every grid point's value (in grid order)."""

    name: str
    params: dict[str, Any]
    value: float
    tried: tuple[tuple[str, float], ...]

    def params_json(self) -> str:
        """The chosen values as sorted JSON (``{}`` for a score without hyper-parameters)."""
        return json.dumps(self.params, sort_keys=True)


def selection_data(
    inputs: PostHocInputs,
    mode: str,
    val_ood: Sequence[str],
    test_studies: Sequence[str],
) -> tuple[list[str], np.ndarray]:
    """The splits a search scores and their residuals: ``val`` (residual 1 where the arg-max
    of the logits misses the label) and, in mode ``"ood"``, the ``val_ood`` splits (every
    sample a failure). A ``val_ood`` split that is ``train``, ``val`` or one of
    ``test_studies`` (or a study pooling it, ``<split>/...``) is refused."""
    if mode not in SEARCH_MODES:
        raise ValueError(f"mode must be one of {SEARCH_MODES}, got {mode!r}")
    if isinstance(val_ood, str):
        raise TypeError("val_ood must be a sequence of split names, not a str")
    if mode == "id" and val_ood:
        raise ValueError("val_ood is given only in mode 'ood'")
    if mode == "ood" and not val_ood:
        raise ValueError("mode 'ood' needs at least one val_ood split")
    for name in val_ood:
        overlapping = [
            s
            for s in test_studies
            if s == name or s.startswith(f"{name}/") or name.startswith(f"{s}/")
        ]
        if name in ("train", "val") or overlapping:
            raise ValueError(
                f"val_ood split {name!r} must be disjoint from train, val and every test study; "
                f"it overlaps {overlapping or [name]}"
            )
    labels = inputs.labels("val")
    known = labels >= 0
    if not known.all():
        raise ValueError("split 'val' must hold in-distribution samples only (labels >= 0)")
    residuals = [(np.argmax(inputs.logits("val"), axis=1) != labels).astype(np.float64)]
    residuals += [np.ones(inputs.labels(name).shape[0]) for name in val_ood]
    return ["val", *val_ood], np.concatenate(residuals)


def search_posthoc(
    inputs: PostHocInputs,
    name: str,
    *,
    mode: str = "id",
    val_ood: Sequence[str] = (),
    test_studies: Sequence[str] = (),
    metric: str = "aurc",
    grid: dict[str, tuple[Any, ...]] | None = None,
) -> PostHocChoice:
    """Choose the hyper-parameters of post-hoc score ``name`` from its grid by ``metric`` (a
    metric of :func:`fdbench.metrics.metric_spec` with a function, AURC by default) on the
    selection data of :func:`selection_data`; ``grid`` replaces the default values of the
    hyper-parameters it names. The first best grid point wins ties; a grid point the outputs
    do not allow (its score raises ``ValueError``) is recorded with value NaN and skipped.
    Only ``train``, ``val`` and the ``val_ood`` splits are read. A score without
    hyper-parameters gets ``{}`` (its value is still reported)."""
    from fdbench.metrics import metric_spec

    spec = metric_spec(metric)
    if spec.function is None:
        raise ValueError(f"metric {metric!r} has no function to select with")
    score = posthoc_score(name)
    splits, residuals = selection_data(inputs, mode, val_ood, test_studies)
    chosen_grid = {**score.grid, **(grid or {})}
    unknown = sorted(set(chosen_grid) - set(score.grid))
    if unknown:
        raise ValueError(f"grid of {name!r} names unknown hyper-parameter(s) {unknown}")
    best: tuple[float, dict[str, Any]] | None = None
    tried = []
    for params in grid_points(chosen_grid):
        try:
            confidence = np.concatenate([score.compute(inputs, s, **params) for s in splits])
        except ValueError:
            # a grid point these outputs do not allow (e.g. a percentile that keeps no
            # activation of a narrow layer) is recorded as NaN and never chosen
            tried.append((json.dumps(params, sort_keys=True), float("nan")))
            continue
        value = float(spec.function(residuals, confidence))
        tried.append((json.dumps(params, sort_keys=True), value))
        better = best is None or (value > best[0] if spec.higher_is_better else value < best[0])
        if better:
            best = (value, params)
    if best is None:
        raise ValueError(f"no grid point of {name!r} can be computed on these outputs")
    return PostHocChoice(name, best[1], best[0], tuple(tried))


def posthoc_confidences(
    run: RunOutputs,
    splits: Sequence[str],
    names: Sequence[str] | None = None,
    *,
    mode: str = "id",
    val_ood: Sequence[str] = (),
    metric: str = "aurc",
) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, PostHocChoice]]:
    """Every post-hoc score of ``names`` (default: all) that ``run`` allows, with its
    hyper-parameters searched (:func:`search_posthoc`) before any of ``splits`` is scored.

    Returns ``({split: {score: confidences}}, {score: choice})``; the test studies the search
    must stay clear of are ``splits`` other than ``train``/``val``. A score whose outputs are
    not stored (no features, no last layer, no ``train``/``val``) is left out.
    """
    inputs = PostHocInputs(run)
    chosen = list(posthoc_scores()) if names is None else list(names)
    tests = [s for s in splits if s not in ("train", "val")]
    if not inputs.has("val"):
        raise ValueError("the post-hoc search needs a 'val' split")
    choices: dict[str, PostHocChoice] = {}
    for name in chosen:
        score = posthoc_score(name)
        if all(inputs.allows(score.reads, s) for s in ["val", *val_ood]):
            choices[name] = search_posthoc(
                inputs, name, mode=mode, val_ood=val_ood, test_studies=tests, metric=metric
            )
    confidences = {
        s: {
            name: posthoc_score(name).compute(inputs, s, **choice.params)
            for name, choice in choices.items()
            if inputs.allows(posthoc_score(name).reads, s)
        }
        for s in splits
    }
    return confidences, choices
