"""Your own network and timm models as fdbench Networks (architecture.factory / .timm)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch
import yaml
from torch import nn

from fdbench.data.types import Experiment, ImageDataset, Study, StudyKind
from fdbench.jobs.plan import parse_config
from fdbench.models.custom import build_custom_model, split_classifier
from fdbench.training.context import build_spec, network_from_spec

HERE = "tests.models.test_custom_models"


@pytest.fixture(autouse=True)
def _trust_config_code(monkeypatch):
    """These tests name their own factories, as a user who opted in to config code does."""
    monkeypatch.setenv("FDBENCH_TRUST_CONFIG_CODE", "1")


class Plain(nn.Module):
    """Any network: its final linear layer is ``head.fc``."""

    def __init__(self, num_classes, in_channels, image_size, hidden=8):
        super().__init__()
        self.trunk = nn.Sequential(nn.Flatten(), nn.Linear(in_channels * image_size**2, hidden),
                                   nn.ReLU())  # fmt: skip
        self.head = nn.Sequential()
        self.head.fc = nn.Linear(hidden, num_classes)

    def forward(self, x):
        return self.head.fc(self.trunk(x))


class Split(nn.Module):
    """A network with the body/classifier split of fdbench's Network."""

    def __init__(self, num_classes, in_channels, image_size):
        super().__init__()
        self.body = nn.Sequential(nn.Flatten(), nn.Linear(in_channels * image_size**2, 5))
        self.classifier = nn.Linear(5, num_classes)


def make_plain(*, num_classes, in_channels, image_size, hidden=8):
    return Plain(num_classes, in_channels, image_size, hidden)


def make_split(*, num_classes, in_channels, image_size):
    return Split(num_classes, in_channels, image_size)


def make_wrong_outputs(*, num_classes, in_channels, image_size):
    return Plain(num_classes + 1, in_channels, image_size)


def make_bad_body(*, num_classes, in_channels, image_size):
    net = Split(num_classes, in_channels, image_size)
    net.body = nn.Identity()  # returns images, not N x D features
    return net


def test_named_classifier_splits_any_network_and_keeps_its_function():
    torch.manual_seed(0)
    reference = make_plain(num_classes=3, in_channels=1, image_size=4)
    torch.manual_seed(0)
    net = build_custom_model(factory=f"{HERE}:make_plain", classifier="head.fc", num_classes=3,
                             in_channels=1, image_size=4, mean=(0.5,), std=(0.25,))  # fmt: skip
    assert isinstance(net.body.head.fc, nn.Identity) and net.feature_dim == 8
    x = torch.randint(0, 256, (6, 1, 4, 4), dtype=torch.uint8)
    net.eval()
    with torch.no_grad():
        expected = reference((x.float() / 255 - 0.5) / 0.25)
        np.testing.assert_allclose(net(x).numpy(), expected.numpy(), rtol=1e-6)
        assert net.features(x).shape == (6, 8)


def test_body_classifier_split_needs_no_classifier_name():
    net = build_custom_model(factory=f"{HERE}:make_split", num_classes=4, in_channels=3,
                             image_size=2, dropout=0.3, head="devries")  # fmt: skip
    assert net.feature_dim == 5 and net.has_dropout and net.devries is not None
    assert net(torch.zeros(2, 3, 2, 2, dtype=torch.uint8)).shape == (2, 4)


def test_options_reach_the_factory_and_head_options_the_head():
    net = build_custom_model(factory=f"{HERE}:make_plain", classifier="head.fc", num_classes=2,
                             in_channels=1, image_size=3, hidden=11, head="confidnet",
                             confidnet_hidden=7, confidnet_depth=2)  # fmt: skip
    assert net.feature_dim == 11
    assert net.confidnet.mlp[0].out_features == 7


@pytest.mark.parametrize(
    ("factory", "classifier", "error", "needle"),
    [
        ("make_plain", None, ValueError, "set architecture.classifier"),
        ("make_plain", "trunk", ValueError, "names Sequential"),
        ("make_plain", "head.nothing", ValueError, "names nothing"),
        ("make_wrong_outputs", "head.fc", ValueError, "has 3 outputs, but the data has 2"),
        ("make_bad_body", None, ValueError, "body must return N × 5 features"),
        ("missing", None, ValueError, "has no callable missing"),
    ],
)
def test_unusable_networks_are_clear_errors(factory, classifier, error, needle):
    with pytest.raises(error, match=needle):
        build_custom_model(factory=f"{HERE}:{factory}", classifier=classifier, num_classes=2,
                           in_channels=1, image_size=4)  # fmt: skip


