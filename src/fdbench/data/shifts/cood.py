"""Class-out-of-distribution severity levels of Galil et al. (ICLR 2023), per model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

PERCENTILES = tuple(range(0, 101, 10))
#: Estimation and test samples per OOD class (Galil et al., ICLR 2023, Appendix L.1).
N_ESTIMATION, N_TEST = 150, 50


def cood_estimation_split(
    classes: np.ndarray,
    *,
    n_estimation: int = N_ESTIMATION,
    n_test: int = N_TEST,
    seed: int | np.random.Generator = 0,
    keep_small_classes: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint, seeded estimation and test masks over OOD samples, class by class.

    Galil et al., ICLR 2023, Appendix L.1: classes with fewer than 200 samples are removed
    ("we remove classes with a low number of samples; we set our threshold to 200 samples");
    every other class keeps a random 200 of its samples, 150 to *estimate* its severity and 50
    to *test* detection if it is chosen. Here a class with at least ``n_estimation + n_test``
    samples gets exactly that many (the rest are unused) and a smaller one is removed (both
    masks False; :func:`cood_small_classes` lists them). With ``keep_small_classes`` (an
    option, not the paper's rule) a smaller class of n samples keeps all of them in the same
    proportion: ``max(1, ⌊n · n_estimation / (n_estimation + n_test)⌋)`` estimation samples
    (at most n − 1) and the others for test; a class with fewer than 2 samples is still left
    out. Each class draws a random permutation of its samples from one generator, classes in
    ascending id order (removed classes draw nothing).
    """
    labels = np.asarray(classes)
    if labels.ndim != 1 or not np.issubdtype(labels.dtype, np.integer):
        raise TypeError("classes must be a 1-D array of integer OOD class ids")
    for name, value in (("n_estimation", n_estimation), ("n_test", n_test)):
        if not isinstance(value, int | np.integer) or value < 1:
            raise ValueError(f"{name} must be an int >= 1; got {value!r}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    estimation = np.zeros(labels.shape, dtype=bool)
    test = np.zeros(labels.shape, dtype=bool)
    order = np.argsort(labels, kind="stable")
    ids, starts = np.unique(labels[order], return_index=True)
    for idx in np.split(order, starts[1:]) if ids.size else []:
        n = idx.size
        if n < 2 or (n < n_estimation + n_test and not keep_small_classes):
            continue
        if n >= n_estimation + n_test:
            n_est, n_tst = n_estimation, n_test
        else:
            n_est = min(max(1, n * n_estimation // (n_estimation + n_test)), n - 1)
            n_tst = n - n_est
        chosen = rng.permutation(idx)
        estimation[chosen[:n_est]] = True
        test[chosen[n_est : n_est + n_tst]] = True
    return estimation, test


def cood_small_classes(
    classes: np.ndarray, *, n_estimation: int = N_ESTIMATION, n_test: int = N_TEST
) -> np.ndarray:
    """The OOD class ids with fewer than ``n_estimation + n_test`` samples (ascending): those
    :func:`cood_estimation_split` removes by default (Galil et al., App. L.1: fewer than 200)."""
    ids, counts = np.unique(np.asarray(classes), return_counts=True)
    return ids[counts < n_estimation + n_test]


def cood_group_size(n_id_classes: int, n_ood_classes: int, n_levels: int = len(PERCENTILES)) -> int:
    """Classes per C-OOD group: the number of in-distribution classes, scaled down if needed.

    Galil et al. (Appendix L.2) make every group as large as the ID label set (1 000 classes of
    12 563), so that a severity level is as large as the ID test set. With a small OOD pool
    that leaves too few sliding windows to give each of the ``n_levels`` levels its own group;
    the group size is then ``max(1, n_ood_classes − n_levels + 1)``, the largest size with at
    least ``n_levels`` windows.
    """
    for name, value in (("n_id_classes", n_id_classes), ("n_ood_classes", n_ood_classes)):
        if not isinstance(value, int | np.integer) or value < 1:
            raise ValueError(f"{name} must be an int >= 1; got {value!r}")
    return int(min(n_id_classes, max(1, n_ood_classes - n_levels + 1)))


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
    test_mask: np.ndarray | None = None,
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
    moved to ``W − 1``; ``get_severity_levels_groups_of_classes`` in
    ``utils/severity_estimation_utils.py``, whose stable argsort orders equal scores by class
    id as here). Test samples of a level are the ``test_mask`` samples of its classes (default:
    the non-estimation samples), disjoint from those that scored it. Without ``estimation_mask``
    a seeded ``estimation_fraction`` of each class estimates; :func:`cood_estimation_split`
    gives the paper's 150/50 split and :func:`cood_group_size` its group size ``k``.
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
    test_mask = ~estimation_mask if test_mask is None else np.asarray(test_mask, dtype=bool)
    if test_mask.shape != labels.shape:
        raise ValueError("test_mask must have the shape of labels")
    if np.any(test_mask & estimation_mask):
        raise ValueError("test_mask and estimation_mask must be disjoint")
    scores = {}
    est_idx = np.flatnonzero(estimation_mask)
    est_idx = est_idx[np.argsort(labels[est_idx], kind="stable")]
    est_classes, starts = np.unique(labels[est_idx], return_index=True)
    for c, idx in zip(est_classes, np.split(est_idx, starts[1:]), strict=True):
        scores[int(c)] = float(confidence[idx].mean())
    missing = [int(c) for c in classes if int(c) not in scores]
    if missing:
        raise ValueError(f"class {missing[0]} has no estimation samples")
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
        tests.append(np.flatnonzero(test_mask & np.isin(labels, group)))
    return CoodLevels(
        tuple(percentiles),
        tuple(groups),
        np.array(level_scores, dtype=np.float64),
        tuple(tests),
        scores,
    )


def cood_studies(levels: CoodLevels, images: np.ndarray) -> tuple:
    """One :class:`~fdbench.data.types.Study` per C-OOD level: ``cood/<percentile>``.

    ``images`` are the OOD samples that ``levels`` was computed on (already in the training
    format); every study holds the test samples of its level, labelled −1 (new class), with
    ``severity`` the level's index (0 = easiest).
    """
    from fdbench.data.types import Study, StudyKind

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
