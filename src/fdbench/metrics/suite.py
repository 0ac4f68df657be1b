"""The whole metric suite from one sort: ``evaluate_all`` and the names of its metrics."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from fdbench.core.threads import beside

from ._balanced import class_codes, class_mean_selective_risk
from ._blockwise import MAX_SAMPLES as BLOCKWISE_MAX_SAMPLES
from ._blockwise import OPTIMUM_AT_ONCE_MAX_SAMPLES as BLOCKWISE_OPTIMUM_AT_ONCE
from ._blockwise import (
    blockwise_suite,
    compiled_inputs,
    counted_binary_unit,
    packed_descending,
    unit_optimum,
)
from ._core import (
    Ranking,
    ScratchPool,
    ap_error_from_cum,
    ap_success_from_cum,
    augrc_from_cum,
    aurc_from_risks,
    auroc_from_cum,
    coverage_at_risk_from_cum,
    first_loss,
    fpr_at_tpr_from_cum,
    min_risk_at_coverage_from_risks,
    rank,
    risk_at_coverage_from_cum,
    selective_risks_from_cum,
    success_cumulative,
)
from ._soft_optimum import weighted_soft_optimum
from ._validation import _as_1d_float, as_real_array, check_inputs, check_labels
from ._valuesort import MAX_SAMPLES, binary_unit_suite, compiled_binary_unit
from .calibration import bin_sums_sorted, ece_mce_from_sums
from .probabilities import brier_from_probs, check_probs, nll_from_probs
from .scoring import balanced_accuracy, brier, nll
from .selective import _balance_factor, _optimum, naurc_from_parts
from .specs import MetricSpec, builtin_metric_specs, metric_specs

__all__ = [
    "BINARY_ONLY_KEYS",
    "LABEL_KEYS",
    "LOGIT_KEYS",
    "METRIC_KEYS",
    "SOFT_METRIC_KEYS",
    "evaluate_all",
    "metric_keys",
]


#: Most weighted soft residuals whose optimal CSF is computed beside the block walk (on the
#: second thread, from before the sort), not after it: the two orders and weights' copies
#: together stay under ~32 MB; beyond, peak memory stays under twice the confidences (see
#: :func:`_blockwise`). The block walk's own bound for starting it early.
SOFT_BESIDE_MAX_SAMPLES = BLOCKWISE_OPTIMUM_AT_ONCE


def _suite_keys(*, residuals: tuple[str, ...], labels: bool, logits: bool) -> tuple[str, ...]:
    """The built-in suite metrics of the list (:mod:`fdbench.metrics.specs`) with these needs."""
    return tuple(
        s.name
        for s in builtin_metric_specs().values()
        if s.computed_by == "suite"
        and s.residuals in residuals
        and s.needs_labels == labels
        and s.needs_logits == logits
    )


METRIC_KEYS: tuple[str, ...] = _suite_keys(residuals=("any", "binary"), labels=False, logits=False)
"""Built-in keys of :func:`evaluate_all` for 0/1 residuals, in order.

