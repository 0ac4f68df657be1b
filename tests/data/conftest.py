"""Fixtures for the data tests: real datasets fetched once per session into the user's cache."""

from __future__ import annotations

import pytest

from fdbench.data import FetchError, fetch, load_dataset


@pytest.fixture(scope="session")
def fetched():
    """Return a loader ``(name, split) -> ImageDataset`` that fetches on first use or skips."""
    failures: dict[str, str] = {}

    def get(name: str, split: str = "test"):
        if name in failures:
            pytest.skip(failures[name])
        try:
            fetch(name, progress=False)
        except FetchError as exc:
            failures[name] = f"could not fetch {name}: {exc}"
            pytest.skip(failures[name])
        return load_dataset(name, split)

    return get


@pytest.fixture(scope="session")
def wordnet():
    """The real WordNet 3.0 noun database, fetched once into the user's cache, or a skip."""
    from fdbench.data.sources.wordnet import load_wordnet

    try:
        return load_wordnet()
    except FetchError as exc:
        pytest.skip(f"could not fetch WordNet: {exc}")
