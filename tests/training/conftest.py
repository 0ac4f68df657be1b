"""A tiny synthetic experiment (8 × 8 grey images, 3 classes) for fast training tests."""

import numpy as np
import pytest

from fdbench.data.types import Experiment, ImageDataset, Study, StudyKind
from fdbench.jobs.plan import parse_config

CLASSES = ("a", "b", "c")


def _images(labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Class c lights up row block c, plus noise: learnable within one epoch."""
    x = rng.integers(0, 60, size=(len(labels), 8, 8, 1))
    for c in range(len(CLASSES)):
        x[labels == c, 2 * c : 2 * c + 3, :, 0] += 150
    return x.clip(0, 255).astype(np.uint8)


def make_experiment(seed: int = 0, n_train: int = 96) -> Experiment:
    rng = np.random.default_rng(seed)

    def dataset(n):
        y = rng.integers(0, len(CLASSES), size=n).astype(np.int64)
        return ImageDataset("tiny", _images(y, rng), y, CLASSES)

    train, val, test = dataset(n_train), dataset(30), dataset(20)
    new = rng.integers(0, 255, size=(7, 8, 8, 1)).astype(np.uint8)
    studies = (
        Study("iid", StudyKind.IID, test.images, test.labels),
        Study(
            "corruption/noise/1",
            StudyKind.CORRUPTION,
            255 - test.images,
            test.labels,
            severity=1,
            corruption="noise",
        ),
        Study("new_class/noise", StudyKind.NEW_CLASS_NONSEMANTIC, new, np.full(7, -1)),
    )
    return Experiment("tiny", CLASSES, train, val, studies)


def tiny_config(**overrides):
    data = {
        "name": "tiny",
        "data": {"builder": "fashion_mnist_experiments", "args": {"quick": True}},
        "architecture": {"name": "convnet", "dropout": 0.3, "dropout_placement": "fc",
                         "options": {"width": 2, "feature_dim": 6}},
        "training": {"epochs": 1, "batch_size": 32, "lr": 0.05, "threads": 1},
        "inference": {"mc_samples": 4, "batch_size": 16, "max_train_samples": 40},
        "methods": [
            {"name": "ce", "kind": "ce", "seeds": [0], "params": {"dropout": True}},
            {"name": "dg", "kind": "deepgamblers", "seeds": [0],
             "params": {"reward": 2.0, "pretrain_epochs": 0}},
            {"name": "dv", "kind": "devries", "seeds": [0]},
            {"name": "cn", "kind": "confidnet", "seeds": [0],
             "params": {"base": "ce", "epochs": 1, "hidden": 5, "depth": 2}},
            {"name": "grid", "kind": "ce", "seeds": [0], "grid": {"lr": [0.01, 0.1]}},
            {"name": "cnft", "kind": "confidnet", "seeds": [0],
             "params": {"base": "ce", "epochs": 1, "hidden": 5, "depth": 2,
                        "finetune_epochs": 1, "finetune_lr": 0.01}},
        ],
    }  # fmt: skip
    data.update(overrides)
    return parse_config(data)


@pytest.fixture(scope="session")
def experiment() -> Experiment:
    return make_experiment()


@pytest.fixture(scope="session")
def config():
    return tiny_config()


@pytest.fixture(scope="session")
def make_config():
    return tiny_config
