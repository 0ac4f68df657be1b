"""Hypothesis strategies for metric inputs: ties, soft and balanced residuals, weights."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

FEW_VALUES = (0.1, 0.5, 0.9)


@st.composite
def confidences(draw, n):
    kind = draw(st.sampled_from(["continuous", "ties", "constant"]))
    if kind == "continuous":
        values = st.floats(-5, 5, allow_nan=False, width=32)
    elif kind == "ties":
        values = st.sampled_from(FEW_VALUES[: draw(st.integers(2, 3))])
    else:
        values = st.just(0.3)
    return np.array(draw(st.lists(values, min_size=n, max_size=n)), dtype=np.float64)


@st.composite
def residuals(draw, n, kind=None):
    kind = kind or draw(st.sampled_from(["binary", "binary", "soft", "balanced"]))
    if kind == "binary":
        values = st.sampled_from([0.0, 1.0])
    elif kind == "soft":
        values = st.floats(0, 1, allow_nan=False, width=32)
    else:
        values = st.sampled_from([0.0, 0.0, 0.75, 1.5, 3.0])
    return np.array(draw(st.lists(values, min_size=n, max_size=n)), dtype=np.float64)


@st.composite
def samples(draw, *, kind=None, max_n=25, weights=None):
    """(residuals, confidence, weights) with weights None, integer or float.

    "float" weights are float32 values (their sums are mostly exact in float64); "float64"
    weights have full mantissas, so cumulative sums round, as real class-balancing weights do.
    """
    n = draw(st.integers(1, max_n))
    r = draw(residuals(n, kind))
    c = draw(confidences(n))
    weight_kind = weights or draw(st.sampled_from(["none", "int", "float", "float64"]))
    if weight_kind == "none":
        w = None
    elif weight_kind == "int":
        w = np.array(draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)), dtype=np.float64)
    elif weight_kind == "float":
        w = np.array(
            draw(st.lists(st.floats(0.125, 3, width=32), min_size=n, max_size=n)), dtype=np.float64
        )
    else:
        w = np.array(draw(st.lists(st.floats(0.125, 3), min_size=n, max_size=n)))
    return r, c, w


def both_classes(r):
    return bool(np.any(r == 0) and np.any(r == 1))
