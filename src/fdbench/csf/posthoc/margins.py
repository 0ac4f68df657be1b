"""Margin scores of raw logits: the confidence margin and the geometric margin (Liang, Peng &
Sun, TMLR 2024)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_array
from ._base import PostHocInputs, register_posthoc

__all__ = ["rl_conf_margin", "rl_geo_margin"]


def _top_two_gap(values: np.ndarray) -> np.ndarray:
    if values.shape[1] < 2:
        raise ValueError("logits must have at least two classes")
    top = np.sort(values, axis=1)
    return top[:, -1] - top[:, -2]


def rl_conf_margin(logits: ArrayLike) -> np.ndarray:
    """RL_conf-M, ``z_(1) − z_(2)``: the gap between the two largest raw logits.

    Liang, Peng & Sun, "Selective Classification Under Distribution Shifts", TMLR 2024,
    Sec. 4; the authors' ``plot_rc_curve.py`` (``raw_margin``: ``topk(logits, 2)`` gap).
    """
    return _top_two_gap(as_float_array(logits, "logits", 2))


def rl_geo_margin(logits: ArrayLike, weight: ArrayLike, bias: ArrayLike) -> np.ndarray:
    """RL_geo-M, the gap between the two largest ``z_c / ‖(w_c, b_c)‖₂``: each logit divided by
    the norm of its class's weights augmented with its bias.

    Liang, Peng & Sun, TMLR 2024, Sec. 4; the authors' ``plot_rc_curve.py`` (``geo_margin``:
    ``logits / weight_norm`` with ``weight_aug = concatenate([weights, bias[:, None]])``).
    """
    z = as_float_array(logits, "logits", 2)
    w = as_float_array(weight, "weight", 2)
    b = as_float_array(bias, "bias", 1)
    if w.shape[0] != z.shape[1] or b.shape[0] != z.shape[1]:
        raise ValueError(f"weight must have {z.shape[1]} rows and bias {z.shape[1]} entries")
    norms = np.linalg.norm(np.concatenate([w, b[:, None]], axis=1), axis=1)
    return _top_two_gap(z / norms)


@register_posthoc(
    "RL-conf-M",
    reads=("logits",),
    source="Liang, Peng & Sun TMLR 2024 Sec. 4; authors' plot_rc_curve.py",
    colour="#BBBBBB",
)
def _conf_margin(inputs: PostHocInputs, split: str) -> np.ndarray:
    return rl_conf_margin(inputs.logits(split))


@register_posthoc(
    "RL-geo-M",
    reads=("logits", "last_layer"),
    source="Liang, Peng & Sun TMLR 2024 Sec. 4; authors' plot_rc_curve.py",
    colour="#555555",
)
def _geo_margin(inputs: PostHocInputs, split: str) -> np.ndarray:
    weight, bias = inputs.last_layer()
    return rl_geo_margin(inputs.logits(split), weight, bias)
