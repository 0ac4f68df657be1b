"""The data every stage passes on: image data sets, studies and experiments."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

from fdbench.core.names import check_path_name


@dataclass(frozen=True)
class ImageDataset:
    """Images (uint8, N×H×W×C, C = 1 grey or 3 colour), int64 labels indexing ``class_names``."""

    name: str
    images: np.ndarray
    labels: np.ndarray
    class_names: tuple[str, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.images, np.ndarray) or self.images.dtype != np.uint8:
            raise TypeError(f"images must be a uint8 numpy array; got {_describe(self.images)}")
        if self.images.ndim != 4 or self.images.shape[-1] not in (1, 3):
            raise ValueError(f"images must be N×H×W×C with C in (1, 3); got {self.images.shape}")
        if not isinstance(self.labels, np.ndarray) or self.labels.dtype != np.int64:
            raise TypeError(f"labels must be an int64 numpy array; got {_describe(self.labels)}")
        if self.labels.shape != (self.images.shape[0],):
            raise ValueError(
                f"labels must have shape ({self.images.shape[0]},); got {self.labels.shape}"
            )
        if self.labels.size and (
            self.labels.min() < 0 or self.labels.max() >= len(self.class_names)
        ):
            raise ValueError(f"labels must lie in [0, {len(self.class_names)}) (class_names)")

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    def subset(self, index: np.ndarray) -> ImageDataset:
        """The samples at ``index`` (integer indices or a boolean mask)."""
        return ImageDataset(self.name, self.images[index], self.labels[index], self.class_names)


def _describe(x: object) -> str:
    return f"{type(x).__name__} of dtype {x.dtype}" if hasattr(x, "dtype") else type(x).__name__


class StudyKind(str, Enum):
    """The failure source a study tests.

    ``near_ood`` and ``far_ood`` are the roles of Kim et al. (2023), Section 3: new classes that
    share a super-class with an in-distribution class (near), or come from other sources (far);
    the unknown-detection protocol pools them (:mod:`fdbench.protocol.unknown_detection`).
    """

    IID = "iid"
    CORRUPTION = "corruption"
    SUBCLASS = "subclass"
    NEW_CLASS_SEMANTIC = "new_class_semantic"
    NEW_CLASS_NONSEMANTIC = "new_class_nonsemantic"
    COOD = "cood"
    NEAR_OOD = "near_ood"
    FAR_OOD = "far_ood"


@dataclass(frozen=True)
class Study:
    """Test images in the training format with labels in the training label space (−1 = new)."""

    name: str
    kind: StudyKind
    images: np.ndarray
    labels: np.ndarray
    severity: int | None = None
    corruption: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, StudyKind):
            raise TypeError(f"kind must be a StudyKind; got {type(self.kind).__name__}")
        if not isinstance(self.images, np.ndarray) or self.images.dtype != np.uint8:
            raise TypeError("images must be a uint8 numpy array")
        if self.images.ndim != 4:
            raise ValueError(f"images must be N×H×W×C; got shape {self.images.shape}")
        if not isinstance(self.labels, np.ndarray) or self.labels.dtype != np.int64:
            raise TypeError("labels must be an int64 numpy array")
        if self.labels.shape != (self.images.shape[0],):
            raise ValueError(f"labels must have shape ({self.images.shape[0]},)")


@dataclass(frozen=True)
class Experiment:
    """A training task (label space, train and val sets) and the studies it is tested on.

    ``split``: for experiments whose classes are drawn per run, the draw (e.g. the held-out
    classes), written to each run's ``split.json``; ``None`` for a fixed split.
    """

    name: str
    class_names: tuple[str, ...]
    train: ImageDataset
    val: ImageDataset
    studies: tuple[Study, ...]
    split: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        # the name is the folder of the experiment's runs: runs/<name>/<method>/seed<k>
        check_path_name(self.name, "experiment name")
