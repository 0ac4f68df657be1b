"""Datasets, fetching with checksums, and construction of shifts and studies."""

from fdbench.data.datasets import DATASETS, ImageDataset, load_dataset
from fdbench.data.fetching import FetchError, fetch, fetch_all

__all__ = ["DATASETS", "FetchError", "ImageDataset", "fetch", "fetch_all", "load_dataset"]
