"""Argument checks shared by the builders of FD-Shifts' image-folder experiments (BREEDS, WILDS)."""

from __future__ import annotations

import numpy as np


def check_reader_args(
    max_per_study: int | None, max_train: int | None, image_size: int, n_val: int
) -> None:
    """Raise ``ValueError`` naming the argument unless ``max_per_study`` and ``max_train`` are
    None or ints ≥ 1, ``image_size`` an int ≥ 8 and ``n_val`` an int ≥ 1 (checked in that
    order): the arguments of :func:`fdbench.data.suites.breeds.fdshifts_breeds_experiments`,
    :func:`fdbench.data.suites.wilds.fdshifts_camelyon_experiments` and
    :func:`fdbench.data.suites.wilds.fdshifts_iwildcam_experiments`."""
    for name, value in (("max_per_study", max_per_study), ("max_train", max_train)):
        if value is not None and (not isinstance(value, int | np.integer) or value < 1):
            raise ValueError(f"{name} must be None or an int ≥ 1; got {value!r}")
    if not isinstance(image_size, int | np.integer) or image_size < 8:
        raise ValueError(f"image_size must be an int ≥ 8; got {image_size!r}")
    if not isinstance(n_val, int | np.integer) or n_val < 1:
        raise ValueError(f"n_val must be an int ≥ 1; got {n_val!r}")
