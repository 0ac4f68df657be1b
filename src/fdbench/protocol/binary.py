"""The binary protocol: a validation-FPR classification threshold instead of arg-max (0.5).

Bernhardt et al., "Failure Detection in Medical Image Classification: A Reality Check and
Benchmarking Testbed", TMLR 2022, Section 3.2.1: for the binary tasks "the classification
threshold was chosen such that the FPR was 20% on the validation set"; the prediction follows that
threshold, a sample's confidence is the softmax output of the *predicted* class
(``c(x) = p_ŷ``, Section 2.1) and the entropy scores are excluded (Figure 5: entropy is
symmetric around 0.5, whatever the threshold). Authors' code: ``get_threshold`` in
``failure_detection/gather_results_utils.py`` and ``SoftmaxBasedScorer`` in
``failure_detection/uncertainty_scores/softmax_scorer.py`` (melanibe/failure_detection_benchmark).
Which CSFs follow the predicted class and which are excluded is the ``binary`` field of each
CSF's spec (:class:`fdbench.csf.CSFSpec`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "THRESHOLD_RULES",
    "fpr_threshold",
    "fpr_threshold_roc_curve",
    "predicted_class_probability",
    "threshold_predictions",
]

#: The threshold rules: ``exact`` (:func:`fpr_threshold`, the default, predict ``score >= t``)
#: and ``roc_curve`` (:func:`fpr_threshold_roc_curve`, the authors' code, predict ``score > t``).
THRESHOLD_RULES: tuple[str, ...] = ("exact", "roc_curve")


def _binary_scores(scores: ArrayLike, name: str) -> np.ndarray:
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1 or s.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array; got shape {s.shape}")
    if not np.all(np.isfinite(s)):
        raise ValueError(f"{name} must be finite")
    return s


def fpr_threshold(scores: ArrayLike, labels: ArrayLike, fpr: float = 0.2) -> float:
    """The threshold ``t`` on the positive-class score whose validation FPR is nearest ``fpr``.

    Positive class = 1; a sample is predicted positive iff ``score >= t``. For a candidate
    ``t``, FPR(t) = #{label 0, score >= t} / #{label 0}. The candidates are every distinct
    score and ``+inf`` (nothing positive, FPR 0), so samples with equal scores always share a
    prediction. The chosen ``t`` minimises ``|FPR(t) - fpr|``; among equally near candidates the
    largest ``t`` (the lower FPR) wins. Bernhardt et al., TMLR 2022, Section 3.2.1 ("the
    classification threshold was chosen such that the FPR was 20% on the validation set").

    The authors' code (:func:`fpr_threshold_roc_curve`) picks among the points of
    scikit-learn's ``roc_curve`` instead, which drops collinear points and so can skip the FPR
    nearest the target: ``fpr_threshold([.9, .8, .7, .6, .5, .4], [1, 0, 0, 0, 0, 0], 0.2)`` is
    0.8 (FPR 0.2) where the authors' rule gives ``+inf`` (FPR 0); and it predicts
    ``score > t``. Both agree when no ROC point is dropped near the target.

    Raises ValueError unless ``labels`` are 0/1 with both classes present and ``0 <= fpr <= 1``.
    """
    s, y = _checked(scores, labels, fpr)
    negatives = np.sort(s[y == 0])
    candidates = np.append(np.unique(s), np.inf)
    false_pos = negatives.size - np.searchsorted(negatives, candidates, side="left")
    gaps = np.abs(false_pos / negatives.size - fpr)
    best = np.flatnonzero(gaps == gaps.min())
    return float(candidates[best[-1]])


def _checked(scores: ArrayLike, labels: ArrayLike, fpr: float) -> tuple[np.ndarray, np.ndarray]:
    s = _binary_scores(scores, "scores")
    y = np.asarray(labels)
    if y.shape != s.shape:
        raise ValueError(f"labels must have the shape of scores {s.shape}; got {y.shape}")
    if not np.all((y == 0) | (y == 1)):
        raise ValueError("labels must be 0 or 1 (positive class = 1)")
    if not (y == 0).any() or not (y == 1).any():
        raise ValueError("labels must hold both classes to set an FPR threshold")
    if not 0.0 <= fpr <= 1.0:
        raise ValueError(f"fpr must be in [0, 1]; got {fpr}")
    return s, y


def fpr_threshold_roc_curve(scores: ArrayLike, labels: ArrayLike, fpr: float = 0.2) -> float:
    """The authors' threshold: the ``roc_curve`` point whose FPR is nearest ``fpr``.

    ``thres[argmin |fpr_points - fpr|]`` over the points of scikit-learn's
    ``roc_curve(labels, scores)`` (>= 1.3, ``drop_intermediate=True``): one point per distinct
    score, descending, collinear points dropped (a point is kept when the second difference
    of the false- or true-positive counts around it is non-zero; the first and last always
    are), then the point ``(0, 0)`` at threshold ``+inf`` prepended. The first minimum wins
    (the lowest FPR). Predictions follow ``score > t`` (:func:`threshold_predictions` with
    ``strict=True``). A named option, not the default (:func:`fpr_threshold`): the dropped
    points can hold the FPR nearest the target.

    Authors' code: ``get_threshold`` in ``failure_detection/gather_results_utils.py``
    (melanibe/failure_detection_benchmark; Bernhardt et al., TMLR 2022), which predicts
    ``probas[:, 1] > threshold``.
    """
    s, y = _checked(scores, labels, fpr)
    order = np.argsort(-s, kind="stable")
    s_sorted = s[order]
    ends = np.r_[np.flatnonzero(np.diff(s_sorted)), s.size - 1]
    tps = np.cumsum(y[order])[ends]
    fps = 1 + ends - tps
    thresholds = s_sorted[ends]
    if fps.size > 2:
        kept = np.flatnonzero(np.r_[True, np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), True])
        fps, thresholds = fps[kept], thresholds[kept]
    fpr_points = np.r_[0, fps] / fps[-1]
    return float(np.r_[np.inf, thresholds][np.argmin(np.abs(fpr_points - fpr))])


def threshold_predictions(
    positive_scores: ArrayLike, threshold: float, *, strict: bool = False
) -> np.ndarray:
    """The binary predictions ``[score >= threshold]`` (``[score > threshold]`` when
    ``strict``, as the authors' code predicts), int64, 1 = positive class."""
    s = _binary_scores(positive_scores, "positive_scores")
    return (s > threshold if strict else s >= threshold).astype(np.int64)


def predicted_class_probability(probs: ArrayLike, predictions: ArrayLike) -> np.ndarray:
    """The softmax output of the predicted class, ``p_ŷ`` (Bernhardt et al., Section 2.1).

    ``probs`` is (N, K) class probabilities, ``predictions`` (N,) class indices. With the
    arg-max prediction this is the maximum softmax response; with a thresholded binary
    prediction it is ``p_1`` where 1 is predicted and ``1 - p_1`` elsewhere (the authors'
    ``SoftmaxBasedScorer``).
    """
    p = np.asarray(probs, dtype=np.float64)
    pred = np.asarray(predictions)
    if p.ndim != 2 or pred.shape != (p.shape[0],):
        raise ValueError(
            f"probs must be (N, K) and predictions (N,); got {p.shape} and {pred.shape}"
        )
    if pred.size and (pred.min() < 0 or pred.max() >= p.shape[1]):
        raise ValueError(f"predictions must be class indices in [0, {p.shape[1]})")
    return p[np.arange(p.shape[0]), pred.astype(np.int64)]
