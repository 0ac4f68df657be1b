"""The FD-Shifts configs of CAMELYON-17-WILDS, iWildCam-2020-WILDS and BREEDS-ENTITY-13: the paper's
hyper-parameters, their experiments built from small files in the official layouts, and a
quick-sized benchmark run end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

from fdbench.jobs.plan import load_config, parse_config
from fdbench.training.experiments import build_experiments
from tests.data._robustness_layouts import (
    N_VAL,
    SIZE,
    write_breeds,
    write_camelyon,
    write_iwildcam,
)

CONFIGS = Path(__file__).resolve().parents[1] / "src" / "fdbench" / "configs"
#: config → (experiment, studies as in FD-Shifts' Table 1: iid, sub, s-ncs)
EXPECTED = {
    "fdshifts_camelyon": ("camelyon17", ["iid", "subclass"]),
    "fdshifts_iwildcam": ("iwildcam", ["iid", "subclass"]),
    "fdshifts_iwildcam_openset": ("iwildcam_openset", ["iid", "new_class/semantic"]),
    "fdshifts_breeds": ("breeds_entity13", ["iid", "subclass"]),
}
#: Table 4 (init-lr, weight decay, batch size, epochs, DG-CE epochs, ConfidNet epochs) and
#: the runs of Table 1.
TABLE4 = {
    "fdshifts_camelyon": (1e-2, 1e-2, 32, 5, 3, (3, 1), 10),
    "fdshifts_iwildcam": (1e-3, 0.0, 16, 12, 6, (5, 3), 5),
    "fdshifts_iwildcam_openset": (1e-3, 0.0, 16, 12, 6, (5, 3), 5),
    "fdshifts_breeds": (1e-1, 1e-4, 128, 300, 50, (200, 20), 2),
}


@pytest.fixture(scope="module")
def data_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("robustness_data")
    write_camelyon(root)
    write_iwildcam(root)
    write_breeds(root)
    return root


def _local(name: str, root: Path):
    config = load_config(CONFIGS / f"{name}.yaml")
    args = {**config.data.args, "data_dir": str(root), "image_size": SIZE, "n_val": N_VAL}
    if name == "fdshifts_breeds":
        args["hold_out"] = 30
    data = config.data.model_copy(update={"args": args})
    return config.model_copy(update={"data": data})


@pytest.mark.parametrize("name", list(EXPECTED))
def test_paper_hyper_parameters(name):
    config = load_config(CONFIGS / f"{name}.yaml")
    lr, wd, batch, epochs, dg_pre, confidnet, runs = TABLE4[name]
    tc = config.training
    assert (tc.lr, tc.weight_decay, tc.batch_size, tc.epochs) == (lr, wd, batch, epochs)
    assert tc.momentum == 0.9 and tc.schedule.name == "cosine"
    assert config.architecture.name == "resnet50" and config.architecture.dropout == 0.1
    assert config.architecture.options["stem"] == "imagenet"
    methods = {m.name: m for m in config.methods}
    assert all(len(m.seeds) == runs for m in config.methods)
    dg = methods["deepgamblers"]
    assert dg.params["pretrain_epochs"] == dg_pre
    rewards = [2.2, 3, 6, 10] + ([] if name == "fdshifts_camelyon" else [15])
    assert dg.grid["reward"] == rewards
    cn = methods["confidnet"].params
    assert (cn["epochs"], cn["finetune_epochs"]) == confidnet
    assert config.data.per_run == (name == "fdshifts_iwildcam_openset")
    augment = [op.name for op in tc.augment] if isinstance(tc.augment, list) else tc.augment
    assert augment == (["hflip", "color_jitter"] if name == "fdshifts_breeds" else False)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_configs_build_from_the_official_layouts(name, data_root):
    experiments = build_experiments(_local(name, data_root))
    experiment_name, studies = EXPECTED[name]
    assert [e.name for e in experiments] == [experiment_name]
    assert [s.name for s in experiments[0].studies] == studies
    assert len(experiments[0].val) == N_VAL


@pytest.mark.parametrize("name", list(EXPECTED))
def test_quick_benchmark_end_to_end(name, data_root, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("lightning")
    from fdbench.jobs.benchmark import run_benchmark

    raw = _local(name, data_root).model_dump(mode="json")
    raw["data"]["args"].update(max_per_study=12, max_train=24)
    raw["architecture"]["options"] = {"stem": "imagenet", "base": 2}
    raw["training"].update(epochs=1, batch_size=12, threads=1)
    raw.update(
        inference={"mc_samples": 2, "batch_size": 64, "max_train_samples": 24},
        methods=[{"name": "ce", "kind": "ce", "seeds": [0], "params": {"dropout": True}}],
        ensembles=[],
        analysis={"n_bootstrap": 0},
    )
    results = run_benchmark(parse_config(raw), tmp_path / "run", report=False)
    fd = results[results["protocol"] == "failure_detection"]
    assert set(fd["study"]) == set(EXPECTED[name][1])
    aurc = fd[fd["metric"] == "aurc"]
    assert len(aurc) and aurc["value"].between(0, 1).all()


#: Table 7: (batch size, steps, data set config the ViT config shares its data with)
TABLE7 = {
    "cifar10": (128, 40000), "cifar100": (512, 10000), "super_cifar100": (512, 10000),
    "svhn": (128, 40000), "iwildcam": (512, 40000), "camelyon": (128, 40000),
    "breeds": (128, 40000),
}  # fmt: skip


@pytest.mark.parametrize("key", list(TABLE7))
def test_vit_configs(key):
    config = load_config(CONFIGS / f"fdshifts_{key}_vit.yaml")
    base = load_config(CONFIGS / f"fdshifts_{key}.yaml")
    assert config.data.builder == base.data.builder
    arch = config.architecture
    assert (arch.name, arch.dropout, arch.options["img_size"]) == ("vit_b16", 0.1, 384)
    assert arch.options["weights"] == "vit_base_patch16_224_in21k.pth"
    tc = config.training
    assert (tc.batch_size, tc.steps) == TABLE7[key]
    assert (tc.momentum, tc.weight_decay, tc.schedule.name, tc.schedule.warmup) == (
        0.9, 0.0, "warmup_cosine", 500)  # fmt: skip
    (ce,) = config.methods
    assert ce.grid == {"lr": [0.03, 0.01, 0.003, 0.001, 0.0003, 0.0001],
                       "dropout": [False, True]}  # fmt: skip
    assert config.selection.metric == "aurc"
    assert len(ce.seeds) == (2 if key == "breeds" else 5)


def test_tiny_vit_end_to_end_with_mahalanobis(data_root, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("lightning")
    from fdbench.jobs.benchmark import run_benchmark

    raw = _local("fdshifts_camelyon", data_root).model_dump(mode="json")
    vit = load_config(CONFIGS / "fdshifts_camelyon_vit.yaml").model_dump(mode="json")
    raw.update(architecture=vit["architecture"], training=vit["training"], methods=vit["methods"],
               selection=vit["selection"], ensembles=[])  # fmt: skip
    raw["data"]["args"].update(max_per_study=12, max_train=24)
    raw["architecture"]["options"] = {"img_size": 16, "patch_size": 4, "dim": 16, "depth": 1,
                                      "heads": 2, "weights": None}  # fmt: skip
    raw["training"].update(
        steps=3,
        batch_size=8,
        threads=1,
        schedule={"name": "warmup_cosine", "warmup": 1, "interval": "step"},
    )
    raw["methods"][0]["grid"] = {"lr": [0.01, 0.001], "dropout": [True]}
    raw.update(inference={"mc_samples": 2, "batch_size": 64, "max_train_samples": 24},
               analysis={"n_bootstrap": 0})  # fmt: skip
    results = run_benchmark(parse_config(raw), tmp_path / "run", report=False)
    fd = results[(results["protocol"] == "failure_detection") & (results["metric"] == "aurc")]
    assert set(fd["study"]) == {"iid", "subclass"}
    assert {"MSR", "PE", "Mahalanobis"} <= set(fd["csf"])
    assert any(c.startswith("MCD") for c in fd["csf"])
    assert fd["value"].between(0, 1).all()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("fdshifts_camelyon", "camelyon17_v1.0/metadata.csv is missing"),
        ("fdshifts_iwildcam", "iwildcam_v2.0/metadata.csv is missing"),
        ("fdshifts_breeds", "the BREEDS hierarchy files are missing"),
    ],
)
def test_cli_names_missing_data(name, expected, tmp_path, monkeypatch):
    from tests._cli import run_cli

    monkeypatch.setenv("FDBENCH_DATA", str(tmp_path))
    result = run_cli("benchmark", str(CONFIGS / f"{name}.yaml"), "--out", str(tmp_path / "run"))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert expected in lines[0]


def test_missing_vit_weights_stop_the_benchmark(data_root, tmp_path, monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("lightning")
    from fdbench.jobs.benchmark import run_benchmark

    monkeypatch.setenv("FDBENCH_DATA", str(tmp_path))
    raw = _local("fdshifts_camelyon", data_root).model_dump(mode="json")
    vit = load_config(CONFIGS / "fdshifts_camelyon_vit.yaml").model_dump(mode="json")
    raw.update(architecture=vit["architecture"], training=vit["training"], ensembles=[],
               methods=[{"name": "ce", "kind": "ce", "seeds": [0]}])  # fmt: skip
    raw["data"]["args"].update(max_per_study=4, max_train=8)
    with pytest.raises(FileNotFoundError, match=r"weights/vit_base_patch16_224_in21k\.pth not"):
        run_benchmark(parse_config(raw), tmp_path / "run", report=False)
