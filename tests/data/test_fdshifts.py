"""Tests for the FD-Shifts experiments, built from tiny datasets written in the official formats."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest
from scipy.io import savemat

from fdbench.data.shifts.corruptions import CORRUPTIONS, SEVERITIES
from fdbench.data.shifts.splits import CIFAR100_CLASSES, CIFAR100_SUPERCLASSES, to_format
from fdbench.data.suites.fdshifts import (
    FDSHIFTS_N_VAL,
    FDSHIFTS_SUPERCIFAR_HELD_OUT,
    fdshifts_experiments,
)
from fdbench.data.types import StudyKind
from fdbench.jobs.plan import load_config, parse_config
from fdbench.training.experiments import build_experiments
from tests.data.test_readers import _dump, _jpeg

ROOT = Path(__file__).resolve().parents[2]
CIFAR10_CLASSES = (
    "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck",
)  # fmt: skip
N_C = 4  # images per severity in the fake CIFAR-C files
CONFIGS = {
    name: Path(str(files("fdbench") / "configs" / f"fdshifts_{name}.yaml"))
    for name in ("cifar10", "cifar100", "super_cifar100", "svhn", "svhn_openset")
}


@dataclass
class Fake:
    """What the fake data folder holds, as the readers should return it (images N×32×32×3)."""

    root: Path
    c10: dict  # split -> (images, labels)
    c100: dict  # split -> (images, fine labels)
    svhn: dict  # split -> (images, labels 0..9)
    tiny_val: np.ndarray  # decoded 64×64 validation JPEGs
    c10_c: dict  # corruption -> (5·N_C images, labels)
    c100_c: dict


def _images(rng, n):
    return rng.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)


def _rows(hwc):
    return np.ascontiguousarray(hwc.transpose(0, 3, 1, 2).reshape(len(hwc), 3072))


def _write_cifar10(folder, rng):
    folder.mkdir()
    train_images, train_labels = [], []
    for i in range(1, 6):
        hwc, labels = _images(rng, 20), [j % 10 for j in range(20)]
        train_images.append(hwc)
        train_labels += labels
        _dump(
            folder / f"data_batch_{i}",
            {b"batch_label": f"training batch {i} of 5".encode(), b"labels": labels,
             b"data": _rows(hwc), b"filenames": [b"x.png"] * 20},
        )  # fmt: skip
    test, test_labels = _images(rng, FDSHIFTS_N_VAL + 30), rng.integers(0, 10, FDSHIFTS_N_VAL + 30)
    _dump(
        folder / "test_batch",
        {b"batch_label": b"testing batch 1 of 1", b"labels": test_labels.tolist(),
         b"data": _rows(test), b"filenames": [b"y.png"] * len(test)},
    )  # fmt: skip
    _dump(
        folder / "batches.meta",
        {b"num_cases_per_batch": 10000, b"label_names": [c.encode() for c in CIFAR10_CLASSES],
         b"num_vis": 3072},
    )  # fmt: skip
    return {
        "train": (np.concatenate(train_images), np.array(train_labels)),
        "test": (test, test_labels),
    }


def _write_cifar100(folder, rng):
    folder.mkdir()
    coarse_of = {
        CIFAR100_CLASSES.index(f): s
        for s, (_, fine) in enumerate(CIFAR100_SUPERCLASSES.items())
        for f in fine
    }
    out = {}
    for split, per_class in (("train", 2), ("test", 14)):
        fine = rng.permutation(np.repeat(np.arange(100), per_class))
        hwc = _images(rng, len(fine))
        _dump(
            folder / split,
            {b"filenames": [b"z.png"] * len(fine), b"batch_label": split.encode(),
             b"fine_labels": fine.tolist(), b"coarse_labels": [coarse_of[f] for f in fine],
             b"data": _rows(hwc)},
        )  # fmt: skip
        out[split] = (hwc, fine)
    _dump(
        folder / "meta",
        {b"fine_label_names": [c.encode() for c in CIFAR100_CLASSES],
         b"coarse_label_names": [s.encode() for s in CIFAR100_SUPERCLASSES]},
    )  # fmt: skip
    return out


def _write_svhn(folder, rng):
    folder.mkdir()
    out = {}
    for split, n in (("train", 60), ("test", FDSHIFTS_N_VAL + 20)):
        hwc, y = _images(rng, n), rng.integers(1, 11, n)
        x = np.ascontiguousarray(hwc.transpose(1, 2, 3, 0))  # X is 32×32×3×N
        savemat(folder / f"{split}_32x32.mat", {"X": x, "y": y[:, None].astype(np.uint8)})
        out[split] = (hwc, y % 10)
    return out


def _write_tiny_imagenet(folder, rng):
    wnids = ["n01443537", "n01629819", "n01641577"]
    (folder / "val" / "images").mkdir(parents=True)
    (folder / "wnids.txt").write_text("\n".join(wnids) + "\n")
    (folder / "words.txt").write_text("".join(f"{w}\tclass {w}\n" for w in wnids))
    for w in wnids:
        (folder / "train" / w / "images").mkdir(parents=True)
        _jpeg(folder / "train" / w / "images" / f"{w}_0.JPEG", rng.integers(0, 256, (64, 64, 3),
              dtype=np.uint8))  # fmt: skip
    decoded, lines = [], []
    for i in range(6):
        decoded.append(
            _jpeg(folder / "val" / "images" / f"val_{i}.JPEG",
                  rng.integers(0, 256, (64, 64, 3), dtype=np.uint8))
        )  # fmt: skip
        lines.append(f"val_{i}.JPEG\t{wnids[i % 3]}\t0\t0\t63\t63\n")
    (folder / "val" / "val_annotations.txt").write_text("".join(lines))
    return np.stack(decoded)


def _write_cifar_c(folder, rng, n_classes):
    folder.mkdir()
    labels = np.tile(rng.integers(0, n_classes, N_C), 5).astype(np.uint8)
    np.save(folder / "labels.npy", labels)
    out = {}
    for name in CORRUPTIONS:
        images = _images(rng, 5 * N_C)
        np.save(folder / f"{name}.npy", images)
        out[name] = (images, labels.astype(np.int64))
    return out


@pytest.fixture(scope="module")
def fake(tmp_path_factory) -> Fake:
    root = tmp_path_factory.mktemp("fdshifts_data")
    rng = np.random.default_rng(0)
    return Fake(
        root,
        _write_cifar10(root / "cifar-10-batches-py", rng),
        _write_cifar100(root / "cifar-100-python", rng),
        _write_svhn(root / "svhn", rng),
        _write_tiny_imagenet(root / "tiny-imagenet-200", rng),
        _write_cifar_c(root / "CIFAR-10-C", rng, 10),
        _write_cifar_c(root / "CIFAR-100-C", rng, 100),
    )


@pytest.fixture(scope="module")
def built(fake):
    return {
        name: fdshifts_experiments(dataset=name, data_dir=fake.root)
        for name in ("cifar10", "cifar100", "super_cifar100", "svhn")
    }


def _studies(exp):
    return {s.name: s for s in exp.studies}


def _check_val_iid(exp, test_images, test_labels):
    np.testing.assert_array_equal(exp.val.images, test_images[:FDSHIFTS_N_VAL])
    np.testing.assert_array_equal(exp.val.labels, test_labels[:FDSHIFTS_N_VAL])
    iid = _studies(exp)["iid"]
    assert iid.kind is StudyKind.IID and exp.studies[0] is iid
    np.testing.assert_array_equal(iid.images, test_images[FDSHIFTS_N_VAL:])
    np.testing.assert_array_equal(iid.labels, test_labels[FDSHIFTS_N_VAL:])


def _check_corruptions(exp, c_data):
    studies = [s for s in exp.studies if s.kind is StudyKind.CORRUPTION]
    assert len(studies) == 75
    assert [s.name for s in studies] == [
        f"corruption/{c}/{s}" for c in CORRUPTIONS for s in SEVERITIES
    ]
    for s in studies:
        images, labels = c_data[s.corruption]
        block = slice((s.severity - 1) * N_C, s.severity * N_C)
        np.testing.assert_array_equal(s.images, images[block])
        np.testing.assert_array_equal(s.labels, labels[block])


def _check_new_class(exp, expected):
    """``expected``: source → (kind, images in the training format)."""
    studies = _studies(exp)
    new = [s.name for s in exp.studies if s.name.startswith("new_class/")]
    assert new == [f"new_class/{source}" for source in expected]
    for source, (kind, images) in expected.items():
        s = studies[f"new_class/{source}"]
        assert s.kind is kind and s.labels.dtype == np.int64 and np.all(s.labels == -1)
        np.testing.assert_array_equal(s.images, images)


def test_cifar10(built, fake):
    (exp,) = built["cifar10"]
    assert exp.name == "cifar10" and exp.class_names == CIFAR10_CLASSES
    np.testing.assert_array_equal(exp.train.images, fake.c10["train"][0])
    np.testing.assert_array_equal(exp.train.labels, fake.c10["train"][1])
    _check_val_iid(exp, *fake.c10["test"])
    _check_corruptions(exp, fake.c10_c)
    tiny = to_format(fake.tiny_val, 32, 32, 3)
    _check_new_class(
        exp,
        {
            "cifar100": (StudyKind.NEW_CLASS_SEMANTIC, fake.c100["test"][0]),
            "svhn": (StudyKind.NEW_CLASS_NONSEMANTIC, fake.svhn["test"][0]),
            "tiny_imagenet": (StudyKind.NEW_CLASS_NONSEMANTIC, tiny),
        },
    )
    assert len(exp.studies) == 1 + 75 + 3


def test_cifar100(built, fake):
    (exp,) = built["cifar100"]
    assert exp.name == "cifar100" and exp.class_names == CIFAR100_CLASSES
    np.testing.assert_array_equal(exp.train.images, fake.c100["train"][0])
    np.testing.assert_array_equal(exp.train.labels, fake.c100["train"][1])
    _check_val_iid(exp, *fake.c100["test"])
    _check_corruptions(exp, fake.c100_c)
    _check_new_class(
        exp,
        {
            "cifar10": (StudyKind.NEW_CLASS_SEMANTIC, fake.c10["test"][0]),
            "svhn": (StudyKind.NEW_CLASS_NONSEMANTIC, fake.svhn["test"][0]),
            "tiny_imagenet": (StudyKind.NEW_CLASS_NONSEMANTIC, to_format(fake.tiny_val, 32, 32, 3)),
        },
    )


def test_svhn(built, fake):
    (exp,) = built["svhn"]
    assert exp.name == "svhn" and exp.class_names == tuple("0123456789")
    np.testing.assert_array_equal(exp.train.images, fake.svhn["train"][0])
    np.testing.assert_array_equal(exp.train.labels, fake.svhn["train"][1])
    _check_val_iid(exp, *fake.svhn["test"])
    assert not any(s.kind is StudyKind.CORRUPTION for s in exp.studies)
    _check_new_class(
        exp,
        {
            "cifar10": (StudyKind.NEW_CLASS_NONSEMANTIC, fake.c10["test"][0]),
            "cifar100": (StudyKind.NEW_CLASS_NONSEMANTIC, fake.c100["test"][0]),
            "tiny_imagenet": (StudyKind.NEW_CLASS_NONSEMANTIC, to_format(fake.tiny_val, 32, 32, 3)),
        },
    )


def test_super_cifar100(built, fake):
    (exp,) = built["super_cifar100"]
    supers = [s for s in CIFAR100_SUPERCLASSES if s != "vehicles_2"]
    assert exp.name == "super_cifar100" and exp.class_names == tuple(supers)
    assert {s.name: s.kind for s in exp.studies} == {
        "iid": StudyKind.IID,
        "subclass": StudyKind.SUBCLASS,
    }
    super_of = {
        CIFAR100_CLASSES.index(f): supers.index(s) for s in supers for f in CIFAR100_SUPERCLASSES[s]
    }
    held = {CIFAR100_CLASSES.index(f) for f in FDSHIFTS_SUPERCIFAR_HELD_OUT}
    # one held-out sub-class per kept super-class
    assert len(held) == 19 and sorted(super_of[c] for c in held) == list(range(19))
    # every image is the official image of its fine class, labelled with that class's super-class
    origin = {}
    for split in ("train", "test"):
        for img, fine in zip(*fake.c100[split], strict=True):
            origin[img.tobytes()] = (split, int(fine))

    def fines(images, labels, split=None):
        out = []
        for img, label in zip(images, labels, strict=True):
            where, fine = origin[img.tobytes()]
            assert split is None or where == split
            assert super_of[fine] == label
            out.append(fine)
        return out

    train_fine = fines(exp.train.images, exp.train.labels, "train")
    val_fine = fines(exp.val.images, exp.val.labels, "test")
    s = _studies(exp)
    iid_fine = fines(s["iid"].images, s["iid"].labels, "test")
    sub_fine = fines(s["subclass"].images, s["subclass"].labels)
    kept = set(super_of) - held
    assert set(train_fine) == kept and set(val_fine) | set(iid_fine) <= kept
    assert set(sub_fine) == held
    # sizes: all kept training images; the kept test images split 1000 / rest; every held-out
    # image of the test file, then of the training file (FD-Shifts' SuperCIFAR100 test set)
    assert len(train_fine) == 76 * 2 and len(val_fine) == FDSHIFTS_N_VAL
    assert len(iid_fine) == 76 * 14 - FDSHIFTS_N_VAL and len(sub_fine) == 19 * (14 + 2)
    test_images, test_fine = fake.c100["test"]
    in_dist = np.isin(test_fine, sorted(kept))
    np.testing.assert_array_equal(exp.val.images, test_images[in_dist][:FDSHIFTS_N_VAL])
    held_test = np.isin(test_fine, sorted(held))
    np.testing.assert_array_equal(s["subclass"].images[: held_test.sum()], test_images[held_test])


def test_no_vehicles_2(built):
    (exp,) = built["super_cifar100"]
    assert "vehicles_2" not in exp.class_names and len(exp.class_names) == 19


def test_max_per_study_and_seed(fake):
    (a,) = fdshifts_experiments(dataset="cifar10", data_dir=fake.root, max_per_study=3, seed=1)
    (b,) = fdshifts_experiments(dataset="cifar10", data_dir=fake.root, max_per_study=3, seed=1)
    (c,) = fdshifts_experiments(dataset="cifar10", data_dir=fake.root, max_per_study=3, seed=2)
    (full,) = fdshifts_experiments(dataset="cifar10", data_dir=fake.root)
    assert len(a.train) == len(full.train) and len(a.val) == len(full.val)
    full_studies = _studies(full)
    for s in a.studies:
        assert len(s.labels) == 3
        # a subset of the complete study, in its order
        rows = [
            np.flatnonzero((full_studies[s.name].images == img).all(axis=(1, 2, 3)))[0]
            for img in s.images
        ]
        assert rows == sorted(rows)
    corr = [s for s in a.studies if s.kind is StudyKind.CORRUPTION]
    assert len({s.labels.tobytes() for s in corr}) == 1  # one subset of the test images
    for x, y in zip(a.studies, b.studies, strict=True):
        np.testing.assert_array_equal(x.images, y.images)
    assert any(
        not np.array_equal(x.images, y.images) for x, y in zip(a.studies, c.studies, strict=True)
    )


def test_default_data_dir_is_fdbench_data(fake, monkeypatch):
    monkeypatch.setenv("FDBENCH_DATA", str(fake.root))
    (exp,) = fdshifts_experiments(dataset="svhn")
    np.testing.assert_array_equal(exp.train.images, fake.svhn["train"][0])


def test_missing_training_data(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        fdshifts_experiments(dataset="cifar10", data_dir=tmp_path)
    message = str(info.value)
    assert "\n" not in message
    for expected in (
        f"folder {tmp_path / 'cifar-10-batches-py'}",
        "cifar-10-python.tar.gz",
        f"folder {tmp_path / 'CIFAR-10-C'}",
        "CIFAR-10-C.tar",
        str(tmp_path / "cifar-100-python"),
        str(tmp_path / "svhn"),
        str(tmp_path / "tiny-imagenet-200"),
        "tiny-imagenet-200.zip",
    ):
        assert expected in message
    with pytest.raises(FileNotFoundError, match="cifar-10-batches-py"):
        fdshifts_experiments(dataset="cifar10", data_dir=tmp_path, skip_missing=True)


def _copy_without(fake, tmp_path, *leave_out):
    root = tmp_path / "data"
    root.mkdir()
    for entry in fake.root.iterdir():
        if entry.name not in leave_out:
            (root / entry.name).symlink_to(entry)
    return root


def test_missing_file_is_named(fake, tmp_path):
    root = tmp_path / "data"
    shutil.copytree(fake.root, root, symlinks=True)
    (root / "CIFAR-10-C" / "fog.npy").unlink()
    (root / "svhn" / "test_32x32.mat").unlink()
    with pytest.raises(FileNotFoundError) as info:
        fdshifts_experiments(dataset="cifar10", data_dir=root)
    message = str(info.value)
    assert str(root / "CIFAR-10-C" / "fog.npy") in message
    assert str(root / "svhn" / "test_32x32.mat") in message
    assert str(root / "svhn" / "train_32x32.mat") not in message
    assert str(root / "CIFAR-10-C" / "frost.npy") not in message


def test_skip_missing_optional_studies(fake, tmp_path, caplog):
    root = _copy_without(fake, tmp_path, "tiny-imagenet-200", "CIFAR-100-C")
    with pytest.raises(FileNotFoundError, match="tiny-imagenet-200"):
        fdshifts_experiments(dataset="cifar100", data_dir=root)
    with caplog.at_level(logging.WARNING, logger="fdbench.data.suites.fashion_mnist"):
        (exp,) = fdshifts_experiments(dataset="cifar100", data_dir=root, skip_missing=True)
    names = [s.name for s in exp.studies]
    assert names == ["iid", "new_class/cifar10", "new_class/svhn"]
    warned = " ".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert "tiny-imagenet-200" in warned and "CIFAR-100-C" in warned


def test_bad_arguments(fake):
    with pytest.raises(ValueError, match="dataset must be one of"):
        fdshifts_experiments(dataset="imagenet", data_dir=fake.root)
    for bad in (0, -1, 2.5):
        with pytest.raises(ValueError, match="max_per_study"):
            fdshifts_experiments(dataset="svhn", data_dir=fake.root, max_per_study=bad)
    with pytest.raises(TypeError, match="skip_missing"):
        fdshifts_experiments(dataset="svhn", data_dir=fake.root, skip_missing="yes")


def test_too_small_test_set(fake, tmp_path):
    root = _copy_without(fake, tmp_path, "svhn")
    (root / "svhn").mkdir()
    x = np.zeros((32, 32, 3, FDSHIFTS_N_VAL), np.uint8)
    for split in ("train", "test"):
        savemat(root / "svhn" / f"{split}_32x32.mat", {"X": x, "y": np.ones((FDSHIFTS_N_VAL, 1))})
    with pytest.raises(ValueError, match=f"more than {FDSHIFTS_N_VAL} images"):
        fdshifts_experiments(dataset="svhn", data_dir=root)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_shipped_configs_build(name, fake, openset):
    config = load_config(CONFIGS[name])
    assert config.data.builder == "fdshifts_experiments"
    assert config.data.args["dataset"] == name and "data_dir" not in config.data.args
    expected_arch = "convnet" if name.startswith("svhn") else "vgg13"
    assert config.architecture.name == expected_arch
    root = openset[0] if name == "svhn_openset" else fake.root
    data = config.data.model_copy(update={"args": {**config.data.args, "data_dir": root}})
    experiments = build_experiments(config.model_copy(update={"data": data}))
    assert [e.name for e in experiments] == [name]
    assert experiments[0].studies[0].name == "iid"


def test_cli_names_missing_data(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "FDBENCH_DATA": str(tmp_path)}
    env.pop("FDBENCH_DEBUG", None)
    result = subprocess.run(
        [sys.executable, "-m", "fdbench", "benchmark", str(CONFIGS["cifar10"]),
         "--out", str(tmp_path / "run")],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert "cifar-10-batches-py" in lines[0] and "cifar-10-python.tar.gz" in lines[0]


def test_benchmark_end_to_end(fake, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("lightning")
    from fdbench.jobs.benchmark import run_benchmark

    raw = load_config(CONFIGS["svhn"]).model_dump(mode="json")
    raw["data"]["args"].update(data_dir=str(fake.root), max_per_study=8)
    raw.update(
        architecture={"name": "convnet", "dropout": 0.3, "options": {"width": 2, "feature_dim": 8}},
        training={"epochs": 1, "batch_size": 64, "threads": 1, "augment": False},
        inference={"mc_samples": 2, "batch_size": 256, "max_train_samples": 40},
        methods=[{"name": "ce", "kind": "ce", "seeds": [0], "params": {"dropout": True}}],
        ensembles=[],
    )
    results = run_benchmark(parse_config(raw), tmp_path / "run", report=False)
    studies = set(results["study"])
    assert studies == {
        "iid",
        "new_class/cifar10",
        "new_class/cifar100",
        "new_class/tiny_imagenet",
        "unknown",  # Kim et al.'s pooled study, under the unknown-detection protocol only
    }
    assert set(results.loc[results["study"] == "unknown", "protocol"]) == {"unknown_detection"}
    aurc = results[(results["metric"] == "aurc") & (results["protocol"] == "failure_detection")]
    assert len(aurc) and aurc["value"].between(0, 1).all()


# ------------------------------------------------------------------ SVHN semantic (openset)

N_OPEN_TEST = 2 * FDSHIFTS_N_VAL + 400  # enough test images of 6 classes for val + iid


@pytest.fixture(scope="module")
def openset(tmp_path_factory):
    """A data folder with SVHN only, its test set large enough for any 6 training classes."""
    root = tmp_path_factory.mktemp("svhn_openset")
    rng = np.random.default_rng(1)
    folder = root / "svhn"
    folder.mkdir()
    out = {}
    for split, n in (("train", 120), ("test", N_OPEN_TEST)):
        hwc, y = _images(rng, n), rng.integers(1, 11, n)
        x = np.ascontiguousarray(hwc.transpose(1, 2, 3, 0))
        savemat(folder / f"{split}_32x32.mat", {"X": x, "y": y[:, None].astype(np.uint8)})
        out[split] = (hwc, y % 10)  # the official files label the digit 0 as 10
    return root, out


def test_svhn_openset_holds_out_40_percent(openset):
    root, data = openset
    (exp,) = fdshifts_experiments(dataset="svhn_openset", data_dir=root, run_seed=3)
    split = exp.split
    known, held = split["train_classes"], split["held_out_classes"]
    assert len(held) == 4 and len(known) == 6
    assert sorted(known + held) == list(range(10)) and split["draw_seed"] == 3
    assert split["held_out_names"] == [str(c) for c in held]
    assert exp.name == "svhn_openset" and exp.class_names == tuple(str(c) for c in known)
    lookup = {c: j for j, c in enumerate(known)}
    tr_images, tr_labels = data["train"]
    tr = np.isin(tr_labels, known)
    np.testing.assert_array_equal(exp.train.images, tr_images[tr])
    np.testing.assert_array_equal(exp.train.labels, [lookup[c] for c in tr_labels[tr]])
    te_images, te_labels = data["test"]
    te = np.isin(te_labels, known)
    relabelled = np.array([lookup[c] for c in te_labels[te]])
    _check_val_iid(exp, te_images[te], relabelled)
    assert [s.name for s in exp.studies] == ["iid", "new_class/semantic"]
    sem = _studies(exp)["new_class/semantic"]
    assert sem.kind is StudyKind.NEW_CLASS_SEMANTIC
    np.testing.assert_array_equal(sem.images, te_images[np.isin(te_labels, held)])
    assert (sem.labels == -1).all()


def test_svhn_openset_draw_per_run_seed(openset):
    root, _ = openset

    def draw(**kw):
        (exp,) = fdshifts_experiments(dataset="svhn_openset", data_dir=root, **kw)
        return exp

    draws = {k: tuple(draw(run_seed=k).split["held_out_classes"]) for k in range(5)}
    assert len(set(draws.values())) > 1  # a new sample of held-out classes per run
    a, b = draw(run_seed=2), draw(run_seed=2)
    assert a.split == b.split
    np.testing.assert_array_equal(a.train.images, b.train.images)
    np.testing.assert_array_equal(a.studies[1].images, b.studies[1].images)
    assert draw().split == draw(run_seed=0).split  # without run_seed: the data seed's draw
    with pytest.raises(ValueError, match="run_seed"):
        draw(run_seed=-1)


def test_svhn_keeps_its_fixed_split(built):
    assert built["svhn"][0].split is None


def test_per_run_config_builds_one_experiment_per_seed(openset, tmp_path):
    from fdbench.training.experiments import experiment_for_run, write_split

    root, _ = openset
    raw = load_config(CONFIGS["svhn_openset"]).model_dump(mode="json")
    raw["data"]["args"]["data_dir"] = str(root)
    config = parse_config(raw)
    assert config.data.per_run
    (base,) = build_experiments(config)
    for seed in (0, 1, 4):
        run = experiment_for_run(config, base, seed)
        (direct,) = fdshifts_experiments(dataset="svhn_openset", data_dir=root, run_seed=seed)
        assert run.split == direct.split
        assert experiment_for_run(config, base, seed) is run  # built once per seed
        path = write_split(run, tmp_path / f"seed{seed}")
        assert json.loads(path.read_text()) == direct.split
    with pytest.raises(ValueError, match="ensembles"):
        parse_config({**raw, "ensembles": ["ce"]})
    fixed = load_config(CONFIGS["svhn"])
    assert "per_run" not in fixed.data.model_dump(mode="json")  # digest of old configs kept
    (svhn,) = build_experiments(
        fixed.model_copy(update={"data": fixed.data.model_copy(
            update={"args": {**fixed.data.args, "data_dir": str(root), "skip_missing": True}})})
    )  # fmt: skip
    assert experiment_for_run(fixed, svhn, 3) is svhn
    assert write_split(svhn, tmp_path / "fixed") is None


def test_openset_benchmark_records_each_runs_draw(openset, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("lightning")
    from fdbench.jobs.benchmark import run_benchmark

    root, _ = openset
    raw = load_config(CONFIGS["svhn_openset"]).model_dump(mode="json")
    raw["data"]["args"].update(data_dir=str(root), max_per_study=8)
    raw.update(
        architecture={"name": "convnet", "dropout": 0.3, "options": {"width": 2, "feature_dim": 8}},
        training={"epochs": 1, "batch_size": 64, "threads": 1, "augment": False},
        inference={"mc_samples": 0, "batch_size": 256, "max_train_samples": 40},
        methods=[{"name": "ce", "kind": "ce", "seeds": [0, 1]}],
    )
    results = run_benchmark(parse_config(raw), tmp_path / "run", report=False)
    assert set(results["study"]) == {"iid", "new_class/semantic", "unknown"}
    assert set(results.loc[results["study"] == "unknown", "protocol"]) == {"unknown_detection"}
    assert set(results["seed"]) == {0, 1}
    for seed in (0, 1):
        recorded = json.loads(
            (
                tmp_path / "run" / "runs" / "svhn_openset" / "ce" / f"seed{seed}" / "split.json"
            ).read_text()
        )
        (exp,) = fdshifts_experiments(dataset="svhn_openset", data_dir=root, run_seed=seed)
        assert recorded == exp.split
