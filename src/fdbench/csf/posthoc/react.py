"""ReAct: energy of the last layer applied to penultimate features clipped at a percentile of
the validation features (Sun, Guo & Li, NeurIPS 2021)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._base import PostHocInputs, register_posthoc
from ._layer import check_last_layer, energy_of_layer

__all__ = ["react"]


def react(features: ArrayLike, weight: ArrayLike, bias: ArrayLike, threshold: float) -> np.ndarray:
    """ReAct, ``logsumexp_c (W min(h, c) + b)_c``: the energy score of the logits recomputed
    from the features ``h`` clipped at ``c = threshold``.

    Sun, Guo & Li, "ReAct: Out-of-distribution Detection With Rectified Activations", NeurIPS
    2021, Eq. (1)-(2); OpenOOD ``openood/postprocessors/react_postprocessor.py`` (energy of
    ``net.forward_threshold``, which clips the pooled features).
    """
    h, w, b = check_last_layer(features, weight, bias)
    return energy_of_layer(np.minimum(h, float(threshold)), w, b)


@register_posthoc(
    "ReAct",
    reads=("features", "last_layer", "val"),
    grid={"percentile": (85, 90, 95, 99)},
    source="Sun et al. NeurIPS 2021 Sec. 3; OpenOOD react_postprocessor.py",
    colour="#332288",
)
def _react(inputs: PostHocInputs, split: str, *, percentile: float) -> np.ndarray:
    # OpenOOD sets c at the percentile of all ID *validation* activations (setup reads
    # id_loader_dict['val']); the paper uses the training set. fdbench follows the code.
    threshold = inputs.fit(
        ("react", percentile), lambda: np.percentile(inputs.features("val").ravel(), percentile)
    )
    weight, bias = inputs.last_layer()
    return react(inputs.features(split), weight, bias, threshold)
