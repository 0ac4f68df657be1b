"""Writes a run directory in FD-Shifts' layout (``test_results`` + ``hydra/config.yaml``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

K, S, D = 5, 4, 8

#: Images per (corruption type, intensity) cell of the noise study by default.
NOISE_PER_CELL = 2
#: dataset_idx -> number of samples: validation set, i.i.d. test set, corruption set (FD-Shifts'
#: noise study: 15 types × 5 intensities × NOISE_PER_CELL), new-class.
SIZES = {0: 30, 1: 40, 2: 15 * 5 * NOISE_PER_CELL, 3: 20}

#: An FD-Shifts Hydra config as the tool saves it (interpolations unresolved).
CONFIG = """\
data:
  dataset: cifar10
  num_classes: 5
eval:
  ext_confid_name: dg
  val_tuning: true
  query_studies:
    iid_study: ${data.dataset}
    noise_study:
      - corrupt_cifar10
    in_class_study: []
    new_class_study:
      - dataset: svhn
test:
  name: test_results
  dir: ${exp.dir}/${test.name}
"""


def write_fd_shifts_run(
    experiment: Path,
    rng: np.random.Generator,
    *,
    config: bool = True,
    noise_size: int = SIZES[2],
) -> dict:
    """Write ``experiment/test_results`` as FD-Shifts' ConfidMonitor does (float16 arrays), and
    ``experiment/hydra/config.yaml`` if ``config``; return the arrays written. The noise study
    (dataset_idx 2) has ``noise_size`` samples."""
    results = experiment / "test_results"
    results.mkdir(parents=True)
    sizes = {**SIZES, 2: noise_size}
    dataset_idx = np.concatenate([np.full(n, i) for i, n in sizes.items()])
    n = dataset_idx.size
    labels = rng.integers(0, K, n)
    logits = rng.normal(size=(n, K)) * 3
    logits[np.arange(n), labels] += rng.normal(1.0, 1.0, n)
    raw = np.concatenate([logits, labels[:, None], dataset_idx[:, None]], axis=1)
    np.savez_compressed(results / "raw_logits.npz", raw.astype(np.float16))
    dist = (logits[:, :, None] + rng.normal(size=(n, K, S))).astype(np.float16)
    np.savez_compressed(results / "raw_logits_dist.npz", dist)
    ext = rng.random(n).astype(np.float16)
    np.savez_compressed(results / "external_confids.npz", ext)
    ext_dist = rng.random((n, S)).astype(np.float16)
    np.savez_compressed(results / "external_confids_dist.npz", ext_dist)
    feats = rng.normal(size=(n, D))
    np.savez_compressed(
        results / "encoded_output.npz",
        np.concatenate([feats, dataset_idx[:, None]], axis=1).astype(np.float16),
    )
    train_labels = np.repeat(np.arange(K), 12)
    train = rng.normal(size=(train_labels.size, D)) + train_labels[:, None]
    np.savez_compressed(
        results / "train_features.npz",
        np.concatenate([train, train_labels[:, None]], axis=1).astype(np.float16),
    )
    w, b = rng.normal(size=(K, D)), rng.normal(size=K)
    np.savez(results / "last_layer.npz", w, b)
    if config:
        (experiment / "hydra").mkdir()
        (experiment / "hydra" / "config.yaml").write_text(CONFIG)
    return {
        "raw": raw.astype(np.float16),
        "dist": dist,
        "ext": ext,
        "ext_dist": ext_dist,
        "w": w,
        "b": b,
        "train": train.astype(np.float16),
    }
