"""Data: the types every stage passes on (:mod:`.types`), where images come from (:mod:`.sources`),
shift construction (:mod:`.shifts`) and the data sets of each paper (:mod:`.suites`)."""

from fdbench.data.sources.catalog import DATASETS
from fdbench.data.sources.datasets import load_dataset
from fdbench.data.sources.fetching import FetchError, fetch, fetch_all, fetch_wordnet
from fdbench.data.types import ImageDataset

__all__ = [
    "DATASETS",
    "FetchError",
    "ImageDataset",
    "fetch",
    "fetch_all",
    "fetch_wordnet",
    "load_dataset",
]
