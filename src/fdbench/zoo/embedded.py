"""The embedded zoo: small classifiers trained here on Fashion-MNIST, written as a zoo folder.

Every member is trained on the 6 known classes of the default benchmark's semantic split
(:func:`fdbench.data.shifts.splits.semantic_split`, seed 0: the same classes as the benchmark's
``fashion_mnist`` experiment) and evaluated on an ID validation split, an ID test split and a pool
of 33 OOD classes: the 4 held-out Fashion-MNIST classes, the 10 MNIST digits, the 10
Animal-MNIST classes, the 5 texture images (32 × 32 patches resized to 28 × 28) and the 4
noise kinds of :func:`fdbench.data.sources.datasets.load_dataset`, each an OOD class of the C-OOD
severity algorithm (Galil et al., ICLR 2023, App. L). The members vary in architecture
(convnet widths, MLP depths, a small ResNet-18), training length, dropout, label smoothing,
mixup and distillation from a teacher member, so that they spread in accuracy and calibration.

Training is cached per member: its checkpoint (``checkpoints/<name>.pt``) and then its outputs
(``<name>.npz``, the zoo folder format of docs/zoo.md) are written atomically; a member whose
``.npz`` exists is skipped, one whose checkpoint exists is only re-evaluated.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fdbench.core.io import atomic_path, write_table, write_text
from fdbench.core.runner import Job, run_stage

__all__ = [
    "EMBEDDED_MEMBERS",
    "EmbeddedData",
    "MemberSpec",
    "build_embedded_zoo",
    "embedded_config",
    "embedded_data",
    "embedded_zoo_jobs",
    "train_member_job",
]

#: OOD datasets of the pool (their test splits) besides the held-out Fashion-MNIST classes.
OOD_DATASETS = ("mnist", "animal_mnist", "textures", "noise")
#: Samples per split: (train, val, test, per OOD class), full and ``quick``.
SIZES = {False: (6000, 1000, 2000, 200), True: (1500, 300, 600, 80)}
#: Known (ID) classes of the members: 6 of Fashion-MNIST's 10.
N_KNOWN = 6
#: Mini-batch size, full and ``quick`` (smaller batches give the short quick runs more steps).
BATCH_SIZE = {False: 128, True: 32}
#: MC-dropout passes (Galil et al.: 30) full and ``quick``.
MC_PASSES = {False: 30, True: 10}


@dataclass(frozen=True)
class MemberSpec:
    """One embedded member: architecture ``family`` (``convnet``: ``width`` channels in the first
    of 3 stages; ``mlp``: ``depth`` hidden layers of ``width`` units; ``resnet``: ResNet-18 of
    base ``width``), ``epochs`` of training, ``dropout`` before the hidden and final linear
    layers, ``label_smoothing``, ``mixup`` (Beta(α, α) mixing, α > 0 turns it on) and
    ``teacher`` (name of the member whose soft targets it is distilled from), ``seed``."""

    name: str
    family: str
    width: int
    epochs: int
    depth: int = 3
    dropout: float = 0.0
    label_smoothing: float = 0.0
    mixup: float = 0.0
    teacher: str | None = None
    seed: int = 0

    @property
    def regime(self) -> str:
        """The training regime of the metadata table."""
        if self.teacher is not None:
            return "distillation"
        if self.mixup > 0:
            return "mixup"
        if self.label_smoothing > 0:
            return "label_smoothing"
        return "vanilla"


def _m(name: str, family: str, width: int, epochs: int, **kw: Any) -> MemberSpec:
    return MemberSpec(name, family, width, epochs, **kw)


#: The embedded zoo (24 members; ``quick`` trains each for fewer epochs on fewer samples).
EMBEDDED_MEMBERS: tuple[MemberSpec, ...] = (
    _m("convnet_w4", "convnet", 4, 3),
    _m("convnet_w8", "convnet", 8, 3),
    _m("convnet_w16", "convnet", 16, 3),
    _m("convnet_w32", "convnet", 32, 3),
    _m("convnet_w8_e1", "convnet", 8, 1),
    _m("convnet_w16_e6", "convnet", 16, 6),
    _m("convnet_w8_drop", "convnet", 8, 3, dropout=0.3),
    _m("convnet_w16_drop", "convnet", 16, 3, dropout=0.3),
    _m("convnet_w16_drop5", "convnet", 16, 4, dropout=0.5),
    _m("convnet_w8_ls", "convnet", 8, 3, label_smoothing=0.1),
    _m("convnet_w16_ls", "convnet", 16, 3, label_smoothing=0.2),
    _m("convnet_w8_mixup", "convnet", 8, 3, mixup=0.4),
    _m("convnet_w16_mixup", "convnet", 16, 3, mixup=0.2),
    _m("convnet_w4_kd", "convnet", 4, 3, teacher="convnet_w32"),
    _m("convnet_w8_kd", "convnet", 8, 3, teacher="convnet_w32"),
    _m("mlp_d1", "mlp", 128, 3, depth=1),
    _m("mlp_d2", "mlp", 256, 3, depth=2),
    _m("mlp_d3_e1", "mlp", 64, 1, depth=3),
    _m("mlp_d2_drop", "mlp", 256, 3, depth=2, dropout=0.3),
    _m("mlp_d2_ls", "mlp", 256, 3, depth=2, label_smoothing=0.1),
    _m("mlp_d2_kd", "mlp", 256, 3, depth=2, teacher="convnet_w32"),
    _m("resnet18_w4", "resnet", 4, 2),
    _m("resnet18_w4_drop", "resnet", 4, 2, dropout=0.2),
    _m("convnet_w16_seed1", "convnet", 16, 3, seed=1),
)


@dataclass(frozen=True)
class EmbeddedData:
    """The arrays every member trains and is evaluated on (uint8 N × 28 × 28 × 1 images)."""

    class_names: tuple[str, ...]
    train: tuple[np.ndarray, np.ndarray]
    val: tuple[np.ndarray, np.ndarray]
    test: tuple[np.ndarray, np.ndarray]
    ood: tuple[np.ndarray, np.ndarray]
    ood_class_names: tuple[str, ...]


def _take(n: int, cap: int, rng: np.random.Generator) -> np.ndarray:
    return np.arange(n) if cap >= n else np.sort(rng.choice(n, cap, replace=False))


def embedded_data(
    *, quick: bool = False, seed: int = 0, data_dir: str | os.PathLike | None = None
) -> EmbeddedData:
    """The embedded zoo's data, a deterministic function of ``quick`` and ``seed``.

    Known classes: the default benchmark's semantic split (6 of 10 Fashion-MNIST classes,
    relabelled 0..5). Train and val are disjoint seeded subsets of the official training images
    of the known classes (sizes :data:`SIZES`), test a seeded subset of their official test
    images. The OOD pool holds, per class, a seeded subset of the test images of the 4 held-out
    Fashion-MNIST classes and of every class of :data:`OOD_DATASETS` (converted to 28 × 28
    grey), class ids in that order, named ``<dataset>/<class>``.
    """
    from fdbench.data.shifts.splits import relabel, semantic_split, to_format
    from fdbench.data.sources.datasets import load_dataset
    from fdbench.data.suites.fashion_mnist import SEMANTIC_FRACTION, _sub_rng

    n_train, n_val, n_test, n_ood = SIZES[bool(quick)]
    rng = np.random.default_rng(np.random.SeedSequence([seed, 26]))
    train_set = load_dataset("fashion_mnist", "train", data_dir=data_dir)
    test_set = load_dataset("fashion_mnist", "test", data_dir=data_dir)
    known, held_out = semantic_split(
        len(train_set.class_names),
        fraction=SEMANTIC_FRACTION,
        seed=_sub_rng(seed, "semantic_split"),
    )
    labels = relabel(train_set.labels, known)
    inlier = np.flatnonzero(labels >= 0)
    chosen = inlier[rng.choice(inlier.size, n_train + n_val, replace=False)]
    train_idx, val_idx = np.sort(chosen[:n_train]), np.sort(chosen[n_train:])
    test_labels = relabel(test_set.labels, known)
    test_in = np.flatnonzero(test_labels >= 0)
    test_idx = test_in[_take(test_in.size, n_test, rng)]
    pool_images, pool_classes, pool_names = [], [], []

    def add(images: np.ndarray, name: str) -> None:
        idx = _take(len(images), n_ood, rng)
        pool_images.append(to_format(images[idx], 28, 28, 1))
        pool_classes.append(np.full(idx.size, len(pool_names), dtype=np.int64))
        pool_names.append(name)

    for c in held_out:
        add(test_set.images[test_set.labels == c], f"fashion_mnist/{test_set.class_names[c]}")
    for dataset in OOD_DATASETS:
        ds = load_dataset(dataset, "test", data_dir=data_dir)
        for c, class_name in enumerate(ds.class_names):
            add(ds.images[ds.labels == c], f"{dataset}/{class_name}")
    return EmbeddedData(
        class_names=tuple(train_set.class_names[i] for i in known),
        train=(train_set.images[train_idx], labels[train_idx]),
        val=(train_set.images[val_idx], labels[val_idx]),
        test=(test_set.images[test_idx], test_labels[test_idx]),
        ood=(np.concatenate(pool_images), np.concatenate(pool_classes)),
        ood_class_names=tuple(pool_names),
    )


def _network(spec: MemberSpec, num_classes: int):
    """The member's :class:`~fdbench.models.Network` (dropout as :class:`MemberSpec` says)."""
    from torch import nn

    from fdbench.models import Network, Normalize, build_model
    from fdbench.models.dropout import dropout_layers

    if spec.family == "convnet":
        return build_model(
            "convnet",
            num_classes=num_classes,
            dropout=spec.dropout,
            dropout_placement="fc",
            width=spec.width,
            feature_dim=4 * spec.width,
        )
    if spec.family == "resnet":
        return build_model(
            "resnet18",
            num_classes=num_classes,
            dropout=spec.dropout,
            dropout_placement="head",
            base=spec.width,
        )
    if spec.family == "mlp":
        layers: list[nn.Module] = [nn.Flatten()]
        fan_in = 28 * 28
        for i in range(spec.depth):
            layers += dropout_layers(spec.dropout if i == spec.depth - 1 else 0.0)
            layers += [nn.Linear(fan_in, spec.width), nn.ReLU()]
            fan_in = spec.width
        return Network(
            nn.Sequential(*layers),
            spec.width,
            num_classes,
            normalize=Normalize((0.5,), (0.25,)),
            dropout=spec.dropout,
        )
    raise ValueError(f"family: expected 'convnet', 'mlp' or 'resnet', got {spec.family!r}")


