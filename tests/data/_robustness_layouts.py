"""Small data folders in the official on-disk layouts of CAMELYON-17-WILDS, iWildCam-2020-WILDS
and BREEDS (ImageNet class folders plus the hierarchy files), written by the tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image

SIZE = 8  # side of every written image


def _png(path: Path, rng: np.random.Generator) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(rng.integers(0, 256, (SIZE, SIZE, 3), dtype=np.uint8)).save(path)


def _jpeg(path: Path, rng: np.random.Generator) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    image = rng.integers(0, 256, (SIZE, SIZE, 3), dtype=np.uint8)
    Image.fromarray(image).save(path, format="JPEG", quality=90)


#: (center, split code, rows) of the written CAMELYON-17 metadata: the ``wilds`` archive codes
#: train 0 / id_val 1 for hospitals 0, 3, 4 and 0 for hospitals 1 and 2 (re-coded on loading).
CAMELYON_ROWS = ((0, 0, 30), (3, 1, 40), (4, 1, 25), (1, 0, 12), (2, 0, 25), (3, 0, 20))
#: The validation size the tests pass as ``n_val`` (FD-Shifts: 1000).
N_VAL = 20


def write_camelyon(root: Path, seed: int = 0) -> dict:
    """``root/camelyon17_v1.0/metadata.csv`` + ``patches/``; returns the rows written."""
    rng = np.random.default_rng(seed)
    folder = root / "camelyon17_v1.0"
    lines = [",patient,node,x_coord,y_coord,tumor,slide,center,split"]
    rows = []
    i = 0
    for center, code, n in CAMELYON_ROWS:
        for k in range(n):
            patient, node, x, y = 10 * center + k % 3, k % 5, 32 * k, 64 * center
            tumor = int(rng.integers(0, 2))
            lines.append(f"{i},{patient:03d},{node},{x},{y},{tumor},{k % 7},{center},{code}")
            stem = f"patient_{patient:03d}_node_{node}"
            _png(folder / "patches" / stem / f"patch_{stem}_x_{x}_y_{y}.png", rng)
            rows.append((center, code, tumor))
            i += 1
    (folder / "metadata.csv").write_text("\n".join(lines) + "\n")
    return {"rows": rows}


IWILDCAM_CLASSES = ("empty", "deer", "fox", "bird", "rabbit")
#: (split, rows, location) of the written iWildCam metadata.
IWILDCAM_ROWS = (("train", 60, 0), ("id_test", 150, 1), ("test", 30, 7), ("val", 5, 8),
                 ("id_val", 5, 2))  # fmt: skip


def write_iwildcam(root: Path, seed: int = 0) -> dict:
    """``root/iwildcam_v2.0/{metadata.csv, categories.csv, train/*.jpg}``; returns labels."""
    rng = np.random.default_rng(seed)
    folder = root / "iwildcam_v2.0"
    folder.mkdir(parents=True)
    lines = [",split,location_remapped,location,sequence,datetime,y,category_id,filename,image_id"]
    labels: dict[str, list[int]] = {}
    i = 0
    for split, n, location in IWILDCAM_ROWS:
        for _ in range(n):
            y = int(rng.integers(0, len(IWILDCAM_CLASSES)))
            name = f"{i:08x}.jpg"
            lines.append(f"{i},{split},{location},{100 + location},s{i},2013-01-01,{y},{y},{name},"
                         f"id{i}")  # fmt: skip
            _jpeg(folder / "train" / name, rng)
            labels.setdefault(split, []).append(y)
            i += 1
    (folder / "metadata.csv").write_text("\n".join(lines) + "\n")
    cats = ["y,category_id,name"] + [f"{y},{y},{n}" for y, n in enumerate(IWILDCAM_CLASSES)]
    (folder / "categories.csv").write_text("\n".join(cats) + "\n")
    return {"labels": labels}


#: Two superclasses at depth 3 (``n1000000x``), each with 20 ImageNet leaves directly below.
BREEDS_SUPERS = ("n10000001", "n10000002")


def breeds_leaves(s: int) -> list[str]:
    return [f"n2{s}{k:06d}" for k in range(20)]


def write_breeds_hierarchy(folder: Path) -> None:
    """The three BREEDS files for root → n0000001 → n0000002 → the two superclasses → leaves;
    a third depth-3 node with 3 leaves is too small for ENTITY-13."""
    folder.mkdir(parents=True, exist_ok=True)
    edges = ["n00001740 n00000001", "n00000001 n00000002"]
    edges += [f"n00000002 {s}" for s in (*BREEDS_SUPERS, "n10000003")]
    info = []
    for s_i, s in enumerate(BREEDS_SUPERS):
        for leaf in breeds_leaves(s_i):
            edges.append(f"{s} {leaf}")
            info.append([len(info), leaf, f"leaf {leaf}"])
    for k in range(3):
        edges.append(f"n10000003 n29{k:06d}")
        info.append([len(info), f"n29{k:06d}", "small"])
    (folder / "class_hierarchy.txt").write_text("\n".join(edges) + "\n")
    names = ["n00001740\tentity", "n00000001\tlevel one", "n00000002\tlevel two",
             "n10000001\tgarment", "n10000002\tbird", "n10000003\tsmall"]  # fmt: skip
    (folder / "node_names.txt").write_text("\n".join(names) + "\n")
    (folder / "dataset_class_info.json").write_text(json.dumps(info))


def write_breeds(root: Path, per_class: int = 4, seed: int = 0) -> None:
    """``root/breeds/`` hierarchy files and ``root/imagenet/train/<wnid>/*.JPEG``."""
    rng = np.random.default_rng(seed)
    write_breeds_hierarchy(root / "breeds")
    for s_i in range(len(BREEDS_SUPERS)):
        for leaf in breeds_leaves(s_i):
            for k in range(per_class):
                _jpeg(root / "imagenet" / "train" / leaf / f"{leaf}_{k}.JPEG", rng)
