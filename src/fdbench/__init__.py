"""fdbench: benchmarking failure detection of classifiers."""

__version__ = "0.1.0"
