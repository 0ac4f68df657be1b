"""Datasets, fetching with checksums, and construction of shifts and studies."""
