"""Member sources of the zoo: the embedded zoo (trained here), benchmark checkpoints, timm."""

from __future__ import annotations

import hashlib
import typing
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fdbench.jobs.zoo import run_zoo
from fdbench.outputs import RunOutputs, SplitOutputs, write_outputs
from fdbench.zoo import discover_members, parse_zoo_config
from fdbench.zoo.checkpoints import import_benchmark_run
from fdbench.zoo.embedded import (
    EMBEDDED_MEMBERS,
    EmbeddedData,
    MemberSpec,
    build_embedded_zoo,
    embedded_data,
)

pytest.importorskip("torch")

FAST = {"pnorm": {"t_count": 5}, "n_bootstrap": 20}
TINY = (
    MemberSpec("teacher", "convnet", 2, 1, dropout=0.3),
    MemberSpec("mlp", "mlp", 8, 1, depth=2, label_smoothing=0.1, mixup=0.4),
    MemberSpec("student", "convnet", 2, 1, teacher="teacher"),
)


def _tiny_data(seed: int = 0) -> EmbeddedData:
    """6 ID classes (class c brightens row band c) and 12 OOD classes of 10 noise images."""
    rng = np.random.default_rng(seed)

    def split(n: int) -> tuple[np.ndarray, np.ndarray]:
        labels = rng.integers(0, 6, n).astype(np.int64)
        x = rng.integers(0, 60, (n, 28, 28, 1))
        for c in range(6):
            x[labels == c, 4 * c : 4 * c + 4] += 150
        return x.clip(0, 255).astype(np.uint8), labels

    ood_classes = np.repeat(np.arange(12), 10).astype(np.int64)
    ood = rng.integers(0, 255 - 20 * 12, (120, 28, 28, 1)) + 20 * ood_classes[:, None, None, None]
    return EmbeddedData(
        class_names=tuple("abcdef"),
        train=split(64),
        val=split(30),
        test=split(40),
        ood=(ood.astype(np.uint8), ood_classes),
        ood_class_names=tuple(f"noise/{c}" for c in range(12)),
    )


def _digests(folder: Path) -> dict[str, tuple[str, int]]:
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_embedded_specs_vary_as_the_issue_asks():
    specs = {s.name: s for s in EMBEDDED_MEMBERS}
    assert len(specs) == len(EMBEDDED_MEMBERS) >= 20
    assert {s.family for s in EMBEDDED_MEMBERS} == {"convnet", "mlp", "resnet"}
    assert {s.regime for s in EMBEDDED_MEMBERS} == {
        "vanilla",
        "label_smoothing",
        "mixup",
        "distillation",
    }
    assert sum(s.dropout > 0 for s in EMBEDDED_MEMBERS) >= 3
    assert len({s.epochs for s in EMBEDDED_MEMBERS}) >= 3
    assert len({(s.family, s.width, s.depth) for s in EMBEDDED_MEMBERS}) >= 8
    for s in EMBEDDED_MEMBERS:
        assert s.teacher is None or specs[s.teacher].teacher is None


def test_embedded_data_pool_has_disjoint_id_splits_and_20_ood_classes():
    data = embedded_data(quick=True)
    assert len(data.class_names) == 6
    assert len(data.ood_class_names) >= 20
    assert set(np.unique(data.ood[1])) == set(range(len(data.ood_class_names)))
    held_out = [n for n in data.ood_class_names if n.startswith("fashion_mnist/")]
    assert len(held_out) == 4 and not {n.split("/")[1] for n in held_out} & set(data.class_names)
    train = {x.tobytes() for x in data.train[0]}
    assert not train & {x.tobytes() for x in data.val[0]}
    assert data.ood[0].shape[1:] == (28, 28, 1)
    assert all(s[0].shape[0] == s[1].shape[0] for s in (data.train, data.val, data.test, data.ood))


