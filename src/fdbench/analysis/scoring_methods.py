"""Scoring methods: a (training method, CSF) pair under the name the papers give it."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from fdbench.analysis._validation import require_columns
from fdbench.csf import find_csf

__all__ = [
    "BASELINE",
    "add_scoring_method",
    "ensemble_method",
    "ensemble_of",
    "method_kind",
    "register_method_prefix",
    "scoring_method_name",
]

#: The display prefix of every registered training-method kind. A method declares its prefix
#: in its module (``display_prefix`` of its :class:`fdbench.training.methods.TrainingMethod`);
#: :func:`fdbench.training.methods.register` enters it here, the analysis being a stage below
#: training that may not import it.
_PREFIXES: dict[str, str] = {}


def register_method_prefix(kind: str, prefix: str) -> None:
    """Record that the scoring methods of training-method ``kind`` are named
    ``<prefix>-<CSF>`` (``""``: the CSF's name alone); called by the method registry."""
    if not isinstance(kind, str) or not kind:
        raise ValueError(f"kind: expected a non-empty string, got {kind!r}")
    if not isinstance(prefix, str):
        raise TypeError(f"prefix: expected a string, got {type(prefix).__name__}")
    _PREFIXES[kind] = prefix


#: The reference scoring method of paired differences: MSR of the cross-entropy baseline.
BASELINE = "MSR"


def ensemble_method(method: str) -> str:
    """The ``method`` column's value of the deep ensemble of the runs of ``method``:
    ``ensemble(<method>)``; :func:`ensemble_of` reads it back. The one place that writes or
    reads this form."""
    if not isinstance(method, str) or not method:
        raise ValueError(f"method: expected a non-empty string, got {method!r}")
    return f"ensemble({method})"


def ensemble_of(method: str) -> str | None:
    """The member method of the ensemble named ``method`` (:func:`ensemble_method`), ``None``
    where ``method`` names no ensemble."""
    if not isinstance(method, str):
        raise TypeError(f"method: expected a string, got {type(method).__name__}")
    if method.startswith("ensemble(") and method.endswith(")"):
        return method[len("ensemble(") : -1]
    return None


def method_kind(method: str, kinds: Mapping[str, str] | None = None) -> str:
    """The training-method kind of the ``method`` column's value.

    ``kinds`` maps configured method names to their kind (``BenchmarkConfig.methods``: name →
    kind); without an entry the kind is the name itself if it is a known kind, else the part
    before the first underscore if that is one (``ce_dropout`` → ``ce``), else the name. An
    ensemble ``ensemble(<method>)`` has the kind of its members.
    """
    if not isinstance(method, str):
        raise TypeError(f"method: expected a string, got {type(method).__name__}")
    members = ensemble_of(method)
    if members is not None:
        return method_kind(members, kinds)
    if kinds is not None and method in kinds:
        return kinds[method]
    known = _PREFIXES
    if method in known:
        return method
    head = method.split("_", 1)[0]
    return head if head in known else method


def scoring_method_name(method: str, csf: str, kinds: Mapping[str, str] | None = None) -> str:
    """The paper name of the scoring method ``csf`` of the classifier trained by ``method``.

    Follows FD-Shifts (``_confid_string_to_name`` of ``fd_shifts/reporting/__init__.py``) and
    the AUGRC paper's Tables 3-4: the baseline's CSFs keep their names (MSR, MLS, PE, MCD-PE,
    TEMP-MLS, Mahalanobis, ENS-MSR of a CE ensemble); a CSF read from a method's own head keeps
    its name (DG-Res, ConfidNet, DeVries: a spec with a ``head``, :class:`fdbench.csf.CSFSpec`);
    any other CSF of another method gets the method's prefix (its ``display_prefix``,
    :func:`register_method_prefix`; an unknown kind is its own prefix):
    DG-MSR, DG-PE, DG-MCD-MSR, DeVries-MSR. A CSF of an ensemble ``ensemble(<method>)`` is an
    ENS-* one ("ENS-" is added where the CSF is not judged by the ensemble: Mahalanobis of a
    CE ensemble is ENS-Mahalanobis).
    The kind of ``method`` is :func:`method_kind` (``kinds``).
    """
    if not isinstance(csf, str) or not csf:
        raise ValueError(f"csf: expected a non-empty string, got {csf!r}")
    if ensemble_of(method) is not None:
        spec = find_csf(csf)
        if spec is None or spec.judged_by != "ensemble":
            csf = f"ENS-{csf}"
    spec = find_csf(csf)
    if spec is not None and spec.head is not None:
        return csf
    kind = method_kind(method, kinds)
    prefix = _PREFIXES.get(kind, kind)
    return f"{prefix}-{csf}" if prefix else csf


def add_scoring_method(
    results: pd.DataFrame, kinds: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """``results`` with a ``scoring_method`` column (:func:`scoring_method_name` of each row).

    Where two different (method, CSF) pairs of the table would get the same name (e.g. two
    configured CE variants), each of them is named ``<name> (<method>)`` instead, so that a
    scoring method always stands for one (method, CSF) pair.
    """
    require_columns(results, ("method", "csf"), "results")
    pairs = results[["method", "csf"]].drop_duplicates()
    names = [scoring_method_name(m, c, kinds) for m, c in pairs.itertuples(index=False)]
    pairs = pairs.assign(scoring_method=pd.Series(names, index=pairs.index, dtype=object))
    clash = pairs["scoring_method"].duplicated(keep=False)
    if clash.any():
        pairs.loc[clash, "scoring_method"] = (
            pairs.loc[clash, "scoring_method"] + " (" + pairs.loc[clash, "method"] + ")"
        )
    lookup = pd.MultiIndex.from_frame(pairs[["method", "csf"]])
    position = lookup.get_indexer(pd.MultiIndex.from_frame(results[["method", "csf"]]))
    return results.assign(scoring_method=pairs["scoring_method"].to_numpy()[position])