def test_unimportable_factory_is_a_clear_error():
    with pytest.raises(ValueError, match=r"cannot import no_such_pkg"):
        build_custom_model(factory="no_such_pkg.nets:make", num_classes=2)
    with pytest.raises(TypeError, match=r"expected a torch\.nn\.Module"):
        split_classifier(object(), None)


def test_missing_timm_names_the_zoo_extra():
    if importlib.util.find_spec("timm") is not None:
        pytest.skip("timm is installed here, so its absence cannot be seen")
    with pytest.raises(ImportError, match=r"architecture.timm 'resnet18' needs timm.*'zoo' extra"):
        build_custom_model(timm="resnet18", num_classes=3, in_channels=3, image_size=32)


def test_timm_model_is_split_at_its_classifier():
    pytest.importorskip("timm", reason="the zoo extra (timm) is not installed")
    net = build_custom_model(timm="resnet18", num_classes=3, in_channels=1, image_size=32)
    assert net(torch.zeros(2, 1, 32, 32, dtype=torch.uint8)).shape == (2, 3)
    assert net.feature_dim == 512


def _experiment(n=12, size=4):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (n, size, size, 1), dtype=np.uint8)
    labels = np.arange(n, dtype=np.int64) % 3
    data = ImageDataset("toy", images, labels, ("a", "b", "c"))
    return Experiment("toy", ("a", "b", "c"), data, data,
                      (Study("iid", StudyKind.IID, images, labels),))  # fmt: skip


def _config(architecture):
    base = yaml.safe_load(
        "name: t\ndata: {builder: folder_experiments, args: {root: x}}\n"
        "methods: [{name: ce, kind: ce, seeds: [0]}]\n"
    )
    return parse_config({**base, "architecture": architecture})


def test_spec_of_your_network_rebuilds_it_and_built_in_specs_are_unchanged():
    config = _config({"factory": f"{HERE}:make_plain", "classifier": "head.fc",
                      "options": {"hidden": 6}})  # fmt: skip
    spec = build_spec(config, _experiment(), "devries", True)
    assert spec["architecture"] == f"{HERE}:make_plain"
    assert spec["factory"] == f"{HERE}:make_plain" and spec["classifier"] == "head.fc"
    net = network_from_spec(spec)
    assert net.feature_dim == 6 and net.devries is not None and net.dropout.p == 0.3
    builtin = build_spec(_config({"name": "convnet"}), _experiment(), None, False)
    assert list(builtin) == [
        "architecture", "num_classes", "in_channels", "image_size", "dropout",
        "dropout_placement", "head", "mean", "std", "options",
    ]  # fmt: skip
    assert builtin["architecture"] == "convnet"


@pytest.mark.parametrize(
    ("architecture", "needle"),
    [
        ({}, "give exactly one of name"),
        ({"name": "convnet", "factory": "a:b"}, "got \\['name', 'factory'\\]"),
        ({"factory": "mypkg.nets"}, "factory must be 'module:callable'"),
        ({"timm": "resnet18", "classifier": "fc"}, "classifier names the final linear layer"),
        ({"factory": "a:b", "dropout_placement": "fc"}, "supports only dropout_placement 'head'"),
        ({"name": "alexnet"}, "architecture.name"),
    ],
)
def test_architecture_config_errors(architecture, needle):
    with pytest.raises(ValueError, match=needle):
        _config(architecture)


def test_built_in_architecture_dump_is_unchanged():
    dumped = _config({"name": "vgg13"}).architecture.model_dump(mode="json")
    assert dumped == {"name": "vgg13", "dropout": 0.3, "dropout_placement": None, "options": {}}
    assert _config({"timm": "resnet18"}).architecture.label == "timm:resnet18"


def test_checkpoint_of_your_network_loads_back(tmp_path):
    from fdbench.training.jobs import load_checkpoint

    config = _config({"factory": f"{HERE}:make_plain", "classifier": "head.fc"})
    spec = build_spec(config, _experiment(), "confidnet", False)
    torch.manual_seed(1)
    net = network_from_spec(spec)
    torch.save({"spec": spec, "state_dict": net.state_dict()}, tmp_path / "model.pt")
    again, info = load_checkpoint(tmp_path / "model.pt")
    assert info["spec"] == spec
    x = torch.randint(0, 256, (3, 1, 4, 4), dtype=torch.uint8)
    with torch.no_grad():
        np.testing.assert_array_equal(again(x).numpy(), net.eval()(x).numpy())
