"""The post-hoc comparison configs of FD-Shifts' data sets: each trains what its FD-Shifts config
trains, builds from small files in the official layout, and runs end to end (a tiny network,
one epoch) into the comparison's tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from fdbench.core.io import read_table
from fdbench.jobs.plan import load_config, parse_config
from fdbench.training.experiments import build_experiments
from tests.data._robustness_layouts import (
    N_VAL,
    SIZE,
    write_breeds,
    write_camelyon,
    write_iwildcam,
)
from tests.data.test_fdshifts import fake, openset  # noqa: F401 (fixtures)

CONFIGS = Path(__file__).resolve().parents[1] / "src" / "fdbench" / "configs"
#: data set → (experiment, studies the comparison compares: FD-Shifts' study set on it)
EXPECTED = {
    "cifar10": ("cifar10", {"iid", "new_class/cifar100", "new_class/svhn",
                            "new_class/tiny_imagenet", "corruption/5"}),
    "cifar100": ("cifar100", {"iid", "new_class/cifar10", "new_class/svhn",
                              "new_class/tiny_imagenet", "corruption/5"}),
    "super_cifar100": ("super_cifar100", {"iid", "subclass"}),
    "svhn": ("svhn", {"iid", "new_class/cifar10", "new_class/cifar100",
                      "new_class/tiny_imagenet"}),
    "svhn_openset": ("svhn_openset", {"iid", "new_class/semantic"}),
    "camelyon": ("camelyon17", {"iid", "subclass"}),
    "iwildcam": ("iwildcam", {"iid", "subclass"}),
    "iwildcam_openset": ("iwildcam_openset", {"iid", "new_class/semantic"}),
    "breeds": ("breeds_entity13", {"iid", "subclass"}),
}  # fmt: skip
ROBUSTNESS = ("camelyon", "iwildcam", "iwildcam_openset", "breeds")


@pytest.fixture(scope="module")
def robustness_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("robustness_data")
    write_camelyon(root)
    write_iwildcam(root)
    write_breeds(root)
    return root


@pytest.fixture
def data_root(request, fake, openset, robustness_root):  # noqa: F811
    name = request.node.callspec.params["name"]
    if name in ROBUSTNESS:
        return robustness_root
    return openset[0] if name == "svhn_openset" else fake.root


def _config(name: str, root: Path):
    """The comparison config of ``name`` reading its data from ``root``."""
    config = load_config(CONFIGS / f"posthoc_comparison_{name}.yaml")
    args = {**config.data.args, "data_dir": str(root)}
    if name in ROBUSTNESS:
        args.update(image_size=SIZE, n_val=N_VAL)
    if name == "breeds":
        args["hold_out"] = 30
    return config.model_copy(update={"data": config.data.model_copy(update={"args": args})})


@pytest.mark.parametrize("name", list(EXPECTED))
def test_the_comparison_trains_what_fdshifts_trains(name):
    config = load_config(CONFIGS / f"posthoc_comparison_{name}.yaml")
    base = load_config(CONFIGS / f"fdshifts_{name}.yaml")
    assert config.name == f"posthoc_comparison_{name}"
    for part in ("data", "architecture", "training"):
        assert getattr(config, part) == getattr(base, part), part
    assert config.inference.max_train_samples == base.inference.max_train_samples
    (ce,) = config.methods
    assert (ce.kind, ce.params, ce.grid) == ("ce", {}, {})
    assert ce.seeds == base.method("ce").seeds
    assert config.posthoc is not None and config.posthoc.scores is None
    assert (config.posthoc.mode, config.posthoc.metric) == ("id", "aurc")
    assert not config.ensembles


@pytest.mark.parametrize("name", list(EXPECTED))
def test_the_comparison_builds_from_the_official_layout(name, data_root):
    experiments = build_experiments(_config(name, data_root))
    experiment, studies = EXPECTED[name]
    assert [e.name for e in experiments] == [experiment]
    built = {s.name for s in experiments[0].studies}
    assert {s for s in studies if not s.startswith("corruption/")} <= built


@pytest.mark.slow
@pytest.mark.parametrize("name", list(EXPECTED))
def test_the_comparison_runs_end_to_end(name, data_root, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("lightning")
    from fdbench.csf.posthoc import posthoc_scores
    from fdbench.jobs.benchmark import run_benchmark

    raw = _config(name, data_root).model_dump(mode="json")
    if name in ROBUSTNESS:
        raw["data"]["args"].update(max_per_study=12, max_train=48)
        raw["architecture"]["options"] = {"stem": "imagenet", "base": 2}
    else:
        # a one-epoch network of 100 classes gets an iid image right only among hundreds: with
        # fewer every sample fails, every method ties in every block, and Friedman is undefined
        raw["data"]["args"].update(max_per_study=400 if name == "cifar100" else 8)
        raw["architecture"] = {"name": "convnet", "options": {"width": 2, "feature_dim": 8}}
    raw["training"].update(epochs=1, batch_size=12, threads=1, augment=False)
    raw["inference"].update(batch_size=64, max_train_samples=1000)
    raw["methods"][0]["seeds"] = [0, 1]
    raw["analysis"]["n_bootstrap"] = 0
    results = run_benchmark(parse_config(raw), tmp_path / "run", report=False)
    fd = results[(results["protocol"] == "failure_detection") & (results["metric"] == "aurc")]
    assert set(posthoc_scores()) <= set(fd["csf"])
    out = tmp_path / "run" / "comparison"
    scores = read_table(out / "scores_aurc.csv")
    assert set(scores.columns[1:]) == {f"{EXPECTED[name][0]}/{s}" for s in EXPECTED[name][1]}
    assert set(posthoc_scores()) <= {s.split(" ")[-1] for s in scores["scoring_method"]}
    board = read_table(out / "leaderboard_augrc.csv")
    assert board["average_rank"].notna().all()
    chosen = read_table(out / "hyperparameters.csv")
    assert set(chosen["csf"]) == set(posthoc_scores()) and set(chosen["seed"]) == {0, 1}
