"""Datasets, fetching with checksums, and construction of shifts and studies."""

from fdbench.data.datasets import DATASETS, ImageDataset, load_dataset
from fdbench.data.fetching import FetchError, fetch, fetch_all, fetch_wordnet

#: Experiment builders of Kim et al.'s benchmarks, imported on first use (``data.builder``).
_KIM_BUILDERS = ("kim_cifar100_experiments", "kim_imagenet_experiments", "kim_released_experiments")
#: FD-Shifts' builders of the robustness data sets, imported on first use: name → module.
_FDSHIFTS_BUILDERS = {
    "fdshifts_camelyon_experiments": "wilds",
    "fdshifts_iwildcam_experiments": "wilds",
    "fdshifts_breeds_experiments": "breeds",
}

__all__ = [
    "DATASETS",
    "FetchError",
    "ImageDataset",
    "fetch",
    "fetch_all",
    "fetch_wordnet",
    "load_dataset",
    *_KIM_BUILDERS,
    *_FDSHIFTS_BUILDERS,
]


def __getattr__(name: str):
    if name in _KIM_BUILDERS:
        from fdbench.data import kim_experiments

        return getattr(kim_experiments, name)
    if name in _FDSHIFTS_BUILDERS:
        from importlib import import_module

        return getattr(import_module(f"fdbench.data.{_FDSHIFTS_BUILDERS[name]}"), name)
    raise AttributeError(f"module 'fdbench.data' has no attribute {name!r}")
