"""The benchmark configuration: shipped YAML files parse, bad values get clear messages."""

from pathlib import Path

import pytest
import yaml

from fdbench.config.schema import BenchmarkConfig, config_digest
from fdbench.jobs.plan import load_config, parse_config

CONFIGS = Path(__file__).resolve().parents[1] / "src" / "fdbench" / "configs"
SHIPPED = [
    "fashion_mnist.yaml",
    "fashion_mnist_quick.yaml",
    "fdshifts_svhn.yaml",
    "fdshifts_cifar10.yaml",
    "fdshifts_cifar100.yaml",
    "fdshifts_super_cifar100.yaml",
    "kim_cifar100.yaml",
    "kim_cifar100_released.yaml",
    "kim_imagenet.yaml",
]


def _base() -> dict:
    return yaml.safe_load((CONFIGS / "fashion_mnist_quick.yaml").read_text())


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_configs_parse(name):
    config = load_config(CONFIGS / name)
    assert isinstance(config, BenchmarkConfig)
    assert config.name == name.removesuffix(".yaml")


def test_default_benchmark_declares_the_methods():
    config = load_config(CONFIGS / "fashion_mnist.yaml")
    seeds = {m.name: (m.kind, len(m.seeds)) for m in config.methods}
    assert seeds == {
        "ce_dropout": ("ce", 5),
        "deepgamblers": ("deepgamblers", 2),
        "confidnet": ("confidnet", 2),
        "devries": ("devries", 2),
    }
    assert config.data.builder == "fashion_mnist_experiments"
    assert config.data.args == {"seed": 0, "quick": False}
    assert config.training.threads == 1 and config.workers == 2


def test_grid_candidates_are_validated_and_ordered():
    data = _base()
    data["methods"][1]["grid"] = {"reward": [2.0, 3.0], "lr": [0.1, 0.01]}
    config = parse_config(data)
    cands = config.methods[1].candidates()
    assert [(c.lr, c.reward) for c in cands] == [(0.1, 2.0), (0.1, 3.0), (0.01, 2.0), (0.01, 3.0)]
    assert all(c.pretrain_epochs == 1 for c in cands)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["architecture"].update(dropout=1.5), "architecture.dropout"),
        (lambda d: d["architecture"].update(name="alexnet"), "architecture.name"),
        (lambda d: d["training"].update(epochs=0), "training.epochs"),
        (lambda d: d["training"].update(lr=-1), "training.lr"),
        (lambda d: d["training"].update(optimiser="adam"), "training.optimiser"),
        (lambda d: d["inference"].update(mc_samples=-2), "inference.mc_samples"),
        (lambda d: d["selection"].update(metric="auroc"), "selection.metric"),
        (lambda d: d["methods"][0].update(seeds=[1, 1]), "seeds must be distinct"),
        (lambda d: d["methods"][0].update(kind="svm"), "methods.0.kind"),
        (lambda d: d["methods"][1]["params"].update(reward=0.5), "reward"),
        (lambda d: d["methods"][0].update(grid={"reward": [2.0]}), "grid key 'reward'"),
        (lambda d: d["methods"][0].update(grid={"lr": []}), "at least one value"),
        (lambda d: d["methods"][2]["params"].update(base="nope"), "base 'nope' must name"),
        (lambda d: d["methods"][2].update(seeds=[7]), "seeds [7] have no base model"),
        (lambda d: d["methods"].append(dict(d["methods"][0])), "method names must be unique"),
        (lambda d: d["data"].update(builder="x y"), "data.builder"),
    ],
)
def test_bad_values_are_rejected_clearly(edit, message):
    data = _base()
    edit(data)
    with pytest.raises(ValueError, match="invalid configuration") as info:
        parse_config(data, source="quick.yaml")
    assert message in str(info.value)
    assert str(info.value).startswith("quick.yaml: ")


def test_load_config_errors(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(ValueError, match="not valid YAML"):
        load_config(bad)
    bad.write_text("- a list\n")
    with pytest.raises(ValueError, match="expected a mapping"):
        load_config(bad)


def test_digest_tracks_what_changes_the_run():
    data = _base()
    a = parse_config(data)
    data["methods"][0]["seeds"] = [0, 1, 2]
    b = parse_config(data)
    data["training"]["epochs"] = 3
    c = parse_config(data)
    assert config_digest(a, "ce_dropout") == config_digest(b, "ce_dropout")
    assert config_digest(a, "ce_dropout") != config_digest(c, "ce_dropout")
    assert config_digest(a, "ce_dropout") != config_digest(a, "devries")
