"""Assembly of the samples a study is evaluated on, and their failure labels, under a protocol."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np

from fdbench.protocol.pooling import study_splits

NEW_CLASS_LABEL = -1


class Protocol(str, Enum):
    """How failures are defined on studies that contain new-class samples.

    ``failure_detection`` (FD-Shifts, Jaeger et al., ICLR 2023): a new-class study is evaluated on
    the i.i.d. test samples plus the new-class samples; every new-class sample is a failure and
    in-distribution misclassifications are removed, so the study measures the detection of the
    new-class failures (the i.i.d. study already judges the misclassifications).

    ``unknown_detection`` (Kim et al., 2023): the same samples without any filtering; every
    new-class sample and every in-distribution misclassification is an error. Kim's primary
    number is the AURC of the pooled study :data:`fdbench.protocol.UNKNOWN_STUDY` (see
    :func:`fdbench.protocol.unknown_detection_pools`).
    """

    FAILURE_DETECTION = "failure_detection"
    UNKNOWN_DETECTION = "unknown_detection"


@dataclass(frozen=True)
class EvaluationSet:
    """The samples one study is evaluated on.

    ``parts`` lists, in concatenation order, each contributing split and the indices of its
    samples that are kept; ``residuals`` (1 = failure) and ``is_new_class`` follow the same order.
    """

    study: str
    parts: tuple[tuple[str, np.ndarray], ...]
    residuals: np.ndarray
    is_new_class: np.ndarray

    def __len__(self) -> int:
        return int(self.residuals.shape[0])

    def gather(self, values_by_split: Mapping[str, np.ndarray], *, copy: bool = True) -> np.ndarray:
        """Concatenate per-split arrays (confidences, labels, …) in this set's sample order.

        ``copy=False``: where the set is one split with every sample kept, a read-only view of
        that split's own array (the same values in the same order) instead of a copy."""
        if not copy and len(self.parts) == 1:
            name, kept = self.parts[0]
            values = np.asarray(values_by_split[name])
            if values.ndim >= 1 and kept.size == values.shape[0]:
                view = values.view()
                view.flags.writeable = False
                return view
        return np.concatenate([np.asarray(values_by_split[name])[idx] for name, idx in self.parts])


def _as_protocol(protocol: Protocol | str) -> Protocol:
    try:
        return Protocol(protocol)
    except ValueError:
        allowed = ", ".join(p.value for p in Protocol)
        raise ValueError(f"protocol must be one of {allowed}; got {protocol!r}") from None


def build_evaluation_set(
    study: str,
    labels: Mapping[str, np.ndarray],
    predictions: Mapping[str, np.ndarray],
    *,
    protocol: Protocol | str = Protocol.FAILURE_DETECTION,
    iid_split: str = "iid",
    pools: Mapping[str, Sequence[str]] | None = None,
) -> EvaluationSet:
    """Build the evaluation set of ``study`` and its 0/1 residuals under ``protocol``.

    ``study`` is a split of ``labels``, a pooled study of ``pools`` (name → member splits, e.g.
    :func:`fdbench.protocol.unknown_detection_pools`: Kim et al.'s pooled in-distribution ∪
    near-OoD ∪ far-OoD set), or a pooled corruption study ``corruption/<severity>``,
    the concatenation of the per-type splits ``corruption/<type>/<severity>`` (see
    :func:`fdbench.protocol.corruption_pools`; FD-Shifts' one evaluation set per intensity).
    A sample whose label is -1 is a new-class sample and always a failure. A study made only of
    new-class samples is paired with the ``iid_split`` samples (as FD-Shifts and Kim et al. do);
    a study that already mixes both is used as it is. Under ``failure_detection`` the
    misclassified in-distribution samples of a study with new-class samples are removed.
    Studies without new-class samples keep every sample: residual = [prediction != label].
    """
    protocol = _as_protocol(protocol)
    names = list(study_splits(study, labels, pools=pools))
    study_labels = _joined([np.asarray(labels[name]) for name in names])
    if study_labels.size == 0:
        raise ValueError(f"study {study!r} has no samples")
    if np.all(study_labels == NEW_CLASS_LABEL):
        if study == iid_split:
            raise ValueError(
                f"the in-distribution study {iid_split!r} holds only new-class samples (label -1)"
            )
        if iid_split not in labels:
            raise ValueError(
                f"study {study!r} holds only new-class samples (label -1) and needs the "
                f"in-distribution split {iid_split!r} to pair with; available: {sorted(labels)}"
            )
        names = [iid_split, *names]
    has_new_class = any(np.any(np.asarray(labels[n]) == NEW_CLASS_LABEL) for n in names)

    parts, residuals, new_class = [], [], []
    for name in names:
        y = np.asarray(labels[name])
        pred = np.asarray(predictions[name])
        if pred.shape != y.shape:
            raise ValueError(
                f"predictions of split {name!r} have shape {pred.shape}, labels {y.shape}"
            )
        is_new = y == NEW_CLASS_LABEL
        wrong = is_new | (pred != y)
        if has_new_class and protocol is Protocol.FAILURE_DETECTION:
            idx = np.flatnonzero(is_new | ~wrong)
            wrong, is_new = wrong[idx], is_new[idx]
        else:
            idx = np.arange(y.shape[0])
        parts.append((name, idx))
        residuals.append(wrong.astype(np.float64))
        new_class.append(is_new)
    return EvaluationSet(
        study=study,
        parts=tuple(parts),
        residuals=_joined(residuals),
        is_new_class=_joined(new_class),
    )


def _joined(arrays: list[np.ndarray]) -> np.ndarray:
    """``np.concatenate(arrays)`` without the copy of a single array."""
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)