def test_tiny_embedded_zoo_is_a_valid_zoo_the_core_evaluates_and_resumes(tmp_path):
    folder = build_embedded_zoo(tmp_path / "zoo", quick=True, specs=TINY, data=_tiny_data())
    members = discover_members(folder)
    assert [m.name for m in members] == ["mlp", "student", "teacher"]
    meta = pd.read_csv(folder / "members.csv").set_index("name")
    assert meta.loc["student", "regime"] == "distillation"
    assert meta.loc["mlp", "regime"] == "mixup"
    assert bool(meta.loc["teacher", "has_dropout"]) and not bool(meta.loc["mlp", "has_dropout"])
    assert meta.loc["mlp", "params"] == 28 * 28 * 8 + 8 + 8 * 8 + 8 + 8 * 6 + 6
    with np.load(folder / "teacher.npz") as z:
        assert z["test_mcd_logits"].shape == (40, 10, 6)
        assert z["ood_mcd_logits"].shape == (120, 10, 6)
        assert list(z["ood_class_names"]) == [f"noise/{c}" for c in range(12)]
    with np.load(folder / "mlp.npz") as z:
        assert "test_mcd_logits" not in z.files
        np.testing.assert_array_equal(z["ood_classes"], np.repeat(np.arange(12), 10))

    small = {"cood": {"keep_small_classes": True}}  # 10 samples per OOD class
    config = parse_zoo_config({"name": "t", "zoo": str(folder), **FAST, **small})
    results = run_zoo(config, tmp_path / "run", report=False)
    assert set(results["member"]) == {"mlp", "student", "teacher"}
    assert set(results.loc[results["member"] == "teacher", "csf"]) >= {"MCD-PE", "MSR"}
    assert results["study"].str.startswith("cood/").any()

    before = _digests(folder)
    rebuilt = build_embedded_zoo(folder, quick=True, specs=TINY, data=None)
    assert rebuilt == folder
    assert _digests(folder) == before  # nothing retrained, rewritten or reloaded


def test_member_with_checkpoint_only_is_reevaluated_not_retrained(tmp_path):
    data = _tiny_data()
    folder = build_embedded_zoo(tmp_path / "zoo", quick=True, specs=TINY[:1], data=data)
    ckpt = folder / "checkpoints" / "teacher.pt"
    stamp = ckpt.stat().st_mtime_ns
    first = np.load(folder / "teacher.npz")["test_logits"]
    (folder / "teacher.npz").unlink()
    build_embedded_zoo(folder, quick=True, specs=TINY[:1], data=data)
    assert ckpt.stat().st_mtime_ns == stamp
    np.testing.assert_array_equal(np.load(folder / "teacher.npz")["test_logits"], first)


def test_unknown_teacher_is_refused(tmp_path):
    spec = MemberSpec("s", "convnet", 2, 1, teacher="missing")
    with pytest.raises(ValueError, match="teacher 'missing'"):
        build_embedded_zoo(tmp_path, quick=True, specs=(spec,), data=_tiny_data())


def _store(path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)

    def split(n: int, kind: str, new: bool = False, mcd: bool = True) -> SplitOutputs:
        labels = np.full(n, -1) if new else rng.integers(0, 3, n)
        logits = rng.standard_normal((n, 3))
        return SplitOutputs(
            labels=labels.astype(np.int64),
            logits=logits,
            mcd_logits=logits[:, None, :] + rng.standard_normal((n, 4, 3)) if mcd else None,
            kind=kind,
        )

    splits = {
        "val": split(12, "val"),
        "iid": split(20, "iid"),
        "corruption/noise/1": split(20, "corruption"),
        "new_class/semantic": split(7, "new_class_semantic", new=True),
        "new_class/mnist": split(5, "new_class_nonsemantic", new=True),
    }
    meta = {
        "model": "convnet",
        "method_kind": "ce",
        "method": "ce_dropout",
        "seed": seed,
        "mc_samples": 4,
    }
    write_outputs(path, RunOutputs(splits=splits, meta=meta))


def test_benchmark_checkpoints_become_members(tmp_path):
    run = tmp_path / "bench"
    for seed in (0, 1):
        _store(run / "runs" / "fashion_mnist" / "ce_dropout" / f"seed{seed}" / "outputs.zarr", seed)
    zoo = tmp_path / "zoo"
    names = import_benchmark_run(run, zoo)
    assert names == ["fashion_mnist-ce_dropout-seed0", "fashion_mnist-ce_dropout-seed1"]
    from fdbench.outputs import read_outputs

    source = read_outputs(run / "runs" / "fashion_mnist" / "ce_dropout" / "seed0" / "outputs.zarr")
    with np.load(zoo / f"{names[0]}.npz") as z:
        np.testing.assert_array_equal(z["test_logits"], source.splits["iid"].logits)
        np.testing.assert_array_equal(z["val_labels"], source.splits["val"].labels)
        np.testing.assert_array_equal(z["ood_classes"], [0] * 7 + [1] * 5)
        assert list(z["ood_class_names"]) == ["new_class/semantic", "new_class/mnist"]
        np.testing.assert_array_equal(z["ood_logits"][7:], source.splits["new_class/mnist"].logits)
        assert z["ood_mcd_logits"].shape == (12, 4, 3)
    meta = pd.read_csv(zoo / "members.csv")
    assert list(meta["regime"]) == ["ce", "ce"] and meta["has_dropout"].all()
    config = parse_zoo_config({"name": "t", "zoo": str(zoo), **FAST})
    results = run_zoo(config, tmp_path / "out", report=False)
    assert set(results["member"]) == set(names)