``risk@95cov`` is FD-Shifts' working point (its code's name): the lowest selective risk among
thresholds with coverage >= 0.95 (:func:`~fdbench.metrics.min_selective_risk_at_coverage`);
``selective_risk@95cov`` the selective risk of the largest such threshold
(:func:`~fdbench.metrics.selective_risk_at_coverage`)."""

SOFT_METRIC_KEYS: tuple[str, ...] = _suite_keys(
    residuals=("any", "soft"), labels=False, logits=False
)
"""Built-in keys for soft (non-0/1) residuals: ``accuracy`` is replaced by ``mean_residual``."""

BINARY_ONLY_KEYS: frozenset[str] = frozenset(
    name for name in SOFT_METRIC_KEYS if builtin_metric_specs()[name].binary_only
)
"""Entries that need 0/1 residuals; NaN for soft residuals."""

LABEL_KEYS: tuple[str, ...] = _suite_keys(residuals=("any",), labels=True, logits=False)
"""Added when ``labels`` are given (``aurc_ba`` is FD-Shifts' AURC-BA, see
:func:`~fdbench.metrics.aurc_ba`)."""

LOGIT_KEYS: tuple[str, ...] = _suite_keys(residuals=("any",), labels=True, logits=True)
"""Added when ``labels`` and ``logits`` are given."""

_POOL = ScratchPool()

#: Samples from which ``evaluate_all`` with labels computes the class-balanced entries on a
#: second thread beside the others (:func:`fdbench.core.threads.beside`; below, a thread's
#: hand-over costs more than it saves).
BESIDE_MIN_SAMPLES = 1 << 16


def metric_keys(
    *, binary: bool = True, labels: bool = False, logits: bool = False
) -> tuple[str, ...]:
    """The keys :func:`evaluate_all` returns for the given kind of input, in order: the
    built-ins, then the plug-in metrics (:func:`fdbench.metrics.register_metric`)."""
    keys = METRIC_KEYS if binary else SOFT_METRIC_KEYS
    if labels:
        keys = keys + LABEL_KEYS
        if logits:
            keys = keys + LOGIT_KEYS
    return keys + tuple(s.name for s in _plugins(labels=labels, logits=logits))


def _plugins(*, labels: bool, logits: bool) -> list[MetricSpec]:
    """The plug-in metrics that inputs with (or without) labels and logits allow."""
    return [
        s
        for s in metric_specs().values()
        if s.plugin and (labels or not s.needs_labels) and (logits or not s.needs_logits)
    ]


def evaluate_all(
    residuals: ArrayLike,
    confidence: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    logits: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    probs: ArrayLike | None = None,
    on_ranking: Callable[[np.ndarray, np.ndarray], None] | None = None,
) -> dict[str, float]:
    """Every metric of ``fdbench.metrics`` for one CSF, from a single sort of ``confidence``.

    Keys are :func:`metric_keys` (``METRIC_KEYS`` for 0/1 residuals, ``SOFT_METRIC_KEYS``
    otherwise, plus ``LABEL_KEYS`` with ``labels`` and ``LOGIT_KEYS`` with labels and
    ``logits`` or ``probs``, then the plug-in metrics the inputs allow, each computed by its
    function). Each value equals the corresponding single function (``aurc``, ``augrc``,
    ``eaurc``, ``eaugrc``, ``naurc``, ``auroc_f``, ``ap_f_success``, ``ap_f_error``,
    ``fpr_at_tpr`` at 0.95 and 0.80, ``ece``/``mce`` with 15 bins, ``risk@95cov`` =
    ``min_selective_risk_at_coverage`` and ``selective_risk@95cov`` =
    ``selective_risk_at_coverage`` at 0.95, ``coverage_at_risk`` at 0.05,
    ``aurc_ba``/``augrc_ba``, ``nll``, ``brier``, ``balanced_accuracy``); ``accuracy`` is
    1 - weighted mean residual. ``probs`` (N × K class probabilities, instead of ``logits``)
    are used as given (:func:`~fdbench.metrics.probabilities.check_probs`; no re-normalisation):
    ``nll``/``brier`` are ``nll_from_probs``/``brier_from_probs`` and ``balanced_accuracy``
    follows their arg-max.

    Undefined entries are NaN without a warning: binary-only entries (``BINARY_ONLY_KEYS``) for
    soft residuals, ECE/MCE when a confidence lies outside [0, 1], ranking metrics when only
    one class is present, NAURC when the optimal and random AURC coincide.

    ``on_ranking``, when the suite ranks by its argsort engine (with labels, or beyond the
    value sort's and the block walk's sizes; not the value sort of 0/1 residuals alone nor the
    block walk of weighted or soft residuals without labels, which hold no array of N
    cumulative sums), is called once with the cumulative weights ``W``
    and losses ``L`` at the tie-group ends in order of descending confidence, the arrays the
    metrics are computed from (views valid during the call only): a caller draws the
    risk-coverage curve from them without sorting again
    (:func:`fdbench.evaluation.curves.ranked_unit_curve`).
    """
    if sample_weight is None and labels is None and logits is None and probs is None:
        # converted once here: check_inputs then finds float64 arrays and copies nothing
        residuals = _as_1d_float(residuals, "residuals")
        confidence = _as_1d_float(confidence, "confidence")
        fast = counted_binary_unit(residuals, confidence, MAX_SAMPLES)
        if fast is None:
            fast = compiled_binary_unit(residuals, confidence, MAX_SAMPLES)
        if fast is not None:
            return _binary_unit(*fast)
    if labels is None and logits is None and probs is None:
        checked = compiled_inputs(residuals, confidence, sample_weight, BLOCKWISE_MAX_SAMPLES)
        if checked is not None and (checked[2] is not None or not checked[3]):
            return _blockwise(*checked)
    r, c, w, keep = check_inputs(residuals, confidence, sample_weight)
    if logits is not None and probs is not None:
        raise ValueError("probs: give either logits or probs, not both")
    if logits is not None and labels is None:
        raise ValueError("logits: the scoring metrics also need labels; pass labels=")
    if probs is not None and labels is None:
        raise ValueError("probs: the scoring metrics also need labels; pass labels=")
    y = None if labels is None else check_labels(labels, r.size, keep)
    binary = bool(np.all((r == 0) | (r == 1)))
    if binary and w is None and y is None and r.size <= MAX_SAMPLES:
        return _binary_unit(r, c, binary_unit_suite(r, c))
    if y is None and (w is not None or not binary) and r.size <= BLOCKWISE_MAX_SAMPLES:
        return _blockwise(r, c, w, binary)

    pool = _POOL
    ranking = rank(c, pool, packed_descending(c))
    rw = r if w is None else r * w
    if w is None and ranking.ends is None:
        W = pool.steps(r.size)[None, :]
    else:
        W = ranking.cumulative(w, pool.get("W", r.size))[None, :]
    ranked_r = None
    if y is not None and w is None:
        ranked_r = _ranked_residuals(r, ranking.order, binary, pool.get("ranked", r.size))
        L = ranking.at_ends(np.cumsum(ranked_r, out=pool.get("L", r.size)))[None, :]
    else:
        L = ranking.cumulative(rw, pool.get("L", r.size))[None, :]
    pending = None
    if y is not None:
        pending = beside(
            _class_balanced,
            W,
            ranking,
            y,
            r,
            w,
            rw,
            ranked_r,
            binary,
            when=r.size >= BESIDE_MIN_SAMPLES,
        )
    try:
        if on_ranking is not None:
            on_ranking(W[0], L[0])
        out = _ranked_entries(r, w, W, L, ranking, pool, binary)
    finally:
        balanced = None if pending is None else pending.result()
    if y is not None:
        out["aurc_ba"], out["augrc_ba"] = cast(tuple[float, float], balanced)
        if logits is not None:
            z = as_real_array(logits, "logits")
            if keep is not None:
                if z.ndim < 1 or z.shape[0] != keep.size:
                    raise ValueError(f"logits: expected {keep.size} rows, got shape {z.shape}")
                z = z[keep]
            out["nll"] = nll(y, z, sample_weight=w)
            out["brier"] = brier(y, z, sample_weight=w)
            out["balanced_accuracy"] = balanced_accuracy(y, z, sample_weight=w)
        if probs is not None:
            p = check_probs(probs)
            if keep is not None:
                if p.shape[0] != keep.size:
                    raise ValueError(f"probs: expected {keep.size} rows, got shape {p.shape}")
                p = p[keep]
            out["nll"] = nll_from_probs(y, p, sample_weight=w)
            out["brier"] = brier_from_probs(y, p, sample_weight=w)
            out["balanced_accuracy"] = balanced_accuracy(y, p, sample_weight=w)
    for spec in _plugins(labels=y is not None, logits=logits is not None):
        out[spec.name] = _plugin_value(spec, r, c, w, y, z if logits is not None else None, binary)
    return out


def _ranked_entries(
    r: np.ndarray,
    w: np.ndarray | None,
    W: np.ndarray,
    L: np.ndarray,
    ranking: Ranking,
    pool: ScratchPool,
    binary: bool,
) -> dict[str, float]:
    """The entries of :func:`evaluate_all` that need no labels, from the argsort engine's
    cumulative weights ``W`` and losses ``L`` (1, T) at the tie-group ends of ``ranking``."""
    nan = float("nan")
    work = [pool.get(f"work{k}", W.shape[1])[None, :] for k in range(3)]
    out: dict[str, float] = {}
    risks = selective_risks_from_cum(W, L, work[0])
    out["aurc"] = float(aurc_from_risks(W, risks, first_loss(W, L), work[1:])[0])
    working_point = float(min_risk_at_coverage_from_risks(W, risks, 0.95)[0])
    out["augrc"] = float(augrc_from_cum(W, L, work)[0])
    opt_work = work if ranking.ends is None else None
    aurc_opt, augrc_opt = _optimum(r, w, opt_work, ranking, L, binary=binary)
    out["eaurc"] = out["aurc"] - aurc_opt
    out["eaugrc"] = out["augrc"] - augrc_opt
    mean_residual = float(L[0, -1] / W[0, -1])
    out["naurc"] = float(naurc_from_parts(out["aurc"], aurc_opt, mean_residual))
    with np.errstate(invalid="ignore", divide="ignore"):
        if binary:
            out["auroc_f"] = float(auroc_from_cum(W, L, work)[0])
            out["ap_f_success"] = float(ap_success_from_cum(W, L, work)[0])
            out["ap_f_error"] = float(ap_error_from_cum(W, L, work)[0])
            tp = success_cumulative(ranking, r, w)
            if tp is None:
                tp = np.subtract(W, L, out=work[0])
            out["fpr@95tpr"] = float(fpr_at_tpr_from_cum(W, L, 0.95, work, tp)[0])
            out["fpr@80tpr"] = float(fpr_at_tpr_from_cum(W, L, 0.80, work, tp)[0])
        else:
            for key in ("auroc_f", "ap_f_success", "ap_f_error", "fpr@95tpr", "fpr@80tpr"):
                out[key] = nan
    if binary and ranking.thresholds[-1] >= 0 and ranking.thresholds[0] <= 1:
        sums = bin_sums_sorted(
            ranking.thresholds, W[0], L[0], 15, unit=w is None and ranking.ends is None
        )
        ece_value, mce_value = ece_mce_from_sums(*sums)
        out["ece"], out["mce"] = float(ece_value), float(mce_value)
    else:
        out["ece"] = out["mce"] = nan
    out["risk@95cov"] = working_point
    out["selective_risk@95cov"] = float(risk_at_coverage_from_cum(W, L, 0.95)[0])
    out["coverage@risk5"] = float(coverage_at_risk_from_cum(W, L, 0.05, work)[0])
    if binary:
        out["accuracy"] = 1.0 - mean_residual
    else:
        out["mean_residual"] = mean_residual
    return out


def _class_balanced(
    W: np.ndarray,
    ranking: Ranking,
    y: np.ndarray,
    r: np.ndarray,
    w: np.ndarray | None,
    rw: np.ndarray,
    ranked_r: np.ndarray | None,
    binary: bool,
) -> tuple[float, float]:
    """AURC-BA and AUGRC-BA (``LABEL_KEYS``) along the argsort engine's ``ranking``: the
    class-mean selective risk's area over the coverage ``W`` and the class-balanced losses'
    generalized risk area (``ranked_r``: the residuals in ranking order, without weights).
    Reads its inputs only, and allocates its own scratch arrays: it may run on a second thread
    beside :func:`_ranked_entries` (:func:`fdbench.core.threads.beside`)."""
    codes, n_classes, counts = class_codes(y)
    ranked = None if ranked_r is None else (codes[ranking.order], ranked_r)
    risks_ba = class_mean_selective_risk(
        ranking, codes, n_classes, r, w, ranked=ranked, counts=counts, binary=binary
    )[None, :]
    aurc_ba = float(aurc_from_risks(W, risks_ba, W[:, 0] * risks_ba[:, 0])[0])
    if ranked is None:
        L_ba = ranking.cumulative(rw * _balance_factor(codes, n_classes, w, counts))[None, :]
    else:  # (r * factor)[order] as r[order] * factor[order], then the same sum
        balanced = ranked[1] * _balance_factor(ranked[0], n_classes, None, counts)
        L_ba = ranking.at_ends(np.cumsum(balanced, out=balanced))[None, :]
    return aurc_ba, float(augrc_from_cum(W, L_ba)[0])


def _ranked_residuals(
    r: np.ndarray, order: np.ndarray, binary: bool, out: np.ndarray
) -> np.ndarray:
    """``np.take(r, order, out=out)``; for 0/1 residuals without a -0.0 the failures are
    gathered as bytes (an eighth of the memory traffic of a random float64 gather) and
    written back as 0.0 and 1.0, the same values."""
    if binary and not np.signbit(r).any():
        np.copyto(out, np.take((r == 1).view(np.uint8), order))
        return out
    return np.take(r, order, out=out)


def _binary_unit(r: np.ndarray, c: np.ndarray, parts: dict[str, float]) -> dict[str, float]:
    """:func:`evaluate_all` of 0/1 residuals without weights or labels from the entries of a
    value sort (:mod:`fdbench.metrics._valuesort`: no argsort, the same values bit for bit)."""
    out = {key: parts[key] for key in ("aurc", "augrc")}
    out["eaurc"] = out["aurc"] - parts["aurc_opt"]
    out["eaugrc"] = out["augrc"] - parts["augrc_opt"]
    out["naurc"] = float(naurc_from_parts(out["aurc"], parts["aurc_opt"], parts["mean_residual"]))
    for key in METRIC_KEYS[5:-1]:
        out[key] = parts[key]
    out["accuracy"] = 1.0 - parts["mean_residual"]
    for spec in _plugins(labels=False, logits=False):
        out[spec.name] = _plugin_value(spec, r, c, None, None, None, True)
    return out


def _blockwise(
    r: np.ndarray, c: np.ndarray, w: np.ndarray | None, binary: bool
) -> dict[str, float]:
    """:func:`evaluate_all` of weighted 0/1 or of soft residuals without labels, walked in
    blocks after one argsort (:mod:`fdbench.metrics._blockwise`: no array of N cumulative sums,
    the same values bit for bit)."""
    # the optimum runs beside the walk without weights (a sort of the residuals) and with
    # weights of 0/1 residuals (two dot products, no temporaries); that of weighted soft
    # residuals sorts packed keys and holds an int32 order of its own, which beside the walk's
    # order and weights passes twice the confidences' memory: beside it (from before the
    # confidences' sort) up to SOFT_BESIDE_MAX_SAMPLES (peak 3.8x the confidences at 10^6,
    # 30 MB, against 2.4x; 10^6: 100 -> 49 ms), after it beyond (1.9x at 2^21, 1.56x at 10^7)
    if w is None:
        optimum = functools.partial(unit_optimum, r)
    elif binary:
        optimum = functools.partial(_optimum, r, w, binary=True)
    else:
        optimum = functools.partial(weighted_soft_optimum, r, w)
    alongside = w is None or binary or r.size <= SOFT_BESIDE_MAX_SAMPLES
    parts = blockwise_suite(r, c, w, binary, optimum if alongside else None)
    if "aurc_opt" in parts:
        aurc_opt, augrc_opt = parts["aurc_opt"], parts["augrc_opt"]
    else:
        aurc_opt, augrc_opt = optimum()
    out = {key: parts[key] for key in ("aurc", "augrc")}
    out["eaurc"] = out["aurc"] - aurc_opt
    out["eaugrc"] = out["augrc"] - augrc_opt
    out["naurc"] = float(naurc_from_parts(out["aurc"], aurc_opt, parts["mean_residual"]))
    for key in METRIC_KEYS[5:-1]:
        out[key] = parts.get(key, float("nan"))
    if binary:
        out["accuracy"] = 1.0 - parts["mean_residual"]
    else:
        out["mean_residual"] = parts["mean_residual"]
    for spec in _plugins(labels=False, logits=False):
        out[spec.name] = _plugin_value(spec, r, c, w, None, None, binary)
    return out


def _plugin_value(
    spec: MetricSpec,
    r: np.ndarray,
    c: np.ndarray,
    w: np.ndarray | None,
    y: np.ndarray | None,
    z: np.ndarray | None,
    binary: bool,
) -> float:
    """A plug-in metric's value (NaN where it is binary-only and the residuals are soft),
    validated: one real number."""
    if spec.binary_only and not binary:
        return float("nan")
    kwargs = {}
    if spec.needs_labels:
        kwargs["labels"] = y
    if spec.needs_logits:
        kwargs["logits"] = z
    if w is not None:
        kwargs["sample_weight"] = w
    value = cast(Callable[..., Any], spec.function)(r, c, **kwargs)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise TypeError(
            f"plug-in metric {spec.name!r} must return a real number, got {type(value).__name__}"
        )
    return float(value)
