"""The binary protocol: a validation-FPR classification threshold instead of arg-max (0.5).

Bernhardt et al., "Failure Detection in Medical Image Classification: A Reality Check and
Benchmarking Testbed", TMLR 2022, Section 4: for the binary tasks "the classification threshold
was chosen such that the FPR was 20 % on the validation set"; the prediction follows that
threshold, a sample's confidence is the softmax output of the *predicted* class
(``c(x) = p_ŷ``, Section 2.1) and the entropy scores are excluded (Figure 5: entropy is
symmetric around 0.5, whatever the threshold). Authors' code: ``get_threshold`` in
``failure_detection/gather_results_utils.py`` and ``SoftmaxBasedScorer`` in
``failure_detection/uncertainty_scores/softmax_scorer.py`` (melanibe/failure_detection_benchmark).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "BINARY_EXCLUDED_CSFS",
    "BINARY_PREDICTED_CLASS_CSFS",
    "fpr_threshold",
    "predicted_class_probability",
    "threshold_predictions",
]

#: CSFs dropped under the binary protocol: entropies of (mean) softmax outputs, symmetric around
#: p = 0.5 and so blind to a threshold elsewhere (the paper's MC-E is MCD-PE).
BINARY_EXCLUDED_CSFS: frozenset[str] = frozenset({"PE", "MCD-PE", "MCD-EE", "ENS-PE", "ENS-EE"})

#: CSFs that are "the softmax of the predicted class" and follow the thresholded prediction.
BINARY_PREDICTED_CLASS_CSFS: frozenset[str] = frozenset({"MSR", "MCD-MSR", "ENS-MSR"})


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
    largest ``t`` (the lower FPR) wins. This is the authors' rule (``argmin |fpr - target|``
    over sklearn's ``roc_curve``, whose first minimum is the lowest FPR), except that the
    authors then predict ``score > t``, which realises the FPR of the next higher threshold;
    here ``>=`` realises the chosen FPR exactly.

    Raises ValueError unless ``labels`` are 0/1 with both classes present and ``0 <= fpr <= 1``.
    """
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
    negatives = np.sort(s[y == 0])
    candidates = np.append(np.unique(s), np.inf)
    false_pos = negatives.size - np.searchsorted(negatives, candidates, side="left")
    gaps = np.abs(false_pos / negatives.size - fpr)
    best = np.flatnonzero(gaps == gaps.min())
    return float(candidates[best[-1]])


def threshold_predictions(positive_scores: ArrayLike, threshold: float) -> np.ndarray:
    """The binary predictions ``[score >= threshold]`` (int64, 1 = positive class)."""
    s = _binary_scores(positive_scores, "positive_scores")
    return (s >= threshold).astype(np.int64)


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
