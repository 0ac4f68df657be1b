"""fDBD: the summed distance of a feature to the decision boundaries of its predicted class,
regularised by its distance to the mean training feature (Liu & Qin, ICML 2024)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_array
from ._base import PostHocInputs, register_posthoc
from ._layer import check_last_layer

__all__ = ["fdbd"]


def fdbd(
    features: ArrayLike,
    weight: ArrayLike,
    bias: ArrayLike,
    train_mean: ArrayLike | None,
) -> np.ndarray:
    """fDBD, ``Σ_{c ≠ ŷ} (z_ŷ − z_c) / ‖w_ŷ − w_c‖ / ‖h − μ_train‖`` with ``z = W h + b`` and
    ``ŷ = argmax z``; with ``train_mean=None`` the regulariser is ``‖h‖``.

    Liu & Qin, "Fast Decision Boundary based Out-of-Distribution Detector", ICML 2024, Sec. 3
    (Eq. 5); OpenOOD ``openood/postprocessors/fdbd_postprocessor.py``, which chooses the
    regulariser (``distance_as_normalizer``) on validation data, as the grid here does.
    """
    h, w, b = check_last_layer(features, weight, bias)
    z = h @ w.T + b
    pred = np.argmax(z, axis=1)
    gaps = z[np.arange(z.shape[0]), pred][:, None] - z
    norms = np.linalg.norm(w[pred][:, None, :] - w[None, :, :], axis=2)
    norms[np.arange(z.shape[0]), pred] = 1.0
    centre = 0.0 if train_mean is None else as_float_array(train_mean, "train_mean", 1)
    return np.sum(gaps / norms, axis=1) / np.linalg.norm(h - centre, axis=1)


@register_posthoc(
    "fDBD",
    reads=("features", "last_layer", "train"),
    grid={"distance_as_normalizer": (True, False)},
    source="Liu & Qin ICML 2024 Sec. 3; OpenOOD fdbd_postprocessor.py",
    colour="#EE7733",
)
def _fdbd(inputs: PostHocInputs, split: str, *, distance_as_normalizer: bool) -> np.ndarray:
    mean = inputs.fit("train_mean", lambda: inputs.features("train").mean(axis=0))
    weight, bias = inputs.last_layer()
    return fdbd(inputs.features(split), weight, bias, mean if distance_as_normalizer else None)
