"""Set-up shared by every test of the suite."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Register fdbench's built-in training methods before any test runs.

    The analysis names scoring methods with the display prefixes the training methods hand it
    when they register (:func:`fdbench.analysis.scoring_methods.register_method_prefix`:
    ``deepgamblers`` -> DG-MSR, ``ce`` -> MSR). The benchmark, ``fdbench report`` and the zoo
    import the methods before they analyse; tests that call the analysis directly would
    otherwise name them by whichever earlier test happened to import the methods.
    """
    import fdbench.training.methods  # noqa: F401
