"""The classifier's last layer in an outputs store: written, read back bit-identically, and
checked against the logits and features it belongs to."""

import numpy as np
import pytest

from fdbench.outputs import RunOutputs, SplitOutputs, read_outputs, validate_run, write_outputs


def _run(weight, bias):
    rng = np.random.default_rng(0)
    features = rng.normal(size=(10, 5))
    split = SplitOutputs(
        labels=rng.integers(0, 3, 10), logits=rng.normal(size=(10, 3)), features=features
    )
    return RunOutputs(splits={"iid": split}, meta={"fc_weight": weight, "fc_bias": bias})


def test_the_last_layer_round_trips(tmp_path):
    rng = np.random.default_rng(1)
    weight, bias = rng.normal(size=(3, 5)), rng.normal(size=3)
    write_outputs(tmp_path / "store", _run(weight, bias))
    run = read_outputs(tmp_path / "store")
    np.testing.assert_array_equal(run.meta["fc_weight"], weight)
    np.testing.assert_array_equal(run.meta["fc_bias"], bias)


@pytest.mark.parametrize(
    ("weight", "bias", "error", "match"),
    [
        (np.zeros((4, 5)), np.zeros(3), ValueError, "fc_weight"),
        (np.zeros((3, 6)), np.zeros(3), ValueError, "fc_weight"),
        (np.zeros((3, 5)), np.zeros(4), ValueError, "fc_bias"),
        (np.zeros((3, 5), dtype=int), np.zeros(3), TypeError, "fc_weight"),
        (np.zeros((3, 5)), np.full(3, np.nan), ValueError, "non-finite"),
    ],
)
def test_a_last_layer_of_another_network_is_refused(tmp_path, weight, bias, error, match):
    with pytest.raises(error, match=match):
        validate_run(_run(weight, bias))
    with pytest.raises(error, match=match):
        write_outputs(tmp_path / "store", _run(weight, bias))
