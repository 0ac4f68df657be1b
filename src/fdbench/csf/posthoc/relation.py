"""Relation: the summed edge weights from a sample to the training samples in the neural
relation graph, each edge the product of feature and prediction similarities (Kim, Yun & Song,
NeurIPS 2023)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_array
from ._base import PostHocInputs, register_posthoc

__all__ = ["RELATION_THRESHOLD", "relation", "relation_bank", "relation_unit_rows"]

#: The cut-off below which an edge of the relation graph is dropped (``thres`` of the authors'
#: ``get_relation`` and of OpenOOD's, fixed there).
RELATION_THRESHOLD = 0.03

#: Query rows scored at a time (bounds the edge matrix held in memory to rows × bank size).
_CHUNK = 512


def relation_unit_rows(features: np.ndarray) -> np.ndarray:
    """OpenOOD's ``normalize`` of ``relation_postprocessor.py``: ``x / sqrt(‖x‖² + 1e-10)``."""
    return features / np.sqrt(np.sum(features**2, axis=1, keepdims=True) + 1e-10)


def relation_bank(features: ArrayLike, logits: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The graph's training nodes: their normalised features (:func:`relation_unit_rows`) and
    softmax probabilities."""
    from scipy.special import softmax

    x = as_float_array(features, "features", 2)
    z = as_float_array(logits, "logits", 2)
    if x.shape[0] != z.shape[0]:
        raise ValueError(f"features and logits must have as many rows, got {x.shape} and {z.shape}")
    return relation_unit_rows(x), softmax(z, axis=1)


def relation(
    features: ArrayLike,
    logits: ArrayLike,
    bank: tuple[ArrayLike, ArrayLike],
    power: float,
    threshold: float = RELATION_THRESHOLD,
) -> np.ndarray:
    """Relation, ``Σ_j [r_j > τ] r_j^t`` over the training nodes ``j`` of ``bank``
    (:func:`relation_bank`), with the edge weight ``r_j = max(⟨ĥ, ĥ_j⟩, 0) · ⟨p, p_j⟩``:
    ``ĥ`` the normalised feature (:func:`relation_unit_rows`), ``p = softmax(z)``, ``t`` the
    ``power`` and ``τ`` the ``threshold`` (0.03).

    Kim, Yun & Song, "Neural Relation Graph: A Unified Framework for Identifying Label Noise
    and Outlier Data", NeurIPS 2023 (arXiv:2301.12321): the outlier score of a sample is the
    sum of its edges to the training data in the label-free relation graph, whose kernel
    multiplies the clipped cosine similarity of the features by the inner product of the
    predicted probabilities. Followed here as released: the authors' ``relation.py``
    (``get_relation`` with ``kernel_type='cos_p'``, no labels) and OpenOOD's
    ``openood/postprocessors/relation_postprocessor.py``, which raise each edge weight — the
    product — to the power ``t`` after cutting the edges of weight ``≤ τ``. The authors'
    ``detect_ood.py`` ranks outliers by ``1 / (score + 1e-6)``; OpenOOD returns the score
    itself as the confidence, as here (the same ranking: the score is ≥ 0).
    """
    from scipy.special import softmax

    h = as_float_array(features, "features", 2)
    z = as_float_array(logits, "logits", 2)
    bank_h = as_float_array(bank[0], "bank[0]", 2)
    bank_p = as_float_array(bank[1], "bank[1]", 2)
    if h.shape[0] != z.shape[0]:
        raise ValueError(f"features and logits must have as many rows, got {h.shape} and {z.shape}")
    if bank_h.shape[1] != h.shape[1] or bank_p.shape != (bank_h.shape[0], z.shape[1]):
        raise ValueError(
            f"bank must hold features (M, {h.shape[1]}) and probabilities (M, {z.shape[1]}), "
            f"got {bank_h.shape} and {bank_p.shape}"
        )
    if isinstance(power, bool) or not isinstance(power, (int, float)) or not power > 0:
        raise ValueError(f"power must be a positive number, got {power!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or threshold < 0:
        raise ValueError(f"threshold must be a non-negative number, got {threshold!r}")
    unit, probs = relation_unit_rows(h), softmax(z, axis=1)
    scores = np.empty(h.shape[0])
    for start in range(0, h.shape[0], _CHUNK):
        rows = slice(start, start + _CHUNK)
        edges = np.clip(unit[rows] @ bank_h.T, 0.0, None) * (probs[rows] @ bank_p.T)
        scores[rows] = np.sum(np.where(edges > threshold, edges, 0.0) ** power, axis=1)
    return scores


@register_posthoc(
    "Relation",
    reads=("logits", "features", "train"),
    grid={"power": (1, 2, 4, 6, 8)},
    source="Kim et al. NeurIPS 2023; authors' relation.py; OpenOOD relation_postprocessor.py",
    colour="#DDAA33",
)
def _relation(inputs: PostHocInputs, split: str, *, power: float) -> np.ndarray:
    # OpenOOD's setup takes every training sample as a node; fdbench takes the stored training
    # split (inference's random subsample of at most max_train_samples).
    bank = inputs.fit(
        "relation_bank", lambda: relation_bank(inputs.features("train"), inputs.logits("train"))
    )
    return relation(inputs.features(split), inputs.logits(split), bank, power)
