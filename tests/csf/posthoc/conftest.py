"""A small run with every output the post-hoc scores read."""

import numpy as np
import pytest

from fdbench.outputs import RunOutputs, SplitOutputs

K, D = 4, 8


def make_run(seed: int = 0, n: int = 60) -> RunOutputs:
    """Non-negative (post-ReLU) features, logits = W h + b, labels mostly the arg-max."""
    rng = np.random.default_rng(seed)
    weight, bias = rng.normal(size=(K, D)), rng.normal(size=K)
    splits = {}
    for name, kind, size in (
        ("train", "train", 2 * n),
        ("val", "val", n),
        ("iid", "iid", n),
        ("new_class", "new_class", n // 2),
    ):
        features = np.abs(rng.normal(size=(size, D))) * rng.uniform(0.5, 2.0, size=(size, 1))
        logits = features @ weight.T + bias
        labels = np.argmax(logits + rng.normal(scale=1.0, size=logits.shape), axis=1)
        labels[: 2 * K] = np.arange(2 * K) % K  # every class present
        if kind == "new_class":
            labels = np.full(size, -1)
        splits[name] = SplitOutputs(
            labels=labels.astype(np.int64), logits=logits, features=features, kind=kind
        )
    return RunOutputs(splits=splits, meta={"fc_weight": weight, "fc_bias": bias})


@pytest.fixture
def run() -> RunOutputs:
    return make_run()
