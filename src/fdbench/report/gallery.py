"""Galleries of the most over-confident failures and most under-confident successes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

OVERCONFIDENT_FAILURE = "overconfident_failure"
UNDERCONFIDENT_SUCCESS = "underconfident_success"


@dataclass(frozen=True)
class Gallery:
    """Images chosen for a report gallery, one entry per image.

    ``images`` is uint8 N × H × W × C (C = 1 or 3); ``confidence`` the CSF's score; ``study``,
    ``csf`` and ``kind`` (``OVERCONFIDENT_FAILURE`` or ``UNDERCONFIDENT_SUCCESS``) name where the
    image belongs; optionally ``label`` and ``prediction`` (text: the true and the predicted
    class, ``"new class"`` for a new-class sample), shown under each image. Stored in a run
    folder as ``gallery.npz`` with these arrays (the last two only when given).
    """

    images: np.ndarray
    confidence: np.ndarray
    study: np.ndarray
    csf: np.ndarray
    kind: np.ndarray
    label: np.ndarray | None = None
    prediction: np.ndarray | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.images, np.ndarray) or self.images.dtype != np.uint8:
            raise TypeError("images must be a uint8 NumPy array")
        if self.images.ndim != 4 or self.images.shape[3] not in (1, 3):
            raise ValueError(
                f"images must be N x H x W x C with C in (1, 3); got {self.images.shape}"
            )
        n = self.images.shape[0]
        if (self.label is None) != (self.prediction is None):
            raise ValueError("label and prediction must be given together")
        for name in ("confidence", "study", "csf", "kind", *self._labelled()):
            if np.asarray(getattr(self, name)).shape != (n,):
                raise ValueError(f"{name} must hold one entry per image ({n})")

    def _labelled(self) -> tuple[str, ...]:
        return () if self.label is None else ("label", "prediction")

    def __len__(self) -> int:
        return self.images.shape[0]

    def save(self, path: str | Path) -> Path:
        """Write the gallery as an ``.npz`` file (atomically)."""
        import io

        from fdbench.core.io import write_bytes

        buffer = io.BytesIO()
        np.savez_compressed(
            buffer,
            images=self.images,
            confidence=np.asarray(self.confidence, dtype=np.float64),
            study=np.asarray(self.study, dtype=str),
            csf=np.asarray(self.csf, dtype=str),
            kind=np.asarray(self.kind, dtype=str),
            **{name: np.asarray(getattr(self, name), dtype=str) for name in self._labelled()},
        )
        return write_bytes(path, buffer.getvalue())

    @classmethod
    def load(cls, path: str | Path) -> Gallery:
        """Read a gallery written by :meth:`save`."""
        with np.load(path, allow_pickle=False) as data:
            names = ["images", "confidence", "study", "csf", "kind"]
            if "label" in data.files:
                names += ["label", "prediction"]
            return cls(**{k: data[k] for k in names})

    @classmethod
    def concat(cls, galleries: Sequence[Gallery]) -> Gallery:
        """One gallery holding the entries of all ``galleries`` in order (same image shape);
        labels and predictions only if every gallery has them."""
        if not galleries:
            raise ValueError("galleries must not be empty")
        names = ["images", "confidence", "study", "csf", "kind"]
        if all(g.label is not None for g in galleries):
            names += ["label", "prediction"]
        return cls(**{k: np.concatenate([getattr(g, k) for g in galleries]) for k in names})


def select_gallery(
    images: np.ndarray,
    residuals: ArrayLike,
    confidence: ArrayLike,
    *,
    study: str,
    csf: str,
    k: int = 8,
    labels: ArrayLike | None = None,
    predictions: ArrayLike | None = None,
) -> Gallery:
    """The ``k`` most over-confident failures and ``k`` most under-confident successes.

    Failures (residual > 0) with the highest confidence are the silent failures a CSF lets
    through; successes with the lowest confidence are the correct predictions it would reject
    first. Ties are broken by sample order. ``labels`` and ``predictions`` (one per sample,
    e.g. class names; given together) are kept for the chosen images as text.
    """
    r = np.asarray(residuals, dtype=np.float64)
    c = np.asarray(confidence, dtype=np.float64)
    if r.ndim != 1 or c.shape != r.shape or np.asarray(images).shape[:1] != r.shape:
        raise ValueError("images, residuals and confidence must have one entry per sample")
    if (labels is None) != (predictions is None):
        raise ValueError("labels and predictions must be given together")
    named = {}
    if labels is not None:
        for name, values in (("labels", labels), ("predictions", predictions)):
            if np.asarray(values).shape != r.shape:
                raise ValueError(f"{name} must have one entry per sample ({r.size})")
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive int; got {k!r}")
    failures = np.flatnonzero(r > 0)
    successes = np.flatnonzero(r == 0)
    worst = failures[np.argsort(-c[failures], kind="stable")[:k]]
    shy = successes[np.argsort(c[successes], kind="stable")[:k]]
    chosen = np.concatenate([worst, shy])
    if labels is not None:
        named = {
            "label": np.asarray(labels).astype(str)[chosen],
            "prediction": np.asarray(predictions).astype(str)[chosen],
        }
    kind = [OVERCONFIDENT_FAILURE] * worst.size + [UNDERCONFIDENT_SUCCESS] * shy.size
    return Gallery(
        images=np.asarray(images)[chosen],
        confidence=c[chosen],
        study=np.full(chosen.size, study),
        csf=np.full(chosen.size, csf),
        kind=np.asarray(kind, dtype=str),
        **named,
    )
