"""ImageNet OOD sets on disk: ImageNet-21K filtered as Galil et al. (App. L.1), ImageNet-O."""

from __future__ import annotations

import io
import sys
import tarfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fdbench import metrics as M
from fdbench.csf.softmax import msr
from fdbench.data.sources.wordnet import WordNet
from fdbench.zoo import discover_members, evaluate_member, load_zoo_config, parse_zoo_config
from fdbench.zoo.analyses import extra_ood_table
from fdbench.zoo.imagenet_ood import (
    TarImage,
    filter_imagenet21k,
    imagenet21k_images,
    imagenet21k_pool,
    imagenet_o_images,
    open_image,
)
from fdbench.zoo.members import declared_val_mask
from fdbench.zoo.synthetic import make_synthetic_zoo
from tests._cli import run_cli

ENTITY, ANIMAL, BEAR, BROWN_BEAR = "n00001740", "n00015388", "n02131653", "n02132136"
ALASKAN_BEAR, ICE_BEAR, DOG, CAT = "n02132466", "n02134084", "n02084071", "n02121620"
TABBY, CHAIR, UNKNOWN = "n02123045", "n03001627", "n09999999"
ID_WNIDS = (BROWN_BEAR, TABBY)


def _wordnet() -> WordNet:
    """entity > animal > {bear > {brown bear > Alaskan brown bear, ice bear}, dog,
    cat > tabby}, entity > chair."""
    tree = {
        ENTITY: ("entity", ()),
        ANIMAL: ("animal", (ENTITY,)),
        BEAR: ("bear", (ANIMAL,)),
        BROWN_BEAR: ("brown bear", (BEAR,)),
        ALASKAN_BEAR: ("alaskan brown bear", (BROWN_BEAR,)),
        ICE_BEAR: ("ice bear", (BEAR,)),
        DOG: ("dog", (ANIMAL,)),
        CAT: ("cat", (ANIMAL,)),
        TABBY: ("tabby", (CAT,)),
        CHAIR: ("chair", (ENTITY,)),
    }
    return WordNet({k: (v[0],) for k, v in tree.items()}, {k: v[1] for k, v in tree.items()})


def _jpeg(seed: int) -> bytes:
    from PIL import Image

    pixels = np.random.default_rng(seed).integers(0, 256, (8, 8, 3)).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="JPEG")
    return buffer.getvalue()


def _class_folder(root: Path, wnid: str, n: int, suffix: str = ".JPEG") -> list[bytes]:
    (root / wnid).mkdir(parents=True)
    images = [_jpeg(int(wnid[1:]) + i) for i in range(n)]
    for i, data in enumerate(images):
        (root / wnid / f"{wnid}_{i}{suffix}").write_bytes(data)
    return images


def _class_tar(root: Path, wnid: str, n: int) -> list[bytes]:
    """``root/<wnid>.tar`` as the ImageNet-21K releases ship a class (uncompressed)."""
    root.mkdir(parents=True, exist_ok=True)
    images = [_jpeg(int(wnid[1:]) + i) for i in range(n)]
    with tarfile.open(root / f"{wnid}.tar", "w") as archive:
        for i, data in enumerate(images):
            info = tarfile.TarInfo(f"{wnid}_{i}.JPEG")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return images


def test_filter_removes_imagenet1k_classes_their_hypernyms_and_hyponyms():
    candidates = [
        ENTITY,
        ANIMAL,
        BEAR,
        BROWN_BEAR,
        ALASKAN_BEAR,
        ICE_BEAR,
        DOG,
        CAT,
        TABBY,
        CHAIR,
        UNKNOWN,
    ]
    kept, removed = filter_imagenet21k(candidates, ID_WNIDS, _wordnet())
    assert kept == [DOG, ICE_BEAR, CHAIR]  # wnid order
    assert removed == {
        BROWN_BEAR: "imagenet1k",
        TABBY: "imagenet1k",
        BEAR: "hypernym",  # the paper's example: "bear" above ImageNet-1K's "brown bear"
        ANIMAL: "hypernym",
        ENTITY: "hypernym",
        CAT: "hypernym",
        ALASKAN_BEAR: "hyponym",
        UNKNOWN: "not_in_wordnet",
    }
    with pytest.raises(ValueError, match="id_wnids: 'c01' is not a WordNet"):
        filter_imagenet21k(candidates, ["c01"], _wordnet())