def _soft_targets(spec: MemberSpec, labels, teacher_logits, num_classes: int):
    import torch

    onehot = torch.nn.functional.one_hot(labels, num_classes).double()
    targets = onehot * (1 - spec.label_smoothing) + spec.label_smoothing / num_classes
    if teacher_logits is not None:
        targets = 0.5 * targets + 0.5 * torch.softmax(teacher_logits / KD_TEMPERATURE, dim=1)
    return targets.float()


#: Temperature of the teacher's softened outputs (Hinton et al. 2015).
KD_TEMPERATURE = 2.0


def quick_epochs(spec: MemberSpec) -> int:
    """Epochs of a member in ``--quick``: a third of its own, at least 1."""
    return max(1, round(spec.epochs / 3))


def _train(spec: MemberSpec, data: EmbeddedData, epochs: int, batch: int, teacher_logits):
    """Train the member: SGD (Nesterov momentum 0.9, lr 0.05 cosine-annealed per batch, weight
    decay 5e-4, mini-batches of ``batch``) on the soft cross-entropy with targets
    ``(1 − ε)·onehot + ε/K`` (label smoothing ε), half of which is replaced by the teacher's
    softmax at temperature :data:`KD_TEMPERATURE` when distilled; mixup blends images and
    targets of a shuffled batch with λ ~ Beta(α, α) (Zhang et al. 2018)."""
    import torch

    from fdbench.training.loader import image_tensor

    k = len(data.class_names)
    net = _network(spec, k)
    x = image_tensor(data.train[0])
    y = torch.from_numpy(data.train[1])
    targets = _soft_targets(spec, y, teacher_logits, k)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
    steps = epochs * math.ceil(len(x) / batch)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: 0.5 * (1 + math.cos(math.pi * s / steps))
    )
    gen = torch.Generator().manual_seed(spec.seed)
    rng = np.random.default_rng(spec.seed)
    net.train()
    for _ in range(epochs):
        perm = torch.randperm(len(x), generator=gen)
        for start in range(0, len(x), batch):
            idx = perm[start : start + batch]
            xb, tb = x[idx].float(), targets[idx]
            if spec.mixup > 0:
                lam = float(rng.beta(spec.mixup, spec.mixup))
                other = torch.randperm(len(idx), generator=gen)
                xb = lam * xb + (1 - lam) * xb[other]
                tb = lam * tb + (1 - lam) * tb[other]
            loss = -(tb * torch.log_softmax(net(xb), dim=1)).sum(dim=1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
    return net.eval()


def _checkpoint(folder: Path, name: str) -> Path:
    return folder / "checkpoints" / f"{name}.pt"


def _load(path: Path, spec: MemberSpec, num_classes: int):
    import torch

    net = _network(spec, num_classes)
    net.load_state_dict(torch.load(path, weights_only=True))
    return net.eval()


def _backend(spec: MemberSpec) -> AbstractContextManager[Any]:
    """The CPU convolution backend a member trains and predicts with: PyTorch's own kernels for
    the ResNet members, oneDNN (PyTorch's default) for the rest.

    With torch 2.13's CPU build, the backward pass of the base-4 ResNet-18 on 1 × 28 × 28
    images corrupts the heap in oneDNN (``libtorch_cpu.so``: "double free or corruption",
    segmentation faults, bus errors within the first batches; ``fdbench zoo --quick`` lost
    every worker to it). Without oneDNN the same training runs clean.
    """
    import torch

    if spec.family == "resnet":
        return torch.backends.mkldnn.flags(enabled=False)
    return nullcontext()


def train_member_job(
    spec: MemberSpec, data: EmbeddedData, folder: Path, quick: bool, specs: tuple[MemberSpec, ...]
) -> Path:
    """Train (or load from its checkpoint) member ``spec`` and write ``folder/<name>.npz``.

    The checkpoint is written first, then the outputs (val, test, OOD pool; MC-dropout passes
    :data:`MC_PASSES` of every split for members with dropout), both atomically; the ``.npz``
    marks the member as done. A distilled member reads its teacher's checkpoint.
    """
    import torch

    from fdbench.training.determinism import deterministic
    from fdbench.training.inference import predict_split

    k = len(data.class_names)
    ckpt = _checkpoint(folder, spec.name)
    with deterministic(spec.seed, 1), _backend(spec):
        if ckpt.exists():
            net = _load(ckpt, spec, k)
        else:
            teacher_logits = None
            if spec.teacher is not None:
                teacher = {s.name: s for s in specs}[spec.teacher]
                tnet = _load(_checkpoint(folder, teacher.name), teacher, k)
                teacher_logits = torch.from_numpy(
                    predict_split(tnet, *data.train, kind="train", mc_samples=0).logits
                )
            epochs = quick_epochs(spec) if quick else spec.epochs
            net = _train(spec, data, epochs, BATCH_SIZE[bool(quick)], teacher_logits)
            with atomic_path(ckpt) as tmp:
                torch.save(net.state_dict(), tmp)
        passes = MC_PASSES[bool(quick)] if spec.dropout > 0 else 0
        arrays: dict[str, np.ndarray] = {}
        for split in ("val", "test", "ood"):
            images, labels = getattr(data, split)
            out = predict_split(
                net,
                images,
                np.zeros_like(labels) if split == "ood" else labels,
                kind=split,
                mc_samples=passes,
                seed=spec.seed,
            )
            arrays[f"{split}_logits"] = out.logits
            arrays[f"{split}_classes" if split == "ood" else f"{split}_labels"] = labels
            if out.mcd_logits is not None:
                arrays[f"{split}_mcd_logits"] = out.mcd_logits
    arrays["ood_class_names"] = np.asarray(data.ood_class_names)
    output = folder / f"{spec.name}.npz"
    with atomic_path(output) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
    return output


def _params(spec: MemberSpec, num_classes: int) -> int:
    return int(sum(p.numel() for p in _network(spec, num_classes).parameters()))


def embedded_zoo_jobs(
    folder: str | Path,
    data: EmbeddedData | None,
    *,
    quick: bool = False,
    specs: tuple[MemberSpec, ...] = EMBEDDED_MEMBERS,
) -> list[Job]:
    """One training job per member, distilled members after their teacher (``data`` may be
    ``None`` when every member is trained)."""
    folder = Path(folder)
    names = {s.name for s in specs}
    jobs = []
    for spec in specs:
        if spec.teacher is not None and spec.teacher not in names:
            raise ValueError(f"member {spec.name!r}: teacher {spec.teacher!r} is not a member")
        after = (f"embedded:{spec.teacher}",) if spec.teacher else ()
        args = (spec, data, folder, quick, specs)
        out = folder / f"{spec.name}.npz"
        jobs.append(Job(f"embedded:{spec.name}", train_member_job, args, out, after))
    return jobs


def embedded_config(run_dir: str | Path, *, quick: bool = False):
    """The zoo config of the embedded zoo run in ``run_dir`` (zoo folder ``run_dir/zoo``,
    members trained and evaluated on 2 worker processes; ``quick``: :func:`quick_config`, and
    C-OOD classes of the quick pool's 80 samples split 60/20, Galil et al.'s 3:1, instead of
    removed for having fewer than 150 + 50)."""
    from .config import CoodSettings, ZooConfig, quick_config

    name = "embedded_quick" if quick else "embedded"
    config = ZooConfig(name=name, zoo=str(Path(run_dir) / "zoo"), workers=2)
    if not quick:
        return config
    n_ood = SIZES[True][3]
    cood = CoodSettings(n_estimation=n_ood * 3 // 4, n_test=n_ood - n_ood * 3 // 4)
    return quick_config(config.model_copy(update={"cood": cood}))


def _pin_recipe(folder: Path, quick: bool) -> None:
    q = bool(quick)
    recipe = {"quick": q, "sizes": SIZES[q], "batch_size": BATCH_SIZE[q], "mc_passes": MC_PASSES[q]}
    text = json.dumps(recipe, sort_keys=True)
    path = folder / "embedded.json"
    if not path.exists():
        write_text(path, text)
    elif path.read_text() != text:
        raise ValueError(
            f"zoo folder {folder} holds members trained with another recipe ({path.read_text()}); "
            "use another --out folder"
        )


def build_embedded_zoo(
    folder: str | Path,
    *,
    quick: bool = False,
    specs: tuple[MemberSpec, ...] = EMBEDDED_MEMBERS,
    workers: int | None = None,
    data_dir: str | os.PathLike | None = None,
    data: EmbeddedData | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> Path:
    """Train the members not trained yet into the zoo folder ``folder`` and write its
    ``members.csv`` (name, family, params, regime, has_dropout and the recipe: width, depth,
    epochs, dropout, label_smoothing, mixup, teacher, seed, mc_passes). ``quick`` trains each
    member for a third of its epochs (:func:`quick_epochs`) in mini-batches of 32 on the
    smaller :data:`SIZES` and samples :data:`MC_PASSES` [True] MC-dropout passes. Training
    runs on ``workers`` dask worker processes when given. ``data`` replaces
    :func:`embedded_data` (tests train on tiny arrays); it is loaded only when some member is
    not trained yet. The folder's ``embedded.json`` records the recipe (``quick``, sizes,
    batch size, MC passes): a folder trained with another recipe is refused, so quick members
    never pass for full ones."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if not specs:
        raise ValueError("specs: expected at least one member")
    _pin_recipe(folder, quick)
    trained = sum((folder / f"{spec.name}.npz").exists() for spec in specs)
    if data is None and trained < len(specs):
        data = embedded_data(quick=quick, data_dir=data_dir)
    jobs = embedded_zoo_jobs(folder, data, quick=quick, specs=specs)
    run_stage("training", jobs, workers=workers, progress=progress)
    rows = []
    for spec in specs:
        row = asdict(spec)
        epochs = quick_epochs(spec) if quick else spec.epochs
        row.update(
            regime=spec.regime,
            params=_params(spec, N_KNOWN),
            has_dropout=spec.dropout > 0,
            epochs=epochs,
            mc_passes=MC_PASSES[bool(quick)] if spec.dropout > 0 else 0,
        )
        rows.append(row)
    table = pd.DataFrame(rows)
    first = ["name", "family", "params", "regime", "has_dropout"]
    table = table[first + [c for c in table.columns if c not in first]]
    path = folder / "members.csv"
    if not path.exists() or path.read_text() != table.to_csv(index=False):
        write_table(table, path)
    return folder
