"""Post-hoc scores of OpenOOD, pytorch-ood and selective classification, computed from stored
logits, penultimate features and the classifier's last layer; each declares its
hyper-parameter grid, searched on validation data only (:mod:`.search`).

Each score is one module holding its array-level function (definition and source in its
docstring) and its registration (:func:`register_posthoc`), which enters it into this list and,
as an opt-in CSF, into the list of CSFs: :func:`fdbench.csf.compute_csfs` and the default
benchmark leave these scores out; a benchmark config with ``posthoc:`` evaluates them.
"""

from __future__ import annotations

import importlib
import pkgutil

from ._base import (
    PostHocInputs,
    PostHocScore,
    grid_points,
    posthoc_score,
    posthoc_scores,
    register_posthoc,
)
from .search import SEARCH_MODES, PostHocChoice, posthoc_confidences, search_posthoc, selection_data

__all__ = [
    "SEARCH_MODES",
    "PostHocChoice",
    "PostHocInputs",
    "PostHocScore",
    "grid_points",
    "posthoc_confidences",
    "posthoc_score",
    "posthoc_scores",
    "register_posthoc",
    "search_posthoc",
    "selection_data",
]

for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_") and _module.name != "search":
        importlib.import_module(f"{__name__}.{_module.name}")