def test_both_releases_layouts_are_read(tmp_path):
    folder = _class_folder(tmp_path, DOG, 3)
    packed = _class_tar(tmp_path, ICE_BEAR, 4)
    (tmp_path / "README.txt").write_text("not a class")
    classes = imagenet21k_images(tmp_path)
    assert list(classes) == [DOG, ICE_BEAR]
    assert [p.read_bytes() for p in classes[DOG]] == folder
    tarred = classes[ICE_BEAR]
    assert all(isinstance(t, TarImage) for t in tarred)
    assert [t.read() for t in tarred] == packed
    with open_image(tarred[2]) as image:
        assert image.size == (8, 8)


def test_pool_keeps_n_samples_of_every_clean_class_with_enough_images(tmp_path):
    _class_folder(tmp_path, DOG, 5)
    _class_tar(tmp_path, ICE_BEAR, 6)
    _class_folder(tmp_path, CHAIR, 2)  # fewer than n_samples: removed
    _class_folder(tmp_path, BROWN_BEAR, 5)  # an ID class
    _class_tar(tmp_path, BEAR, 5)  # a hypernym of one
    items, names = imagenet21k_pool(tmp_path, ID_WNIDS, _wordnet(), n_samples=3, seed=0)
    assert names == [DOG, ICE_BEAR]
    assert [c for _, c in items] == [0, 0, 0, 1, 1, 1]
    assert len({str(i) for i, _ in items}) == 6
    assert all(isinstance(i, TarImage) for i, c in items if c == 1)
    assert all(Path(i).parent.name == DOG for i, c in items if c == 0)
    again, _ = imagenet21k_pool(tmp_path, ID_WNIDS, _wordnet(), n_samples=3, seed=0)
    assert again == items
    draws = {
        tuple(
            str(i)
            for i, _ in imagenet21k_pool(tmp_path, ID_WNIDS, _wordnet(), n_samples=3, seed=s)[0]
        )
        for s in range(6)
    }
    assert len(draws) > 1  # the seed draws the samples
    # a class's draw does not depend on the other classes
    for path in (tmp_path / DOG).iterdir():
        path.unlink()
    (tmp_path / DOG).rmdir()
    alone, names = imagenet21k_pool(tmp_path, ID_WNIDS, _wordnet(), n_samples=3, seed=0)
    assert names == [ICE_BEAR]
    assert [i for i, _ in alone] == [i for i, c in items if c == 1]


def test_imagenet_o_release_layout(tmp_path):
    root = tmp_path / "imagenet-o"
    _class_folder(root, ICE_BEAR, 2, ".jpg")
    _class_folder(root, DOG, 3, ".jpg")
    (root / "README.txt").write_text("ImageNet-O")
    items, names = imagenet_o_images(root)
    assert names == [DOG, ICE_BEAR]
    assert [c for _, c in items] == [0, 0, 0, 1, 1]
    assert [p.name for p, _ in items][:3] == [f"{DOG}_{i}.jpg" for i in range(3)]


def test_missing_folders_are_one_error_naming_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match=f"ImageNet-21K folder {tmp_path / 'no'} does"):
        imagenet21k_pool(tmp_path / "no", ID_WNIDS, _wordnet())
    with pytest.raises(FileNotFoundError, match=f"ImageNet-O folder {tmp_path / 'o'} does"):
        imagenet_o_images(tmp_path / "o")
    _class_folder(tmp_path / "in21k", BEAR, 3)
    with pytest.raises(ValueError, match="no class is left"):
        imagenet21k_pool(tmp_path / "in21k", ID_WNIDS, _wordnet(), n_samples=3)


def test_config_takes_the_imagenet_sets_as_sources_of_the_pool(tmp_path):
    timm = {
        "models": ["m"],
        "dataset": "val",
        "imagenet21k": "in21k",
        "imagenet_o": "o",
        "wordnet": "wn/data.noun",
    }
    (tmp_path / "zoo.yaml").write_text(
        "name: t\nzoo: zoo\nsources:\n  timm: " + str(timm).replace("'", '"') + "\n"
    )
    source = load_zoo_config(tmp_path / "zoo.yaml").sources.timm
    assert source.imagenet21k == str(tmp_path / "in21k")
    assert source.imagenet_o == str(tmp_path / "o")
    assert source.wordnet == str(tmp_path / "wn" / "data.noun")
    assert source.ood is None and source.ood_samples == 200
    with pytest.raises(ValueError, match="either ood or imagenet21k"):
        parse_zoo_config({"name": "t", "zoo": "z", "sources": {"timm": {**timm, "ood": "x"}}})


