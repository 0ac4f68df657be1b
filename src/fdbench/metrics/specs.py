"""The one list of metrics: a :class:`MetricSpec` per metric, built-in or plug-in.

Every fact fdbench holds about a metric is a field of its spec: which direction is better, how
tables show it (label, ×1000 scale), what it needs (0/1 residuals, labels, logits), whether the
bootstrap resamples it, whether the evaluation attaches a bootstrap interval to it, and the
function. :func:`fdbench.metrics.evaluate_all`, the bootstrap, the evaluation, the analysis
(directions), the console and the report read these fields (:func:`metric_specs`,
:func:`metric_spec`) and nothing else; no stage decides by a metric's name.

Built-in metrics enter the list below; plug-in metrics of other packages enter the same list
through :func:`register_metric` or the entry-point group ``fdbench.metrics``
(:data:`ENTRY_POINT_GROUP`)::

    # mypkg/metrics.py
    from fdbench.metrics import register_metric

    @register_metric("risk@50cov", label="Risk@50", higher_is_better=False)
    def risk_at_half(residuals, confidence):
        order = np.argsort(-confidence, kind="stable")
        return float(residuals[order[: len(order) // 2]].mean())

    # pyproject.toml of mypkg
    [project.entry-points."fdbench.metrics"]
    risk50 = "mypkg.metrics:risk_at_half"

A plug-in metric is computed by :func:`~fdbench.metrics.evaluate_all` after the built-ins, so
``fdbench evaluate``, the benchmark, its analysis and its report show it as any other metric.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from fdbench.core.plugins import load_entry_points

from .calibration import ece, mce
from .conventions import (
    aurc_per_sample,
    auroc_f_ordered,
    coverage_at_accuracy_first_drop,
    fpr_at_tpr_ood_positive,
)
from .ranking import ap_f_error, ap_f_success, auroc_f, auroc_out, fpr_at_tpr, fpr_at_tpr_out
from .scoring import balanced_accuracy, brier, nll
from .selective import (
    augrc,
    augrc_ba,
    aurc,
    aurc_ba,
    coverage_at_risk,
    eaugrc,
    eaurc,
    min_selective_risk_at_coverage,
    naurc,
    selective_risk_at_coverage,
)

__all__ = [
    "COMPUTED_BY",
    "ENTRY_POINT_GROUP",
    "RESIDUALS",
    "MetricSpec",
    "add_metric",
    "builtin_metric_specs",
    "find_metric",
    "metric_bounds",
    "metric_spec",
    "metric_specs",
    "register_metric",
]

#: Entry-point group through which other packages register metrics (:func:`register_metric`).
ENTRY_POINT_GROUP = "fdbench.metrics"

#: Which stage computes a metric: ``"suite"``, :func:`fdbench.metrics.evaluate_all` (plug-ins
#: included); ``"ood"``, the evaluation's OoD-detection metrics of the unknown-detection
#: protocol (Kim et al.); ``"binary_protocol"``, the evaluation under the binary protocol
#: (Bernhardt et al.); ``"zoo"``, the model-zoo study (Galil et al.); ``"conventions"``,
#: :func:`fdbench.metrics.evaluate_conventions` (the authors' code conventions, asked for by
#: name).
COMPUTED_BY = ("suite", "ood", "binary_protocol", "zoo", "conventions")

#: For which residuals a suite metric is a key of :func:`~fdbench.metrics.evaluate_all`:
#: ``"any"``; ``"binary"``, 0/1 residuals only (``accuracy``); ``"soft"``, soft residuals only
#: (``mean_residual``, the accuracy's counterpart).
RESIDUALS = ("any", "binary", "soft")


@dataclass(frozen=True)
class MetricSpec:
    """One metric and every fact about it.

    ``name``
        The key in results tables (``metric`` column) and configurations.
    ``label``
        Its name in tables and figures (``"AURC"``).
    ``higher_is_better``
        Its direction (rankings, significance, model selection, best cells).
    ``function``
        The single function computing it (``None`` where only its stage computes it, e.g.
        ``accuracy`` = 1 − weighted mean residual); a plug-in's ``function(residuals,
        confidence, **kw)``, with ``labels=``/``logits=`` where it needs them and
        ``sample_weight=`` where weights are given.
    ``scale``
        The factor every table shows it with: 1000 for areas under risk curves (AURC, AUGRC and
        their excess and balanced variants, as the papers print them), else 1.
    ``fraction``
        A proportion in [0, 1], which tables of scoring methods may show in per cent.
    ``binary_only``
        Defined for 0/1 residuals only (NaN for soft residuals).
    ``residuals``
        One of :data:`RESIDUALS`.
    ``needs_labels`` / ``needs_logits``
        Computed only where class labels (and logits) are given.
    ``bootstrappable``
        :func:`fdbench.metrics.bootstrap` resamples it (the built-ins' vectorised kernels).
    ``interval``
        The evaluation attaches a bootstrap interval (``std``, ``ci_lower``, ``ci_upper``) to
        it when asked for resamples.
    ``computed_by``
        One of :data:`COMPUTED_BY`.
    ``bounds``
        The closed interval its value lies in by its definition (METRICS.md), checked where a
        results table enters from a user (``fdbench report``): rates, areas under ROC/PR
        curves, coverages, accuracies and calibration errors in [0, 1]; the AURC family and
        selective risks in [0, inf) (residuals are non-negative and may exceed 1, e.g. the
        balanced-accuracy error); NLL in [0, inf); the Brier score of a probability vector in
        [0, 2]; unbounded (the default) where the definition gives no interval.
    ``plugin``
        Registered by another package (:func:`register_metric`).
    """

    name: str
    label: str
    higher_is_better: bool
    function: Callable[..., float] | None = None
    scale: float = 1.0
    fraction: bool = False
    binary_only: bool = False
    residuals: str = "any"
    needs_labels: bool = False
    needs_logits: bool = False
    bootstrappable: bool = False
    interval: bool = False
    computed_by: str = "suite"
    bounds: tuple[float, float] = (-math.inf, math.inf)
    plugin: bool = False

    def __post_init__(self) -> None:
        for value, what in ((self.name, "name"), (self.label, "label")):
            if not isinstance(value, str) or not value.strip() or value != value.strip():
                raise ValueError(
                    f"{what} must be a non-empty str without surrounding spaces, got {value!r}"
                )
        if not isinstance(self.higher_is_better, bool):
            raise TypeError(
                f"higher_is_better of metric {self.name!r} must be a bool, "
                f"got {type(self.higher_is_better).__name__}"
            )
        if self.residuals not in RESIDUALS:
            raise ValueError(f"residuals must be one of {RESIDUALS}, got {self.residuals!r}")
        if self.computed_by not in COMPUTED_BY:
            raise ValueError(f"computed_by must be one of {COMPUTED_BY}, got {self.computed_by!r}")
        if isinstance(self.scale, bool) or not isinstance(self.scale, (int, float)):
            raise TypeError(f"scale of metric {self.name!r} must be a number, got {self.scale!r}")
        if not self.scale > 0:
            raise ValueError(f"scale of metric {self.name!r} must be positive, got {self.scale}")
        low, high = self.bounds
        if math.isnan(low) or math.isnan(high) or low > high:
            raise ValueError(
                f"bounds of metric {self.name!r} must be an interval, got {self.bounds}"
            )
        if self.needs_logits and not self.needs_labels:
            raise ValueError(f"metric {self.name!r}: needs_logits also needs labels")
        if self.plugin and (not callable(self.function) or self.bootstrappable):
            raise ValueError(f"plug-in metric {self.name!r} needs a function and no kernel")

    @property
    def bounded(self) -> bool:
        """Whether the definition bounds the value (:attr:`bounds` not the whole real line)."""
        return self.bounds != (-math.inf, math.inf)

    def heading(self, *, per_cent: bool = False) -> str:
        """The column heading of a table: the label and the factor its values are shown
        with (``"AURC ×1000"``; ``"AUROC_f ×100"`` with ``per_cent`` for a fraction)."""
        factor = self.factor(per_cent=per_cent)
        return self.label if factor == 1 else f"{self.label} ×{factor:g}"

    def factor(self, *, per_cent: bool = False) -> float:
        """The factor a table shows values with: :attr:`scale`, or 100 for a fraction shown
        ``per_cent``."""
        return 100.0 if per_cent and self.fraction else float(self.scale)


#: The bounds of a proportion (rates, areas under ROC/PR curves, coverages, accuracies,
#: calibration errors) and of a non-negative quantity (risks, areas under risk curves, NLL).
UNIT = (0.0, 1.0)
NON_NEGATIVE = (0.0, math.inf)


def _per_mille(name: str, label: str, function: Callable[..., float], **facts) -> MetricSpec:
    """An area under a risk curve: lower is better, shown ×1000, non-negative."""
    return MetricSpec(name, label, False, function, scale=1000.0, bounds=NON_NEGATIVE, **facts)


_BUILTINS = (
    _per_mille("aurc", "AURC", aurc, bootstrappable=True, interval=True),
    _per_mille("augrc", "AUGRC", augrc, bootstrappable=True, interval=True),
    _per_mille("eaurc", "e-AURC", eaurc, bootstrappable=True, interval=True),
    _per_mille("eaugrc", "e-AUGRC", eaugrc, bootstrappable=True, interval=True),
    MetricSpec("naurc", "NAURC", False, naurc, bootstrappable=True, bounds=NON_NEGATIVE),
    MetricSpec(
        "auroc_f",
        "AUROC_f",
        True,
        auroc_f,
        fraction=True,
        bounds=UNIT,
        binary_only=True,
        bootstrappable=True,
        interval=True,
    ),
    MetricSpec(
        "ap_f_success",
        "AP_f success",
        True,
        ap_f_success,
        fraction=True,
        bounds=UNIT,
        binary_only=True,
        bootstrappable=True,
    ),
    MetricSpec(
        "ap_f_error",
        "AP_f error",
        True,
        ap_f_error,
        fraction=True,
        bounds=UNIT,
        binary_only=True,
        bootstrappable=True,
    ),
    MetricSpec(
        "fpr@95tpr",
        "FPR@95TPR",
        False,
        partial(fpr_at_tpr, tpr=0.95),
        fraction=True,
        bounds=UNIT,
        binary_only=True,
        bootstrappable=True,
        interval=True,
    ),
    MetricSpec(
        "fpr@80tpr",
        "FPR@80TPR",
        False,
        partial(fpr_at_tpr, tpr=0.80),
        fraction=True,
        bounds=UNIT,
        binary_only=True,
        bootstrappable=True,
    ),
    MetricSpec("ece", "ECE", False, ece, binary_only=True, bootstrappable=True, bounds=UNIT),
    MetricSpec("mce", "MCE", False, mce, binary_only=True, bootstrappable=True, bounds=UNIT),
    MetricSpec(
        "risk@95cov",
        "Risk@95cov",
        False,
        partial(min_selective_risk_at_coverage, coverage=0.95),
        bounds=NON_NEGATIVE,
        bootstrappable=True,
    ),
    MetricSpec(
        "selective_risk@95cov",
        "Selective risk@95cov",
        False,
        partial(selective_risk_at_coverage, coverage=0.95),
        bounds=NON_NEGATIVE,
        bootstrappable=True,
    ),
    MetricSpec(
        "coverage@risk5",
        "Coverage@risk5",
        True,
        partial(coverage_at_risk, risk=0.05),
        fraction=True,
        bounds=UNIT,
        bootstrappable=True,
    ),
    MetricSpec("accuracy", "Accuracy", True, residuals="binary", bootstrappable=True, bounds=UNIT),
    MetricSpec(
        "mean_residual",
        "Mean residual",
        False,
        residuals="soft",
        bootstrappable=True,
        bounds=NON_NEGATIVE,
    ),
    _per_mille("aurc_ba", "AURC-BA", aurc_ba, needs_labels=True),
    _per_mille("augrc_ba", "AUGRC-BA", augrc_ba, needs_labels=True),
    MetricSpec("nll", "NLL", False, nll, needs_labels=True, needs_logits=True, bounds=NON_NEGATIVE),
    MetricSpec(
        "brier", "Brier", False, brier, needs_labels=True, needs_logits=True, bounds=(0.0, 2.0)
    ),
    MetricSpec(
        "balanced_accuracy",
        "Balanced accuracy",
        True,
        balanced_accuracy,
        fraction=True,
        bounds=UNIT,
        needs_labels=True,
        needs_logits=True,
    ),
    MetricSpec(
        "auroc_out", "AUROC_out", True, auroc_out, fraction=True, bounds=UNIT, computed_by="ood"
    ),
    MetricSpec(
        "fpr@95tpr_out",
        "FPR@95TPR_out",
        False,
        partial(fpr_at_tpr_out, tpr=0.95),
        fraction=True,
        bounds=UNIT,
        computed_by="ood",
    ),
    MetricSpec(
        "roc_auc", "ROC-AUC", True, fraction=True, bounds=UNIT, computed_by="binary_protocol"
    ),
    MetricSpec(
        "auroc_cood", "C-OOD AUROC", True, auroc_out, fraction=True, bounds=UNIT, computed_by="zoo"
    ),
    MetricSpec(
        "auroc_ood", "OOD AUROC", True, auroc_out, fraction=True, bounds=UNIT, computed_by="zoo"
    ),
    _per_mille("aurc_per_sample", "AURC (per sample)", aurc_per_sample, computed_by="conventions"),
    MetricSpec(
        "auroc_f_ordered",
        "AUROC_f (ordered ties)",
        True,
        auroc_f_ordered,
        fraction=True,
        bounds=UNIT,
        binary_only=True,
        computed_by="conventions",
    ),
    MetricSpec(
        "coverage@acc99_first_drop",
        "Coverage@acc99 (first drop)",
        True,
        partial(coverage_at_accuracy_first_drop, accuracy=0.99),
        fraction=True,
        bounds=UNIT,
        computed_by="conventions",
    ),
    MetricSpec(
        "fpr@95tpr_ood_positive",
        "FPR@95TPR (OOD positive)",
        False,
        partial(fpr_at_tpr_ood_positive, tpr=0.95),
        fraction=True,
        bounds=UNIT,
        computed_by="conventions",
    ),
)

_SPECS: dict[str, MetricSpec] = {}
_ENTRY_POINTS_LOADED = False


def add_metric(spec: MetricSpec) -> MetricSpec:
    """Enter ``spec`` into the list of metrics (after those already there) and return it.

    The one entry path of built-in and plug-in metrics. A name already taken by another spec
    is a ``ValueError``; adding a spec equal to the registered one is a no-op.
    """
    if not isinstance(spec, MetricSpec):
        raise TypeError(f"spec must be a MetricSpec, got {type(spec).__name__}")
    known = _SPECS.get(spec.name)
    if known is not None and known != spec:
        kind = "plug-in" if known.plugin else "built-in"
        raise ValueError(f"a {kind} metric named {spec.name!r} is already registered")
    _SPECS[spec.name] = spec
    return spec


for _spec in _BUILTINS:
    add_metric(_spec)


def register_metric(
    name: str,
    *,
    label: str | None = None,
    higher_is_better: bool,
    scale: float = 1.0,
    fraction: bool = False,
    binary_only: bool = False,
    needs_labels: bool = False,
    needs_logits: bool = False,
    bounds: tuple[float, float] = (-math.inf, math.inf),
) -> Callable[[Callable[..., float]], Callable[..., float]]:
    """Decorator registering ``function(residuals, confidence, **kw) -> float`` as the plug-in
    metric ``name`` (returns the function unchanged).

    ``function`` gets the validated float64 residuals and confidences of one CSF on one study,
    ``labels=`` (and ``logits=``) where ``needs_labels`` (``needs_logits``) is set, and
    ``sample_weight=`` where weights are given. ``label`` (default: ``name``),
    ``higher_is_better``, ``scale``, ``fraction``, ``binary_only`` (NaN for soft residuals) and
    ``bounds`` (the interval ``fdbench report`` checks its values against) are the
    :class:`MetricSpec` fields. The name must not be taken (``ValueError``); registering the
    same function again is a no-op. See the module docstring for the entry point.
    """
    known = _SPECS.get(name)
    if known is not None and not known.plugin:
        raise ValueError(f"{name!r} is a built-in metric; choose another name for the plug-in")

    def decorate(function: Callable[..., float]) -> Callable[..., float]:
        if not callable(function):
            raise TypeError(f"register_metric({name!r}) expects a function, got {function!r}")
        current = _SPECS.get(name)
        if current is not None and current.function is function:
            return function
        add_metric(
            MetricSpec(
                name,
                name if label is None else label,
                higher_is_better,
                function,
                scale=scale,
                fraction=fraction,
                binary_only=binary_only,
                needs_labels=needs_labels,
                needs_logits=needs_logits,
                bounds=bounds,
                plugin=True,
            )
        )
        return function

    return decorate


def _load_entry_points() -> None:
    """Register the metrics of the ``fdbench.metrics`` entry points (once per process). An
    entry point names a function decorated with :func:`register_metric` (an undecorated one
    has no direction and is refused)."""
    global _ENTRY_POINTS_LOADED
    if _ENTRY_POINTS_LOADED:
        return
    _ENTRY_POINTS_LOADED = True

    def register(name: str, function: Any) -> None:
        if not any(s.function is function for s in _SPECS.values()):
            raise ValueError("it is not decorated with fdbench.metrics.register_metric")

    list(load_entry_points(ENTRY_POINT_GROUP, register))


def metric_specs() -> dict[str, MetricSpec]:
    """Every metric by name, in order: the built-ins, then the plug-ins in order of
    registration (entry points loaded first)."""
    _load_entry_points()
    return dict(_SPECS)


def builtin_metric_specs() -> dict[str, MetricSpec]:
    """The built-in metrics by name, in order (no plug-in, no entry point loaded: the list
    as :mod:`fdbench.metrics` is imported)."""
    return {s.name: s for s in _BUILTINS}


def find_metric(name: str) -> MetricSpec | None:
    """The spec of metric ``name``; ``None`` for a name that is no registered metric."""
    if not isinstance(name, str):
        raise TypeError(f"metric must be a str, got {type(name).__name__}")
    return metric_specs().get(name)


def metric_spec(name: str) -> MetricSpec:
    """The spec of metric ``name``; ``ValueError`` listing the registered names if none."""
    spec = find_metric(name)
    if spec is None:
        raise ValueError(f"metric must be one of {sorted(metric_specs())}, got {name!r}")
    return spec


def metric_bounds() -> dict[str, tuple[float, float]]:
    """Every bounded metric's interval by name (:attr:`MetricSpec.bounds`), plug-ins included;
    the ranges a results table that enters from a user is checked against."""
    return {name: spec.bounds for name, spec in metric_specs().items() if spec.bounded}