def test_benchmark_import_without_stores_is_one_clear_error(tmp_path):
    (tmp_path / "runs").mkdir()
    with pytest.raises(ValueError, match=r"no runs/<exp>/<method>/seed<k>/outputs\.zarr"):
        import_benchmark_run(tmp_path, tmp_path / "zoo")


class _FakeNet:
    """A timm-like module: ``create_model`` returns a linear model on 8 × 8 RGB images."""

    calls: typing.ClassVar[list] = []

    @classmethod
    def module(cls, torch):
        import types

        def create_model(name, pretrained=False, pretrained_cfg_overlay=None):
            cls.calls.append((name, pretrained, pretrained_cfg_overlay))
            if name != "fakenet_s.in21k":
                raise RuntimeError(f"Unknown model ({name})")
            model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 8 * 8, 4))
            model.pretrained_cfg = {
                "url": "https://example.invalid/fakenet_s.pth",
                "architecture": "fakenet",
                "input_size": (3, 8, 8),
                "crop_pct": 1.0,
                "mean": (0.5, 0.5, 0.5),
                "std": (0.25, 0.25, 0.25),
            }
            if pretrained:
                file = pretrained_cfg_overlay["file"]
                model.load_state_dict(torch.load(file, weights_only=True))
            return model

        return types.SimpleNamespace(create_model=create_model)


def _image_tree(root: Path, classes: int, per_class: int, seed: int) -> None:
    from PIL import Image

    rng = np.random.default_rng(seed)
    for c in range(classes):
        (root / f"c{c:02d}").mkdir(parents=True)
        for i in range(per_class):
            pixels = rng.integers(0, 256, (8, 8, 3)).astype(np.uint8)
            Image.fromarray(pixels).save(root / f"c{c:02d}" / f"{i}.png")


@pytest.fixture
def fake_timm(monkeypatch, tmp_path):
    import sys

    import torch

    _FakeNet.calls = []
    monkeypatch.setitem(sys.modules, "timm", _FakeNet.module(torch))
    monkeypatch.setattr(torch.hub, "get_dir", lambda: str(tmp_path / "hub"))
    return torch


def test_timm_member_without_local_weights_is_one_error_naming_it(fake_timm, tmp_path):
    from fdbench.zoo.timm_members import timm_members

    _image_tree(tmp_path / "val", 2, 3, 0)
    with pytest.raises(ValueError, match=r"timm model .fakenet_s\.in21k.: no pretrained weights"):
        timm_members(["fakenet_s.in21k"], tmp_path / "val", tmp_path / "zoo")
    assert all(not pretrained for _, pretrained, _ in _FakeNet.calls)  # nothing fetched
    with pytest.raises(ValueError, match=r"weights file .* does not exist"):
        timm_members(
            ["fakenet_s.in21k"],
            tmp_path / "val",
            tmp_path / "zoo",
            weights={"fakenet_s.in21k": tmp_path / "nope.pth"},
        )
    with pytest.raises(ValueError, match=r"timm model .other.: Unknown model"):
        timm_members(["other"], tmp_path / "val", tmp_path / "zoo")
    assert not list((tmp_path / "zoo").glob("*.npz"))


def test_timm_member_from_the_cache_runs_on_the_image_folders(fake_timm, tmp_path):
    from fdbench.zoo.timm_members import _preprocess, timm_members

    torch = fake_timm
    reference = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 8 * 8, 4))
    (tmp_path / "hub" / "checkpoints").mkdir(parents=True)
    torch.save(reference.state_dict(), tmp_path / "hub" / "checkpoints" / "fakenet_s.pth")
    _image_tree(tmp_path / "val", 4, 3, 0)
    _image_tree(tmp_path / "ood", 5, 2, 1)
    names = timm_members(
        ["fakenet_s.in21k"], tmp_path / "val", tmp_path / "zoo", ood=tmp_path / "ood"
    )
    assert names == ["fakenet_s.in21k"]
    with np.load(tmp_path / "zoo" / "fakenet_s.in21k.npz") as z:
        np.testing.assert_array_equal(z["test_labels"], np.repeat(np.arange(4), 3))
        np.testing.assert_array_equal(z["ood_classes"], np.repeat(np.arange(5), 2))
        assert list(z["ood_class_names"]) == [f"c{c:02d}" for c in range(5)]
        cfg = {"input_size": (3, 8, 8), "crop_pct": 1.0, "mean": (0.5,) * 3, "std": (0.25,) * 3}
        x = _preprocess(tmp_path / "val" / "c01" / "2.png", cfg)
        with torch.no_grad():
            expected = reference(torch.from_numpy(x[None])).double().numpy()[0]
        np.testing.assert_allclose(z["test_logits"][5], expected, rtol=1e-5, atol=1e-5)
    meta = pd.read_csv(tmp_path / "zoo" / "members.csv").iloc[0]
    assert (meta["family"], meta["regime"], meta["params"]) == ("fakenet", "pretraining", 772)
    calls = len(_FakeNet.calls)
    timm_members(["fakenet_s.in21k"], tmp_path / "val", tmp_path / "zoo", ood=tmp_path / "ood")
    assert len(_FakeNet.calls) == calls  # a done member is not loaded again


