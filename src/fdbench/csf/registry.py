"""The built-in CSFs under their papers' names, entered into the list of :mod:`fdbench.csf.specs`,
and ``compute_csfs``, which computes every CSF of that list a run's stored outputs allow.

Plug-in CSFs of other packages enter the same list (:func:`fdbench.csf.register_csf`, the
entry-point group ``fdbench.csfs``); :func:`compute_csfs` returns them after the built-ins, so
``fdbench evaluate``, the benchmark, its analysis and its report show them as any other CSF.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from fdbench.outputs.schema import RunOutputs, SplitOutputs

from . import blocks
from . import ensemble as ens
from . import evidential as edl
from . import features as feat
from . import heads as hd
from . import mcdropout as mcd
from . import openmax as om
from . import pnorm as pn
from . import softmax as sm
from . import temperature as temp
from .specs import CSFContext, CSFSpec, add_csf, csf_specs

__all__ = [
    "OPT_IN",
    "REGISTRY",
    "available_csfs",
    "clear_fit_cache",
    "compute_csfs",
    "logit_terms",
]

_FIT_CACHE: dict[int, dict[str, Any]] = {}


#: The (features or logits, labels) pair of a run's train split.
_Pair = tuple[np.ndarray, np.ndarray]


def clear_fit_cache() -> None:
    """Forget every cached fit (temperature, feature models)."""
    _FIT_CACHE.clear()


def _fits(run: RunOutputs) -> dict[str, Any]:
    key = id(run)
    if key not in _FIT_CACHE:
        _FIT_CACHE[key] = {}
        weakref.finalize(run, _FIT_CACHE.pop, key, None)
    return _FIT_CACHE[key]


def _cached(run: RunOutputs, name: str, make: Callable[[], Any]) -> Any:
    fits = _fits(run)
    if name not in fits:
        fits[name] = make()
    return fits[name]


def _labelled(split: SplitOutputs) -> np.ndarray:
    return np.asarray(split.labels) >= 0


def _temperature(run: RunOutputs) -> float | None:
    val = run.splits.get("val")
    if val is None or not _labelled(val).any():
        return None
    mask = _labelled(val)
    return _cached(
        run,
        "temperature",
        lambda: temp.fit_temperature(
            np.asarray(val.logits)[mask], np.asarray(val.labels)[mask], method="fd-shifts"
        ),
    )


def _train_features(run: RunOutputs) -> tuple[np.ndarray, np.ndarray] | None:
    train = run.splits.get("train")
    if train is None or train.features is None:
        return None
    mask = _labelled(train)
    if not mask.any():
        return None
    return np.asarray(train.features)[mask], np.asarray(train.labels)[mask]


def _train_logits(run: RunOutputs) -> tuple[np.ndarray, np.ndarray] | None:
    train = run.splits.get("train")
    if train is None:
        return None
    mask = _labelled(train)
    if not mask.any():
        return None
    return np.asarray(train.logits, dtype=np.float64)[mask], np.asarray(train.labels)[mask]


def _ensemble_members(
    run: RunOutputs, split: str, ensemble: list[RunOutputs] | None
) -> list[SplitOutputs]:
    if not ensemble:
        return []
    members = ensemble if any(m is run for m in ensemble) else [run, *ensemble]
    missing = [i for i, m in enumerate(members) if split not in m.splits]
    if missing:
        raise ValueError(f"ensemble members {missing} have no split {split!r}")
    return [m.splits[split] for m in members]


# What each group of built-in CSFs reads and when the stored outputs allow it.


def _logits(ctx: CSFContext) -> np.ndarray:
    return ctx.once(
        "logits", lambda: np.asarray(ctx.run.splits[ctx.split].logits, dtype=np.float64)
    )


def _softmax_scores(ctx: CSFContext) -> dict[str, np.ndarray]:
    """The logit CSFs of the split (TEMP-MLS where a temperature is fitted), all computed in one
    pass of row blocks (:func:`fdbench.csf.blocks.softmax_csfs_and_terms`) on the first
    request; the split's logit-metric terms of the same pass are kept for
    :func:`logit_terms`."""

    def make() -> dict[str, np.ndarray]:
        labels = ctx.run.splits[ctx.split].labels
        csfs, terms = blocks.softmax_csfs_and_terms(
            _logits(ctx), labels, temperature=_temperature(ctx.run)
        )
        _fits(ctx.run)[_terms_key(ctx.split)] = terms
        return csfs

    return ctx.once("softmax_csfs", make)


def _terms_key(split: str) -> str:
    return f"logit_terms/{split}"


def logit_terms(run: RunOutputs, split: str) -> blocks.LogitTerms | None:
    """The per-sample NLL and Brier terms and arg-max predictions of ``split``'s logits
    (:class:`fdbench.csf.blocks.LogitTerms`) that :func:`compute_csfs` computed with the logit
    CSFs of ``run`` on ``split`` (the latest call); ``None`` where it has not, or could not
    (logits not C-contiguous, labels not integers)."""
    return cast("blocks.LogitTerms | None", _fits(run).get(_terms_key(split)))


def _has_val_labels(ctx: CSFContext) -> bool:
    val = ctx.run.splits.get("val")
    return val is not None and bool(_labelled(val).any())


def _has_mcd(ctx: CSFContext) -> bool:
    return ctx.run.splits[ctx.split].mcd_logits is not None


def _mcd(ctx: CSFContext) -> mcd.MCDSummary:
    return ctx.once(
        "mcd", lambda: mcd.mcd_summary(cast(np.ndarray, ctx.run.splits[ctx.split].mcd_logits))
    )


def _has_ensemble(ctx: CSFContext) -> bool:
    return len(_ensemble_members(ctx.run, ctx.split, ctx.ensemble)) > 1


def _ens(ctx: CSFContext) -> mcd.MCDSummary:
    def make() -> mcd.MCDSummary:
        members = _ensemble_members(ctx.run, ctx.split, ctx.ensemble)
        return mcd.mcd_summary(ens.stack_members([m.logits for m in members]))

    return ctx.once("ens", make)


def _has_features(ctx: CSFContext) -> bool:
    return ctx.run.splits[ctx.split].features is not None and _train_features(ctx.run) is not None


def _features(ctx: CSFContext) -> np.ndarray:
    return np.asarray(ctx.run.splits[ctx.split].features, dtype=np.float64)


def _has_two_train_classes(ctx: CSFContext) -> bool:
    return _has_features(ctx) and np.unique(cast(_Pair, _train_features(ctx.run))[1]).size >= 2


def _has_fc(ctx: CSFContext) -> bool:
    return _has_features(ctx) and "fc_weight" in ctx.run.meta and "fc_bias" in ctx.run.meta


def _mahalanobis(ctx: CSFContext) -> np.ndarray:
    train_x, train_y = cast(_Pair, _train_features(ctx.run))
    fit = _cached(ctx.run, "mahalanobis", lambda: feat.fit_mahalanobis(train_x, train_y))
    return feat.mahalanobis_score(_features(ctx), fit)


def _dknn(ctx: CSFContext) -> np.ndarray:
    train_x, _ = cast(_Pair, _train_features(ctx.run))
    fit = _cached(ctx.run, "knn", lambda: feat.fit_knn(train_x))
    return feat.knn_score(_features(ctx), fit, k=ctx.knn_k)


def _trust(ctx: CSFContext) -> np.ndarray:
    train_x, train_y = cast(_Pair, _train_features(ctx.run))
    fit = _cached(ctx.run, "trust", lambda: feat.fit_trust_score(train_x, train_y))
    predicted = np.argmax(_logits(ctx), axis=1) if ctx.predictions is None else ctx.predictions
    return feat.trust_score(_features(ctx), predicted, fit)


def _vim(ctx: CSFContext) -> np.ndarray:
    train_x, _ = cast(_Pair, _train_features(ctx.run))
    meta = ctx.run.meta
    fit = _cached(ctx.run, "vim", lambda: feat.fit_vim(train_x, meta["fc_weight"], meta["fc_bias"]))
    return feat.vim_score(_features(ctx), _logits(ctx), fit)


def _has_openmax(ctx: CSFContext) -> bool:
    return ctx.openmax is not None and _train_logits(ctx.run) is not None


def _openmax(ctx: CSFContext) -> np.ndarray:
    train_logits, train_labels = cast(_Pair, _train_logits(ctx.run))
    fit = _cached(
        ctx.run,
        f"openmax{ctx.openmax}",
        lambda: om.fit_openmax(train_logits, train_labels, ctx.openmax),
    )
    return om.openmax_score(_logits(ctx), fit)


def _logit_csf(name, function, colour, *, calibration="platt", binary="keep") -> CSFSpec:
    """One of the row-wise logit CSFs of :data:`fdbench.csf.blocks.SOFTMAX_CSFS`, computed with
    the others in one pass of row blocks (``function`` is its array-level function)."""
    return CSFSpec(
        name,
        function,
        "logits",
        "logits",
        lambda ctx: _softmax_scores(ctx)[name],
        calibration=calibration,
        binary=binary,
        colour=colour,
    )


def _summary_csf(name, function, make, colour, *, mcd_run, calibration="platt", binary="keep"):
    """An MC-dropout (``mcd_run``) or ensemble CSF computed from the shared summary."""
    return CSFSpec(
        name,
        function,
        "mcd_logits" if mcd_run else "logits of several runs (ensemble)",
        "mcd_logits" if mcd_run else "ensemble",
        lambda ctx: make((_mcd if mcd_run else _ens)(ctx)),
        _has_mcd if mcd_run else _has_ensemble,
        calibration=calibration,
        judged_by="mcd" if mcd_run else "ensemble",
        binary=binary,
        colour=colour,
    )


def _head_csf(name, function, head, colour, *, judged_by="logits", calibration="none"):
    return CSFSpec(
        name,
        function,
        f"head {head!r}" + (" (N × K Dirichlet parameters)" if head == "edl_alpha" else ""),
        "head",
        lambda ctx: function(np.asarray(ctx.run.splits[ctx.split].heads[head])),
        lambda ctx: head in ctx.run.splits[ctx.split].heads,
        calibration=calibration,
        judged_by=judged_by,
        colour=colour,
        head=head,
    )


def _msr_of(s: mcd.MCDSummary) -> np.ndarray:
    return s.mean_probs.max(axis=1)


def _pe_of(s: mcd.MCDSummary) -> np.ndarray:
    return -s.predictive_entropy


def _ee_of(s: mcd.MCDSummary) -> np.ndarray:
    return -s.mean_entropy


def _mi_of(s: mcd.MCDSummary) -> np.ndarray:
    return s.mean_entropy - s.predictive_entropy


#: The built-in CSFs in the order :func:`compute_csfs` returns them. Calibration treatments
#: follow FD-Shifts (fd_shifts/analysis/__init__.py, ``Analysis._get_confidence_scores``):
#: ``"temperature"`` for TEMP-MLS (already the temperature-scaled softmax); ``"platt"`` for CSFs
#: whose FD-Shifts name contains ``_pe``, ``_ee``, ``_mi``, ``_sv``, ``maha`` or ``_mls`` (a
#: range beyond [0, 1]); ``"none"`` for probabilities (``det_mcp``, ``mcd_mcp``, the learned
#: heads). CSFs FD-Shifts lacks or leaves unscaled although they are not probabilities (DOCTOR,
#: TrustScore, DKNN, ViM, ENS-*) follow its stated rule: Platt scaling for a range beyond
#: [0, 1]. ODIN, a softmax probability (of the tempered, perturbed input), and OpenMax's
#: 1 − P(unknown), a probability in [0, 1], are used as they are. Colours: see
#: :mod:`fdbench.report.palette` (the 16 colour-blind-safe colours cannot tell 32 CSFs apart:
#: the common ones are all distinct, the ensemble CSFs share their single-network
#: counterpart's colour).
_BUILTINS = (
    _logit_csf("MSR", sm.msr, "#0072B2", calibration="none", binary="predicted_class"),
    _logit_csf("MLS", sm.mls, "#E69F00"),
    _logit_csf("PE", sm.pe, "#009E73", binary="exclude"),
    _logit_csf("energy", sm.energy, "#CC79A7"),
    _logit_csf("DOCTOR", sm.doctor, "#D55E00"),
    CSFSpec(
        "TEMP-MLS",
        temp.temp_mls,
        "logits; temperature fitted on split 'val' (FD-Shifts)",
        "logits",
        lambda ctx: _softmax_scores(ctx)["TEMP-MLS"],
        _has_val_labels,
        fit="val",
        calibration="temperature",
        colour="#56B4E9",
    ),
    _summary_csf(
        "MCD-MSR",
        mcd.mcd_msr,
        _msr_of,
        "#332288",
        mcd_run=True,
        calibration="none",
        binary="predicted_class",
    ),
    _summary_csf("MCD-PE", mcd.mcd_pe, _pe_of, "#DDCC77", mcd_run=True, binary="exclude"),
    _summary_csf("MCD-EE", mcd.mcd_ee, _ee_of, "#117733", mcd_run=True, binary="exclude"),
    _summary_csf("MCD-MI", mcd.mcd_mi, _mi_of, "#AA4499", mcd_run=True),
    _summary_csf("MCD-MLS", mcd.mcd_mls, lambda s: s.max_mean_logit, "#E69F00", mcd_run=True),
    _summary_csf(
        "ENS-MSR",
        ens.ens_msr,
        _msr_of,
        "#0072B2",
        mcd_run=False,
        calibration="none",
        binary="predicted_class",
    ),
    _summary_csf("ENS-PE", ens.ens_pe, _pe_of, "#009E73", mcd_run=False, binary="exclude"),
    _summary_csf("ENS-EE", ens.ens_ee, _ee_of, "#117733", mcd_run=False, binary="exclude"),
    _summary_csf("ENS-MI", ens.ens_mi, _mi_of, "#AA4499", mcd_run=False),
    CSFSpec(
        "Mahalanobis",
        feat.mahalanobis_score,
        "features; split 'train' features+labels",
        "features",
        _mahalanobis,
        _has_features,
        fit="train",
        colour="#F0E442",
    ),
    CSFSpec(
        "DKNN",
        feat.knn_score,
        "features; split 'train' features",
        "features",
        _dknn,
        _has_features,
        fit="train",
        colour="#44AA99",
    ),
    CSFSpec(
        "TrustScore",
        feat.trust_score,
        "features; split 'train' features+labels",
        "features",
        _trust,
        _has_two_train_classes,
        fit="train",
        colour="#999933",
    ),
    CSFSpec(
        "ViM",
        feat.vim_score,
        "features; 'train' features; meta fc_weight, fc_bias",
        "features",
        _vim,
        _has_fc,
        fit="train",
        colour="#88CCEE",
    ),
    _head_csf("DeVries", hd.devries, "devries", "#AA4499"),
    _head_csf("DG-Res", hd.dg_res, "dg_reservation", "#882255"),
    _head_csf("ConfidNet", hd.confidnet, "confidnet", "#CC6677"),
    _head_csf("DeVries-MCD", hd.devries, "devries_mcd", "#88CCEE", judged_by="mcd"),
    _head_csf("DG-Res-MCD", hd.dg_res, "dg_reservation_mcd", "#CC6677", judged_by="mcd"),
    _head_csf("ConfidNet-MCD", hd.confidnet, "confidnet_mcd", "#DDCC77", judged_by="mcd"),
    _head_csf("EDL-MSR", edl.edl_msr, "edl_alpha", "#882255"),
    _head_csf("EDL-Unc", edl.edl_uncertainty, "edl_alpha", "#332288", calibration="platt"),
    _head_csf("ODIN", hd.odin, "odin", "#D55E00"),
    _head_csf("DUQ", hd.duq, "duq", "#44AA99"),
    CSFSpec(
        "OpenMax",
        om.openmax_score,
        "logits; split 'train' logits+labels; opt-in (openmax=)",
        "logits",
        _openmax,
        _has_openmax,
        fit="train",
        calibration="none",
        colour="#AA4499",
    ),
    # The logit p-norm CSFs of Cattelan & Silva ("How to fix a broken confidence estimator",
    # UAI 2024), whose p (and T) are searched on the validation split by AURC; the zoo job
    # (``fdbench.zoo``) evaluates them on every member.
    CSFSpec(
        "MaxLogit-pNorm",
        pn.maxlogit_pnorm,
        "logits; p fitted on split 'val' by AURC",
        "logits",
        None,
        fit="val",
        colour="#E69F00",
        opt_in=True,
    ),
    CSFSpec(
        "pNormSoftmax",
        pn.pnorm_softmax,
        "logits; p and T fitted on split 'val' by AURC",
        "logits",
        None,
        fit="val",
        colour="#56B4E9",
        opt_in=True,
    ),
)
for _spec in _BUILTINS:
    add_csf(_spec)

#: Every built-in CSF that :func:`compute_csfs` computes, by name (a view of the list of
#: :mod:`fdbench.csf.specs`).
REGISTRY: dict[str, CSFSpec] = {s.name: s for s in _BUILTINS if not s.opt_in}

#: Built-in CSFs computed only where a job asks for them (not by :func:`compute_csfs`, so the
#: benchmark's tables keep their CSFs).
OPT_IN: dict[str, CSFSpec] = {s.name: s for s in _BUILTINS if s.opt_in}


def _context(run, split, ensemble, knn_k, openmax, predictions) -> CSFContext:
    if split not in run.splits:
        raise ValueError(f"split must be one of {sorted(run.splits)}, got {split!r}")
    return CSFContext(run, split, ensemble, knn_k, openmax, predictions)


def _available(ctx: CSFContext) -> list[CSFSpec]:
    return [s for s in csf_specs().values() if not s.opt_in and s.available(ctx)]


def available_csfs(
    run: RunOutputs,
    split: str,
    *,
    ensemble: list[RunOutputs] | None = None,
    openmax: om.OpenMaxParams | None = None,
) -> list[str]:
    """Names of the CSFs that :func:`compute_csfs` can compute for ``split`` of ``run``: those
    of the list (:func:`fdbench.csf.csf_specs`) whose ``available`` accepts the outputs."""
    ctx = _context(run, split, ensemble, 50, openmax, None)
    return [s.name for s in _available(ctx)]


def compute_csfs(
    run: RunOutputs,
    split: str,
    *,
    ensemble: list[RunOutputs] | None = None,
    knn_k: int = 50,
    openmax: om.OpenMaxParams | None = None,
    predictions: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Compute every CSF of the list the stored outputs of ``run`` allow on ``split``.

    Returns ``{name: confidence}`` (float64, length N, higher = more confident) in the order of
    the list (:func:`fdbench.csf.csf_specs`, opt-in CSFs left out): logit CSFs always;
    TEMP-MLS when split ``val`` has labelled samples (temperature fitted there on all of them,
    FD-Shifts' fit: ``fit_temperature(..., method="fd-shifts")``); MCD-* when the split has
    ``mcd_logits``; ENS-* when ``ensemble`` (other runs of the same method, ``run`` added if
    absent) gives at least two members; Mahalanobis, DKNN, TrustScore when the split has
    features and split ``train`` has labelled features (ViM also needs ``meta['fc_weight']``
    and ``meta['fc_bias']``); the CSFs of stored heads (EDL-MSR and EDL-Unc from
    ``edl_alpha``); OpenMax (:mod:`fdbench.csf.openmax`) when ``openmax`` gives its parameters
    and split ``train`` has labelled logits (fitted on the correctly classified ones, as
    Bendale & Boult and Kim et al.); then every plug-in CSF available on the split, its output
    validated (N finite numbers). Fits on ``train``/``val`` are computed once per run object
    and cached. Feature CSFs use the predicted class where needed (TrustScore):
    ``predictions`` when given (the binary protocol's thresholded prediction), else
    ``argmax(logits)``.
    """
    ctx = _context(run, split, ensemble, knn_k, openmax, predictions)
    return {
        s.name: cast(Callable[[CSFContext], np.ndarray], s.compute)(ctx) for s in _available(ctx)
    }