def test_cli_with_a_missing_imagenet21k_folder_is_one_line_naming_it(tmp_path):
    pytest.importorskip("PIL")
    _class_folder(tmp_path / "val", BROWN_BEAR, 2)
    missing = tmp_path / "imagenet21k"
    (tmp_path / "zoo.yaml").write_text(
        f"name: t\nzoo: zoo\nsources:\n  timm: {{models: [m], dataset: val, "
        f"imagenet21k: {missing}}}\n"
    )
    done = run_cli("zoo", str(tmp_path / "zoo.yaml"), "--out", str(tmp_path / "run"))
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and str(missing) in lines[0], done.stderr


def test_imagenet_o_auroc_recomputed_from_saved_outputs(tmp_path):
    make_synthetic_zoo(tmp_path, n_members=1, n_test=200, n_ood_classes=12, mcd_members=0)
    (member,) = discover_members(tmp_path)
    extra = np.random.default_rng(3).normal(size=(37, 10))
    with np.load(member.path) as data:
        arrays = dict(data)
    np.savez(member.path, **arrays, imagenet_o_logits=extra)
    config = parse_zoo_config(
        {
            "name": "t",
            "zoo": str(tmp_path),
            "pnorm": {"t_count": 5},
            "n_bootstrap": 50,
            "cood": {"n_estimation": 12, "n_test": 4},
        }
    )
    table, _ = evaluate_member(member, config)
    z, y = arrays["test_logits"], arrays["test_labels"]
    val = declared_val_mask(y, config.val_fraction, config.seed)
    id_conf = msr(z[~val])
    expected = M.auroc_out(np.r_[np.zeros(id_conf.size), np.ones(37)], np.r_[id_conf, msr(extra)])
    rows = table[table["study"] == "imagenet_o"]
    assert set(rows["metric"]) == {"auroc_ood"}
    assert set(rows["csf"]) == set(config.cood.csfs) - {"MCD-PE"}
    msr_row = rows[rows["csf"] == "MSR"].iloc[0]
    assert msr_row["value"] == expected and msr_row["n_samples"] == 37
    shown = extra_ood_table(table)
    assert shown.loc[member.name, "MSR"] == expected
    assert extra_ood_table(table[table["study"] != "imagenet_o"]).empty


class _FakeTimm:
    """A timm-like module whose one model is linear on 8 × 8 RGB images (2 classes)."""

    def __init__(self, torch, weights: Path):
        self.torch, self.weights = torch, weights

    def create_model(self, name, pretrained=False, pretrained_cfg_overlay=None):
        torch = self.torch
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 8 * 8, 2))
        model.pretrained_cfg = {"architecture": "fake", "input_size": (3, 8, 8), "crop_pct": 1.0}
        return model


def test_timm_members_run_on_the_filtered_pool_and_imagenet_o(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    from fdbench.zoo.timm_members import timm_members

    monkeypatch.setitem(sys.modules, "timm", _FakeTimm(torch, tmp_path / "w.pth"))
    (tmp_path / "w.pth").write_bytes(b"weights")
    _class_folder(tmp_path / "val", BROWN_BEAR, 2)
    _class_folder(tmp_path / "val", TABBY, 2)
    _class_folder(tmp_path / "in21k", DOG, 4)
    _class_tar(tmp_path / "in21k", ICE_BEAR, 3)
    _class_folder(tmp_path / "in21k", BEAR, 5)
    _class_folder(tmp_path / "o", CHAIR, 2, ".jpg")
    wordnet = tmp_path / "data.noun"
    monkeypatch.setattr("fdbench.data.sources.wordnet.load_wordnet", lambda path: _wordnet())
    timm_members(
        ["fake"],
        tmp_path / "val",
        tmp_path / "zoo",
        imagenet21k=tmp_path / "in21k",
        imagenet_o=tmp_path / "o",
        wordnet=wordnet,
        weights={"fake": tmp_path / "w.pth"},
        ood_samples=3,
    )
    with np.load(tmp_path / "zoo" / "fake.npz") as z:
        assert list(z["ood_class_names"]) == [DOG, ICE_BEAR]
        np.testing.assert_array_equal(z["ood_classes"], [0, 0, 0, 1, 1, 1])
        assert z["ood_logits"].shape == (6, 2)
        assert z["imagenet_o_logits"].shape == (2, 2)
    assert pd.read_csv(tmp_path / "zoo" / "members.csv")["name"].tolist() == ["fake"]
