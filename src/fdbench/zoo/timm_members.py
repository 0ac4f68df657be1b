"""Pretrained timm classifiers as zoo members, run on an image folder (ImageNet val layout).

timm is only in the optional ``zoo`` extra: installing it from PyPI pulls torchvision, whose
PyPI wheels pull a CUDA build of PyTorch; install a CPU ``torchvision`` from PyTorch's CPU index
first where that matters. Weights come only from a given file or the local caches (Hugging
Face hub cache, ``torch.hub`` checkpoints); a model without local weights is one ``ValueError``
naming it, never a download.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fdbench.core.io import atomic_path, write_table

from .imagenet_ood import imagenet21k_pool, imagenet_o_images, open_image

__all__ = ["image_folder", "import_timm", "load_timm_model", "timm_members"]

IMAGE_SUFFIXES = (".jpeg", ".jpg", ".png", ".bmp", ".webp")
#: Name tags of timm models → the training regime of members.csv (first match wins).
REGIME_TAGS = (
    ("distill", "distillation"),
    ("adv", "adversarial"),
    ("in21k", "pretraining"),
    ("in22k", "pretraining"),
    ("ssl", "semi_supervised"),
    ("swsl", "semi_supervised"),
)


def import_timm() -> Any:
    """The ``timm`` module, or one ``ImportError`` saying how to install it."""
    try:
        import timm
    except ImportError as error:
        raise ImportError(
            "timm members need the timm package: pip install timm (or fdbench's 'zoo' extra; "
            "its PyPI dependency torchvision pulls a CUDA PyTorch unless torchvision comes "
            "from PyTorch's CPU index)"
        ) from error
    return timm


@contextmanager
def _offline() -> Iterator[None]:
    """Hugging Face hub in offline mode for the block (no network access by timm)."""
    keys = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    old = {k: os.environ.get(k) for k in keys}
    os.environ.update(dict.fromkeys(keys, "1"))
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _cached_weights(cfg: Mapping[str, Any]) -> Path | None:
    """The local file of a pretrained config's weights: the Hugging Face hub cache
    (``hf_hub_id``) or ``torch.hub``'s checkpoint folder (``url``); ``None`` if absent."""
    hub_id = cfg.get("hf_hub_id")
    if hub_id:
        try:
            from huggingface_hub import try_to_load_from_cache
        except ImportError:
            try_to_load_from_cache = None
        if try_to_load_from_cache is not None:
            repo, _, revision = str(hub_id).partition("@")
            for filename in ("model.safetensors", "pytorch_model.bin"):
                found = try_to_load_from_cache(repo, filename, revision=revision or None)
                if isinstance(found, str) and os.path.isfile(found):
                    return Path(found)
    url = cfg.get("url")
    if url:
        import torch

        candidate = Path(torch.hub.get_dir()) / "checkpoints" / os.path.basename(str(url))
        if candidate.is_file():
            return candidate
    return None


def load_timm_model(name: str, *, weights: str | os.PathLike[str] | None = None) -> Any:
    """timm model ``name`` in eval mode with pretrained weights from ``weights`` (a file) or
    the local cache, loaded through timm's ``pretrained_cfg_overlay`` ``file`` with the
    Hugging Face hub offline. Raises ``ValueError`` naming the model when no local weights
    exist (never downloads) and when timm does not know the name."""
    timm = import_timm()
    with _offline():
        try:
            bare = timm.create_model(name, pretrained=False)
        except RuntimeError as error:  # timm: "Unknown model (...)"
            raise ValueError(f"timm model {name!r}: {error}") from None
        if weights is not None:
            path = Path(weights)
            if not path.is_file():
                raise ValueError(f"timm model {name!r}: weights file {path} does not exist")
        else:
            path = _cached_weights(dict(getattr(bare, "pretrained_cfg", {}) or {}))
            if path is None:
                raise ValueError(
                    f"timm model {name!r}: no pretrained weights in the local cache; download "
                    "them once elsewhere or give a weights file (fdbench does not download)"
                )
        model = timm.create_model(name, pretrained=True, pretrained_cfg_overlay={"file": str(path)})
    return model.eval()


