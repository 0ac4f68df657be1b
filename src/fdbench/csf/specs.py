"""The one list of confidence scoring functions: a :class:`CSFSpec` per CSF, built-in or plug-in.

Every fact fdbench holds about a CSF is a field of its spec: its name, the function, what it
reads, what it fits, how it is made a probability before its calibration is measured, which
classifier's predictions define its failures, what the binary protocol does with it and its
colour in figures. :func:`fdbench.csf.compute_csfs`, the evaluation, the analysis and the
report read these fields (:func:`csf_specs`, :func:`csf_spec`) and nothing else; no stage
decides by a CSF's name.

Built-in CSFs (:mod:`fdbench.csf.registry`) and plug-ins enter the list through the same
function, :func:`add_csf`. A plug-in is a function ``function(run, split)`` of the stored
outputs (a :class:`~fdbench.outputs.RunOutputs` and the name of one of its splits) returning N
confidences, higher = more confident, registered with the :func:`register_csf` decorator or
through the entry-point group ``fdbench.csfs`` (:data:`ENTRY_POINT_GROUP`) of an installed
distribution::

    # mypkg/csfs.py
    from fdbench.csf import register_csf

    @register_csf("MSR-squared", calibration="none", colour="#117733")
    def msr_squared(run, split):
        z = run.splits[split].logits
        p = np.exp(z - z.max(1, keepdims=True))
        return (p.max(1) / p.sum(1)) ** 2

    # pyproject.toml of mypkg
    [project.entry-points."fdbench.csfs"]
    MSR-squared = "mypkg.csfs:msr_squared"

An entry point names the function (decorated or not: an undecorated one is registered under
the entry point's name with the defaults of :func:`register_csf`) and is loaded the first
time the list is read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from fdbench.core.plugins import load_entry_points

if TYPE_CHECKING:
    from fdbench.outputs.schema import RunOutputs

    from .openmax import OpenMaxParams

__all__ = [
    "BINARY_TREATMENTS",
    "CALIBRATIONS",
    "ENTRY_POINT_GROUP",
    "JUDGES",
    "READS",
    "CSFContext",
    "CSFSpec",
    "add_csf",
    "csf_spec",
    "csf_specs",
    "find_csf",
    "register_csf",
]

#: Entry-point group through which other packages register CSFs (:func:`register_csf`).
ENTRY_POINT_GROUP = "fdbench.csfs"

#: How a CSF is made a probability before its ECE is measured (FD-Shifts' Table 10,
#: ``Analysis._get_confidence_scores`` of fd_shifts/analysis/__init__.py): ``"platt"``, Platt
#: scaling fitted on the validation split (a range beyond [0, 1]); ``"temperature"``, the
#: temperature-scaled softmax already (TEMP-MLS), used as it is; ``"none"``, a probability
#: already, used as it is.
CALIBRATIONS = ("none", "platt", "temperature")

#: Which classifier's predictions define a CSF's failures: ``"logits"``, the network's arg-max;
#: ``"mcd"``, the MC-dropout classifier (arg-max of the mean MC softmax), as FD-Shifts judges
#: its MC-dropout CSFs; ``"ensemble"``, the deep ensemble (arg-max of the members' mean softmax).
JUDGES = ("logits", "mcd", "ensemble")

#: The stored output a CSF is computed from (:attr:`CSFSpec.reads`).
READS = ("logits", "mcd_logits", "ensemble", "features", "head", "outputs")

#: What the binary protocol (:mod:`fdbench.protocol.binary`, Bernhardt et al.) does with a CSF:
#: ``"keep"`` it; make it ``"predicted_class"``, the softmax of the thresholded prediction
#: (MSR and its MC-dropout and ensemble counterparts); ``"exclude"`` it (entropies, symmetric
#: around p = 0.5 and so blind to a threshold elsewhere).
BINARY_TREATMENTS = ("keep", "predicted_class", "exclude")


@dataclass
class CSFContext:
    """What a CSF is computed from: split ``split`` of ``run`` and the options of the call
    (:func:`fdbench.csf.compute_csfs`); ``shared`` holds work that several CSFs of one call
    reuse (e.g. the MC-dropout summary), made once by :meth:`once`."""

    run: RunOutputs
    split: str
    ensemble: list[RunOutputs] | None = None
    knn_k: int = 50
    openmax: OpenMaxParams | None = None
    predictions: np.ndarray | None = None
    shared: dict[str, Any] = field(default_factory=dict)

    def once(self, key: str, make: Callable[[], Any]) -> Any:
        """``make()``, computed on the first call with ``key`` and reused after."""
        if key not in self.shared:
            self.shared[key] = make()
        return self.shared[key]


def _always(ctx: CSFContext) -> bool:
    return True


@dataclass(frozen=True)
class CSFSpec:
    """One CSF and every fact about it.

    ``name``
        The name in results tables, reports and configurations.
    ``function``
        The array-level function (e.g. :func:`fdbench.csf.msr` of logits); for a plug-in, its
        ``function(run, split)``.
    ``needs``
        What it reads, in words (documentation and ``fdbench`` listings).
    ``reads``
        The stored output it is computed from: ``"logits"``, ``"mcd_logits"``,
        ``"ensemble"`` (logits of several runs), ``"features"``, ``"head"`` (the stored head
        ``head``), or ``"outputs"`` (a plug-in's choice).
    ``fit``
        The split a fit runs on (``"train"``, ``"val"``), ``None`` without one.
    ``compute`` / ``available``
        ``compute(ctx)`` returns the N float64 confidences of a :class:`CSFContext`;
        ``available(ctx)`` says whether the context's outputs allow it. ``compute`` is
        ``None`` for an opt-in CSF, whose parameters the job that asks for it fits.
    ``calibration``
        One of :data:`CALIBRATIONS`.
    ``judged_by``
        One of :data:`JUDGES`.
    ``binary``
        One of :data:`BINARY_TREATMENTS`.
    ``colour``
        Its fixed ``#RRGGBB`` colour in every figure (``None``: one chosen from the name by
        :func:`fdbench.report.palette.csf_colour`).
    ``head``
        The stored head a learned confidence is read from (a training method's own
        confidence, e.g. DG-Res of DeepGamblers: its name already names the method).
    ``opt_in``
        Computed only where a job asks for it (the zoo's p-norm CSFs), not by
        :func:`fdbench.csf.compute_csfs`.
    ``plugin``
        Registered by another package (:func:`register_csf`).
    """

    name: str
    function: Callable[..., np.ndarray]
    needs: str
    reads: str
    compute: Callable[[CSFContext], np.ndarray] | None
    available: Callable[[CSFContext], bool] = _always
    fit: str | None = None
    calibration: str = "platt"
    judged_by: str = "logits"
    binary: str = "keep"
    colour: str | None = None
    head: str | None = None
    opt_in: bool = False
    plugin: bool = False

    def __post_init__(self) -> None:
        name = self.name
        if not isinstance(name, str) or not name.strip() or name != name.strip():
            raise ValueError(
                f"name must be a non-empty str without surrounding spaces, got {self.name!r}"
            )
        for value, allowed, what in (
            (self.calibration, CALIBRATIONS, "calibration"),
            (self.judged_by, JUDGES, "judged_by"),
            (self.binary, BINARY_TREATMENTS, "binary"),
            (self.fit, (None, "train", "val"), "fit"),
            (self.reads, READS, "reads"),
        ):
            if value not in allowed:
                raise ValueError(
                    f"{what} of CSF {self.name!r} must be one of {allowed}, got {value!r}"
                )
        if self.colour is not None and not (
            isinstance(self.colour, str)
            and len(self.colour) == 7
            and self.colour[0] == "#"
            and all(ch in "0123456789abcdefABCDEF" for ch in self.colour[1:])
        ):
            raise ValueError(f"colour of CSF {self.name!r} must be '#RRGGBB', got {self.colour!r}")
        if (self.compute is None) != self.opt_in:
            raise ValueError(f"CSF {self.name!r}: compute is None for opt-in CSFs only")
        if (self.reads == "head") != (self.head is not None):
            raise ValueError(f"CSF {self.name!r}: reads='head' and head= go together")


_SPECS: dict[str, CSFSpec] = {}
_ENTRY_POINTS_LOADED = False


def add_csf(spec: CSFSpec) -> CSFSpec:
    """Enter ``spec`` into the list of CSFs (after those already there) and return it.

    The one entry path of built-in and plug-in CSFs. A name already taken by another spec is
    a ``ValueError``; adding a spec equal to the registered one is a no-op.
    """
    if not isinstance(spec, CSFSpec):
        raise TypeError(f"spec must be a CSFSpec, got {type(spec).__name__}")
    known = _SPECS.get(spec.name)
    if known is not None and known != spec:
        kind = "plug-in" if known.plugin else "built-in"
        raise ValueError(f"a {kind} CSF named {spec.name!r} is already registered")
    _SPECS[spec.name] = spec
    return spec


def _plugin_confidence(name: str, function: Callable, ctx: CSFContext) -> np.ndarray:
    """A plug-in's confidences, validated: N finite real numbers, as float64."""
    n = len(ctx.run.splits[ctx.split].labels)
    values = np.asarray(function(ctx.run, ctx.split))
    if values.dtype.kind not in "biuf" or values.shape != (n,):
        raise ValueError(
            f"plug-in CSF {name!r} must return {n} real confidences for split "
            f"{ctx.split!r}, got dtype {values.dtype} and shape {values.shape}"
        )
    values = values.astype(np.float64)
    if not np.isfinite(values).all():
        raise ValueError(
            f"plug-in CSF {name!r} returned {int((~np.isfinite(values)).sum())} "
            f"non-finite confidence(s) for split {ctx.split!r}"
        )
    return values


def register_csf(
    name: str,
    *,
    needs: str = "stored outputs (plug-in)",
    available: Callable[[RunOutputs, str], bool] | None = None,
    calibration: str = "platt",
    judged_by: str = "logits",
    binary: str = "keep",
    colour: str | None = None,
    head: str | None = None,
) -> Callable[[Callable[[RunOutputs, str], np.ndarray]], Callable[[RunOutputs, str], np.ndarray]]:
    """Decorator registering ``function(run, split) -> confidences`` as the plug-in CSF
    ``name`` (returns the function unchanged).

    ``available(run, split)`` restricts the splits it is computed on (all by default; with
    ``head``, those that store that head). ``calibration`` (:data:`CALIBRATIONS`; default
    ``"platt"``, FD-Shifts' rule for a score of unknown range), ``judged_by``
    (:data:`JUDGES`; ``"mcd"``: computed where the split stores MC-dropout logits and judged
    with the MC-dropout classifier), ``binary`` (:data:`BINARY_TREATMENTS`), ``colour`` and
    ``head`` (a training method's own confidence, kept under its name in scoring-method names)
    are the :class:`CSFSpec` fields. The name must not be taken (``ValueError``); registering
    the same function again is a no-op. See the module docstring for the entry point.
    """
    if not isinstance(name, str) or not name.strip() or name != name.strip():
        raise ValueError(f"name must be a non-empty str without surrounding spaces, got {name!r}")
    known = _SPECS.get(name)
    if known is not None and not known.plugin:
        raise ValueError(f"{name!r} is a built-in CSF; choose another name for the plug-in")
    if available is not None and not callable(available):
        raise TypeError(f"available must be callable or None, got {type(available).__name__}")

    def decorate(
        function: Callable[[RunOutputs, str], np.ndarray],
    ) -> Callable[[RunOutputs, str], np.ndarray]:
        if not callable(function):
            raise TypeError(f"register_csf({name!r}) expects a function, got {function!r}")
        known = _SPECS.get(name)
        if known is not None and known.plugin and known.function is function:
            return function

        def allowed(ctx: CSFContext) -> bool:
            split = ctx.run.splits[ctx.split]
            if head is not None and head not in split.heads:
                return False
            if judged_by == "mcd" and split.mcd_logits is None:
                return False
            return available is None or bool(available(ctx.run, ctx.split))

        add_csf(
            CSFSpec(
                name,
                function,
                needs,
                "outputs" if head is None else "head",
                lambda ctx: _plugin_confidence(name, function, ctx),
                allowed,
                calibration=calibration,
                judged_by=judged_by,
                binary=binary,
                colour=colour,
                head=head,
                plugin=True,
            )
        )
        return function

    return decorate


def _load_entry_points() -> None:
    """Register the CSFs of the ``fdbench.csfs`` entry points (once per process)."""
    global _ENTRY_POINTS_LOADED
    if _ENTRY_POINTS_LOADED:
        return
    _ENTRY_POINTS_LOADED = True

    def register(name: str, function: Any) -> None:
        if not any(s.plugin and s.function is function for s in _SPECS.values()):
            register_csf(name)(function)

    list(load_entry_points(ENTRY_POINT_GROUP, register))


def csf_specs() -> dict[str, CSFSpec]:
    """Every CSF by name, in order: the built-ins (entered when :mod:`fdbench.csf` is imported,
    before any plug-in can be), then the plug-ins in order of registration (entry points
    loaded first)."""
    _load_entry_points()
    return dict(_SPECS)


def find_csf(name: str) -> CSFSpec | None:
    """The spec of CSF ``name``; ``None`` for a name that is no registered CSF (e.g. a
    confidence column of a user's table)."""
    if not isinstance(name, str):
        raise TypeError(f"csf must be a str, got {type(name).__name__}")
    return csf_specs().get(name)


def csf_spec(name: str) -> CSFSpec:
    """The spec of CSF ``name``; ``ValueError`` listing the registered names if there is none."""
    spec = find_csf(name)
    if spec is None:
        raise ValueError(f"csf must be one of {sorted(csf_specs())}, got {name!r}")
    return spec
