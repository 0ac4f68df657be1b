"""Data: the types every stage passes on (:mod:`.types`), where images come from (:mod:`.sources`),
shift construction (:mod:`.shifts`) and the data sets of each paper (:mod:`.suites`)."""

from fdbench.data.sources.catalog import DATASETS
from fdbench.data.sources.datasets import load_dataset
from fdbench.data.sources.fetching import FetchError, fetch, fetch_all, fetch_wordnet
from fdbench.data.types import ImageDataset

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
        from fdbench.data.suites import kim as kim_experiments

        return getattr(kim_experiments, name)
    if name in _FDSHIFTS_BUILDERS:
        from importlib import import_module

        return getattr(import_module(f"fdbench.data.suites.{_FDSHIFTS_BUILDERS[name]}"), name)
    raise AttributeError(f"module 'fdbench.data' has no attribute {name!r}")