def image_folder(root: str | Path, *, max_per_class: int | None = None) -> tuple[list, list]:
    """Image paths and class names of a folder in ImageNet val layout: one sub-folder per
    class, classes sorted by folder name (ids 0..C−1; for ImageNet's synset folders this is
    the standard class order); ``max_per_class`` keeps the first images of each class."""
    root = Path(root)
    if not root.is_dir():
        raise NotADirectoryError(f"image folder {root} does not exist")
    classes = sorted(p.name for p in root.iterdir() if p.is_dir())
    if not classes:
        raise ValueError(f"image folder {root}: expected one sub-folder per class")
    items = []
    for c, name in enumerate(classes):
        files = sorted(p for p in (root / name).iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        items += [(p, c) for p in files[:max_per_class]]
    return items, classes


def _preprocess(path: Any, cfg: Mapping[str, Any]) -> np.ndarray:
    """timm's evaluation transform: resize the shorter side to ``size / crop_pct``, centre
    crop ``size``, scale to [0, 1] and normalise by the config's mean and std (C × H × W).
    ``path``: an image file or an image in a tar (:func:`fdbench.zoo.imagenet_ood.open_image`)."""
    from PIL import Image

    _, height, width = cfg.get("input_size", (3, 224, 224))
    crop_pct = float(cfg.get("crop_pct", 0.875))
    resample = Image.BICUBIC if cfg.get("interpolation") == "bicubic" else Image.BILINEAR
    with open_image(path) as img:
        img = img.convert("RGB")
        scale = max(height, width) / crop_pct / min(img.size)
        img = img.resize((round(img.size[0] * scale), round(img.size[1] * scale)), resample)
        left, top = (img.size[0] - width) // 2, (img.size[1] - height) // 2
        x = np.asarray(img.crop((left, top, left + width, top + height)), dtype=np.float32)
    x = (x / 255.0 - np.asarray(cfg.get("mean", (0.485, 0.456, 0.406)), np.float32)) / np.asarray(
        cfg.get("std", (0.229, 0.224, 0.225)), np.float32
    )
    return x.transpose(2, 0, 1)


def _logits(model: Any, items: list, batch_size: int) -> np.ndarray:
    import torch

    cfg = dict(getattr(model, "pretrained_cfg", {}) or {})
    parts = []
    with torch.inference_mode():
        for start in range(0, len(items), batch_size):
            batch = np.stack([_preprocess(p, cfg) for p, _ in items[start : start + batch_size]])
            parts.append(model(torch.from_numpy(batch)).double().numpy())
    return np.concatenate(parts)


def _regime(name: str) -> str:
    lowered = name.lower()
    return next((regime for tag, regime in REGIME_TAGS if tag in lowered), "vanilla")


def timm_members(
    models: list[str],
    dataset: str | Path,
    folder: str | Path,
    *,
    ood: str | Path | None = None,
    weights: Mapping[str, str | os.PathLike[str]] | None = None,
    max_per_class: int | None = None,
    batch_size: int = 64,
    imagenet21k: str | Path | None = None,
    imagenet_o: str | Path | None = None,
    wordnet: str | Path | None = None,
    ood_samples: int = 200,
    seed: int = 0,
) -> list[str]:
    """Run every timm model of ``models`` on ``dataset`` (ID test images, ImageNet val layout)
    and the OOD pool and write ``folder/<model>.npz`` members (``test_*``, ``ood_*`` with class
    names; no validation split, so the zoo job declares one).

    The OOD pool is ``ood`` (one sub-folder per OOD class) or ``imagenet21k``, an ImageNet-21K
    copy cleaned and sampled as Galil et al. do (:func:`fdbench.zoo.imagenet_ood.imagenet21k_pool`:
    ImageNet-1K classes, i.e. the class folders of ``dataset``, and their WordNet hypernyms and
    hyponyms removed, ``ood_samples`` images per class drawn with ``seed``; ``wordnet``: a
    WordNet 3.0 ``data.noun``, default fdbench's cached copy). ``imagenet_o`` (the ImageNet-O
    release, :func:`fdbench.zoo.imagenet_ood.imagenet_o_images`) adds ``imagenet_o_logits``,
    the extra OOD set the zoo evaluates as a whole.
    A member already in ``folder`` (with its ``members.csv`` row) is skipped without loading
    the model. ``weights`` maps model names to weight files;
    other models read the local cache (:func:`load_timm_model`). Rows of ``members.csv``
    (family = the model's architecture, params, regime from the name's tags
    :data:`REGIME_TAGS`, has_dropout = false) replace those of the same name."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    weights = dict(weights or {})
    if ood is not None and imagenet21k is not None:
        raise ValueError("give either ood or imagenet21k as the OOD pool, not both")
    test_items, test_names = image_folder(dataset, max_per_class=max_per_class)
    extra_items = imagenet_o_images(imagenet_o)[0] if imagenet_o is not None else []
    if imagenet21k is not None and not Path(imagenet21k).is_dir():
        raise FileNotFoundError(f"ImageNet-21K folder {imagenet21k} does not exist")

    @functools.cache
    def ood_pool() -> tuple[list, list]:
        """The OOD pool, read once and only when some member is computed (ImageNet-21K's
        listing and filtering take a while)."""
        if imagenet21k is not None:
            from fdbench.data.sources.wordnet import load_wordnet

            return imagenet21k_pool(
                imagenet21k, test_names, load_wordnet(wordnet), n_samples=ood_samples, seed=seed
            )
        return image_folder(ood, max_per_class=max_per_class) if ood else ([], [])

    path = folder / "members.csv"
    old = pd.read_csv(path) if path.exists() else pd.DataFrame({"name": []})
    known = {str(row["name"]): row for row in old.to_dict("records")}
    rows = []
    for name in models:
        safe = name.replace("/", "_")
        output = folder / f"{safe}.npz"
        if output.exists() and safe in known:
            rows.append(known[safe])
            continue
        model = load_timm_model(name, weights=weights.get(name))
        if not output.exists():
            ood_items, ood_names = ood_pool()
            arrays = {
                "test_logits": _logits(model, test_items, batch_size),
                "test_labels": np.asarray([c for _, c in test_items], dtype=np.int64),
            }
            if ood_items:
                arrays["ood_logits"] = _logits(model, ood_items, batch_size)
                arrays["ood_classes"] = np.asarray([c for _, c in ood_items], dtype=np.int64)
                arrays["ood_class_names"] = np.asarray(ood_names)
            if extra_items:
                arrays["imagenet_o_logits"] = _logits(model, extra_items, batch_size)
            with atomic_path(output) as tmp, open(tmp, "wb") as fh:
                np.savez(fh, **arrays)
        cfg = dict(getattr(model, "pretrained_cfg", {}) or {})
        rows.append(
            {
                "name": safe,
                "family": cfg.get("architecture", name.split(".")[0]),
                "params": int(sum(p.numel() for p in model.parameters())),
                "regime": _regime(name),
                "has_dropout": False,
                "source": f"timm:{name}",
            }
        )
    table = pd.DataFrame(rows)
    kept = old[~old["name"].astype(str).isin(table["name"])]
    table = pd.concat([kept, table]) if len(kept) else table
    write_table(table, path)
    return [row["name"] for row in rows]
