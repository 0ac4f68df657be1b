"""The registry of training methods: strict config validation and a method added in one place."""

import numpy as np
import pytest
from pydantic import Field

from fdbench.jobs.plan import parse_config
from fdbench.training import methods
from fdbench.training.methods import (
    EndToEndParams,
    TrainingMethod,
    get_method,
    method_names,
    register,
)

from .conftest import tiny_config


def _data(**method):
    return tiny_config().model_dump(mode="json") | {"methods": [method]}


def test_builtin_methods_are_registered():
    assert {"ce", "deepgamblers", "devries", "confidnet"} <= set(method_names())
    assert get_method("devries").network_head == "devries"
    assert get_method("confidnet")({"base": "x"}).dependencies() == ("x",)


def test_unknown_kind_lists_the_registered_ones():
    with pytest.raises(ValueError, match="method kind must be one of") as info:
        parse_config(_data(name="m", kind="svm", seeds=[0]))
    for name in method_names():
        assert repr(name) in str(info.value)
    assert "methods.0.kind" in str(info.value)


def test_params_are_validated_by_the_method_model():
    with pytest.raises(ValueError, match=r"methods\.0.*budget"):
        parse_config(_data(name="m", kind="devries", seeds=[0], params={"budget": -1}))
    with pytest.raises(ValueError, match="reward_typo"):
        parse_config(_data(name="m", kind="deepgamblers", seeds=[0], params={"reward_typo": 3}))
    with pytest.raises(ValueError, match="grid key 'budget'"):
        parse_config(_data(name="m", kind="ce", seeds=[0], grid={"budget": [0.1]}))


def test_register_rejects_bad_methods():
    with pytest.raises(TypeError, match="TrainingMethod subclass"):
        register(int)

    class Twin(TrainingMethod):
        name = "ce"
        params_model = EndToEndParams

    with pytest.raises(ValueError, match="already registered"):
        register(Twin)


class _ScaledParams(EndToEndParams):
    scale: float = Field(default=2.0, gt=0)


class _ScaledCE(TrainingMethod):
    """A test method: ``scale`` × cross-entropy, storing the largest output as a head."""

    name = "scaled_ce_test"
    params_model = _ScaledParams

    def training_step(self, module, batch, batch_idx):
        import torch.nn.functional as F

        x, y = batch
        return self.params.scale * F.cross_entropy(module.network(x), y)

    def output_heads(self, outputs, num_classes):
        return {"largest": outputs.max(dim=-1).values}

    def input_heads(self, model, images):
        return {"brightness": images.double().mean(dim=(1, 2, 3))}


def test_a_method_registered_in_one_place_trains_and_stores_its_heads(
    tmp_path, experiment, monkeypatch
):
    pytest.importorskip("torch")
    from fdbench.outputs import read_outputs
    from fdbench.training import run_training_job

    monkeypatch.setitem(methods._REGISTRY, _ScaledCE.name, _ScaledCE)
    data = _data(name="s", kind="scaled_ce_test", seeds=[0], params={"scale": 0.5})
    config = parse_config(data)
    run = read_outputs(run_training_job(config, experiment, "s", 0, tmp_path))
    iid = run.splits["iid"]
    assert list(iid.heads) == ["largest", "brightness"]
    np.testing.assert_allclose(iid.heads["largest"], iid.logits.max(axis=1), rtol=1e-12)
    expected = experiment.studies[0].images.astype(np.float64).mean(axis=(1, 2, 3))
    np.testing.assert_allclose(iid.heads["brightness"], expected, rtol=1e-12)
    assert run.meta["method_kind"] == "scaled_ce_test"
    assert run.meta["params"]["scale"] == 0.5


def test_declared_csfs_are_registered_and_new_methods_are_found():
    from fdbench.csf import REGISTRY

    assert {"crl", "edl"} <= set(method_names())
    for name in method_names():
        assert set(get_method(name).csfs) <= set(REGISTRY), name
    assert get_method("edl").csfs == ("EDL-MSR", "EDL-Unc")
