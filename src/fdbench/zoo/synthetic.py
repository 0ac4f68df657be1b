"""A generated zoo folder of saved logits, for tests and the scale benchmark (no training)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

__all__ = ["make_synthetic_zoo"]

FAMILIES = ("convnet", "resnet", "vit", "mlp")
REGIMES = ("vanilla", "distillation", "label_smoothing", "mixup")


def _logits(
    rng: np.random.Generator, labels: np.ndarray, n_classes: int, signal: float, scale: float
) -> np.ndarray:
    z = rng.standard_normal((labels.size, n_classes))
    z[np.arange(labels.size), labels] += signal
    return z * scale


def make_synthetic_zoo(
    folder: str | Path,
    *,
    n_members: int = 6,
    n_test: int = 500,
    n_val: int = 0,
    n_classes: int = 10,
    n_ood_classes: int = 30,
    n_ood_per_class: int = 20,
    mcd_members: int = 1,
    mcd_passes: int = 5,
    seed: int = 0,
) -> Path:
    """Write ``n_members`` ``.npz`` members and a ``members.csv`` into ``folder``.

    Member i's logits are ``scale · (noise + signal · onehot(label))``: its signal sets the
    accuracy and its scale the over- or under-confidence, both drawn per member, so the zoo
    spreads in accuracy and calibration. OOD class c's samples get an extra pull of a drawn
    strength towards one ID class, so the OOD classes spread in severity. With ``n_val == 0``
    the members carry no validation split (the job then declares one). The first
    ``mcd_members`` members also store ``mcd_passes`` noisy MC-dropout passes of every split.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    test_labels = rng.integers(0, n_classes, n_test)
    val_labels = rng.integers(0, n_classes, n_val)
    ood_classes = np.repeat(np.arange(n_ood_classes), n_ood_per_class)
    pull = rng.uniform(0.0, 3.0, n_ood_classes)
    target = rng.integers(0, n_classes, n_ood_classes)
    rows = []
    for i in range(n_members):
        signal = float(rng.uniform(1.0, 4.0))
        scale = float(rng.uniform(0.5, 3.0))
        arrays = {
            "test_logits": _logits(rng, test_labels, n_classes, signal, scale),
            "test_labels": test_labels,
            "ood_logits": _logits(rng, target[ood_classes], n_classes, 0.0, scale),
            "ood_classes": ood_classes,
        }
        arrays["ood_logits"][np.arange(ood_classes.size), target[ood_classes]] += (
            pull[ood_classes] * scale
        )
        if n_val:
            arrays["val_logits"] = _logits(rng, val_labels, n_classes, signal, scale)
            arrays["val_labels"] = val_labels
        if i < mcd_members:
            for split in ("test", "val", "ood") if n_val else ("test", "ood"):
                base = arrays[f"{split}_logits"]
                noise = rng.standard_normal((base.shape[0], mcd_passes, n_classes)) * 0.3 * scale
                arrays[f"{split}_mcd_logits"] = base[:, None, :] + noise
        name = f"m{i:03d}"
        np.savez(folder / f"{name}.npz", **arrays)
        rows.append(
            {
                "name": name,
                "family": FAMILIES[i % len(FAMILIES)],
                "params": int(1e5 * (1 + i)),
                "regime": REGIMES[(i // len(FAMILIES)) % len(REGIMES)],
                "has_dropout": i < mcd_members,
            }
        )
    (folder / "members.json").write_text(json.dumps(rows, indent=1))
    return folder