def test_timm_missing_is_an_import_error_naming_the_package(monkeypatch):
    import sys

    from fdbench.zoo.timm_members import load_timm_model

    monkeypatch.setitem(sys.modules, "timm", None)
    with pytest.raises(ImportError, match="pip install timm"):
        load_timm_model("resnet50")


def test_config_sources_write_benchmark_members_before_the_evaluation(tmp_path):
    from fdbench.zoo import load_zoo_config

    _store(tmp_path / "bench" / "runs" / "fm" / "ce" / "seed0" / "outputs.zarr", 0)
    (tmp_path / "zoo.yaml").write_text(
        "name: t\nzoo: zoo\nn_bootstrap: 20\npnorm: {t_count: 5}\n"
        "sources: {benchmark_runs: [bench]}\n"
    )
    config = load_zoo_config(tmp_path / "zoo.yaml")
    assert config.sources.benchmark_runs == (str(tmp_path / "bench"),)
    results = run_zoo(config, tmp_path / "out", report=False)
    assert set(results["member"]) == {"fm-ce-seed0"}
    with pytest.raises(ValueError, match=r"sources\.timm\.models"):
        parse_zoo_config(
            {"name": "t", "zoo": "z", "sources": {"timm": {"models": [], "dataset": "d"}}}
        )


def test_embedded_folder_of_another_recipe_is_refused(tmp_path):
    build_embedded_zoo(tmp_path, quick=True, specs=TINY[1:2], data=_tiny_data())
    with pytest.raises(ValueError, match="another recipe"):
        build_embedded_zoo(tmp_path, quick=False, specs=TINY[1:2], data=_tiny_data())


def test_cli_zoo_without_config_trains_and_evaluates_the_embedded_zoo(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from fdbench import cli
    from fdbench.zoo import embedded

    original = embedded.build_embedded_zoo

    def tiny(folder, **kwargs):
        return original(folder, **{**kwargs, "specs": TINY, "data": _tiny_data()})

    monkeypatch.setattr(embedded, "build_embedded_zoo", tiny)
    out = tmp_path / "run"
    result = CliRunner().invoke(cli.app, ["zoo", "--quick", "--workers", "0", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "10 MC-dropout passes" in result.output
    assert sorted(p.name for p in (out / "zoo").glob("*.npz")) == [
        "mlp.npz",
        "student.npz",
        "teacher.npz",
    ]
    assert (out / "zoo_report.html").is_file()
    assert set(pd.read_parquet(out / "results.parquet")["member"]) == {"mlp", "student", "teacher"}


RESNET_MEMBER_SCRIPT = """
import sys
from pathlib import Path
import numpy as np
from fdbench.zoo.embedded import EMBEDDED_MEMBERS, EmbeddedData, train_member_job
rng = np.random.default_rng(0)
x = rng.integers(0, 256, (256, 28, 28, 1), dtype=np.uint8)
y = np.arange(256) % 6
part = (x[:64], y[:64])
data = EmbeddedData(tuple("abcdef"), (x, y), part, part, (x[:32], y[:32]), ("z",))
folder = Path(sys.argv[1])
(folder / "checkpoints").mkdir()
spec = next(m for m in EMBEDDED_MEMBERS if m.name == "resnet18_w4")
print(train_member_job(spec, data, folder, True, EMBEDDED_MEMBERS).name)
"""


def test_the_resnet_member_trains_without_crashing_the_process(tmp_path):
    # oneDNN's backward pass of this network corrupted the heap under torch 2.13 (CPU): the
    # process died within the first batches; it runs in a process of its own for that reason
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", RESNET_MEMBER_SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "resnet18_w4.npz"
    assert (tmp_path / "resnet18_w4.npz").is_file()
