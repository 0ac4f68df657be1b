"""Class-out-of-distribution severity levels of Galil et al. (ICLR 2023), per model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

PERCENTILES = tuple(range(0, 101, 10))


@dataclass(frozen=True)
class CoodLevels:
    """Severity levels: per level the OOD class group, its score and the test sample indices."""

    percentiles: tuple[int, ...]
    groups: tuple[tuple[int, ...], ...]
    scores: np.ndarray  # float64, mean estimation confidence of each group
    test_indices: tuple[np.ndarray, ...]
    class_scores: dict[int, float]


def cood_severity_levels(
    confidence: np.ndarray,
    labels: np.ndarray,
    *,
    k: int = 10,
    estimation_mask: np.ndarray | None = None,
    estimation_fraction: float = 0.5,
    seed: int | np.random.Generator = 0,
    percentiles: Sequence[float] = PERCENTILES,
) -> CoodLevels:
    """C-OOD severity levels from a model's confidences on held-out (OOD) classes.

    Galil, Dabbah & El-Yaniv, "A framework for benchmarking class-out-of-distribution detection
    and its application to ImageNet", ICLR 2023: the severity score of an OOD class is the
    model's mean confidence on its *estimation* samples; classes are sorted by score, every
    window of ``k`` consecutive classes is a candidate group scored by its mean class score, and
    the level at percentile p is the window at position ``min(⌊p/100 · W⌋, W − 1)`` of the W
    windows (sorted by score, so p = 0 is the easiest group, p = 100 the hardest). That index is
    the one of the authors' implementation (``percentile_severity_alg`` of
    github.com/mdabbah/COOD_benchmarking: ``int(q · W)`` for q = 0, 0.1, …, 1, the last one
    moved to ``W − 1``). Test samples of a level are the non-estimation samples of its classes,
    disjoint from those that scored it. Without ``estimation_mask`` a seeded
    ``estimation_fraction`` of each class estimates.
    """
    confidence = np.asarray(confidence, dtype=np.float64)
    labels = np.asarray(labels)
    if confidence.ndim != 1 or labels.shape != confidence.shape:
        raise ValueError("confidence and labels must be 1-D arrays of equal length")
    if not np.issubdtype(labels.dtype, np.integer):
        raise TypeError(f"labels must be integer class ids; got dtype {labels.dtype}")
    if not np.all(np.isfinite(confidence)):
        raise ValueError("confidence must be finite")
    classes = np.unique(labels)
    if not isinstance(k, int | np.integer) or not 1 <= k <= classes.size:
        raise ValueError(f"k must be an int in [1, {classes.size}] (number of classes); got {k}")
    if any(not 0 <= p <= 100 for p in percentiles):
        raise ValueError("percentiles must lie in [0, 100]")
    if estimation_mask is None:
        if not 0 < estimation_fraction < 1:
            raise ValueError(f"estimation_fraction must lie in (0, 1); got {estimation_fraction}")
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        estimation_mask = np.zeros(labels.shape, dtype=bool)
        for c in classes:
            idx = np.flatnonzero(labels == c)
            n_est = min(max(1, round(estimation_fraction * idx.size)), idx.size - 1)
            estimation_mask[rng.choice(idx, n_est, replace=False)] = True
    estimation_mask = np.asarray(estimation_mask, dtype=bool)
    if estimation_mask.shape != labels.shape:
        raise ValueError("estimation_mask must have the shape of labels")
    scores = {}
    for c in classes:
        est = estimation_mask & (labels == c)
        if not est.any():
            raise ValueError(f"class {c} has no estimation samples")
        scores[int(c)] = float(confidence[est].mean())
    order = sorted(scores, key=lambda c: (scores[c], c))
    sorted_scores = np.array([scores[c] for c in order])
    n_windows = len(order) - k + 1
    window_scores = np.convolve(sorted_scores, np.ones(k) / k, mode="valid")
    groups, level_scores, tests = [], [], []
    for p in percentiles:
        w = min(int(np.floor(p * n_windows / 100)), n_windows - 1)
        group = tuple(order[w : w + k])
        groups.append(group)
        level_scores.append(window_scores[w])
        tests.append(np.flatnonzero(~estimation_mask & np.isin(labels, group)))
    return CoodLevels(
        tuple(percentiles),
        tuple(groups),
        np.array(level_scores, dtype=np.float64),
        tuple(tests),
        scores,
    )


def cood_studies(levels: CoodLevels, images: np.ndarray) -> tuple:
    """One :class:`~fdbench.data.studies.Study` per C-OOD level: ``cood/<percentile>``.

    ``images`` are the OOD samples that ``levels`` was computed on (already in the training
    format); every study holds the test samples of its level, labelled −1 (new class), with
    ``severity`` the level's index (0 = easiest).
    """
    from fdbench.data.studies import Study, StudyKind

    if not isinstance(images, np.ndarray) or images.dtype != np.uint8 or images.ndim != 4:
        raise TypeError("images must be a uint8 numpy array of shape N×H×W×C")
    n_max = max((int(idx.max()) for idx in levels.test_indices if idx.size), default=-1)
    if n_max >= images.shape[0]:
        raise ValueError(f"images must hold every sample of levels; index {n_max} is out of range")
    return tuple(
        Study(
            f"cood/{p}",
            StudyKind.COOD,
            images[idx],
            np.full(idx.size, -1, dtype=np.int64),
            severity=level,
        )
        for level, (p, idx) in enumerate(zip(levels.percentiles, levels.test_indices, strict=True))
    )
