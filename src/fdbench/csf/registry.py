"""The registry of CSFs under their papers' names, plug-in CSFs, and ``compute_csfs``.

Plug-in CSFs
------------
A CSF of another package is a function of the stored outputs, ``function(run, split)``
(a :class:`~fdbench.outputs.RunOutputs` and the name of one of its splits) returning N
confidences, higher = more confident. It is registered with the :func:`register_csf`
decorator, or through the entry-point group ``fdbench.csfs`` (:data:`ENTRY_POINT_GROUP`) of
an installed distribution, so that no fdbench file is edited::

    # mypkg/csfs.py
    from fdbench.csf import register_csf

    @register_csf("MSR-squared", needs="logits")
    def msr_squared(run, split):
        z = run.splits[split].logits
        p = np.exp(z - z.max(1, keepdims=True))
        return (p.max(1) / p.sum(1)) ** 2

    # pyproject.toml of mypkg
    [project.entry-points."fdbench.csfs"]
    MSR-squared = "mypkg.csfs:msr_squared"

An entry point names the function (decorated or not: an undecorated one is registered under
the entry point's name) and is loaded the first time CSFs are listed. :func:`compute_csfs`
then returns the plug-in's confidences after the built-in CSFs on every split its
``available(run, split)`` accepts (all by default), so ``fdbench evaluate``, the benchmark
and its report show it as any other CSF. Training methods of other packages register the
same way through ``fdbench.methods`` (:mod:`fdbench.training.methods`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

import numpy as np

from fdbench.outputs.schema import RunOutputs, SplitOutputs

from . import ensemble as ens
from . import evidential as edl
from . import features as feat
from . import heads as hd
from . import mcdropout as mcd
from . import openmax as om
from . import pnorm as pn
from . import softmax as sm
from . import temperature as temp

__all__ = [
    "ENTRY_POINT_GROUP",
    "OPT_IN",
    "PLUGINS",
    "REGISTRY",
    "CSFInfo",
    "PluginCSF",
    "available_csfs",
    "clear_fit_cache",
    "compute_csfs",
    "plugin_csfs",
    "register_csf",
]


@dataclass(frozen=True)
class CSFInfo:
    """A registered CSF: its name, the array-level function, and what it needs."""

    name: str
    function: Callable[..., np.ndarray]
    needs: str


_ENTRIES = [
    CSFInfo("MSR", sm.msr, "logits"),
    CSFInfo("MLS", sm.mls, "logits"),
    CSFInfo("PE", sm.pe, "logits"),
    CSFInfo("energy", sm.energy, "logits"),
    CSFInfo("DOCTOR", sm.doctor, "logits"),
    CSFInfo("TEMP-MLS", temp.temp_mls, "logits; temperature fitted on split 'val' (FD-Shifts)"),
    CSFInfo("MCD-MSR", mcd.mcd_msr, "mcd_logits"),
    CSFInfo("MCD-PE", mcd.mcd_pe, "mcd_logits"),
    CSFInfo("MCD-EE", mcd.mcd_ee, "mcd_logits"),
    CSFInfo("MCD-MI", mcd.mcd_mi, "mcd_logits"),
    CSFInfo("MCD-MLS", mcd.mcd_mls, "mcd_logits"),
    CSFInfo("ENS-MSR", ens.ens_msr, "logits of several runs (ensemble)"),
    CSFInfo("ENS-PE", ens.ens_pe, "logits of several runs (ensemble)"),
    CSFInfo("ENS-EE", ens.ens_ee, "logits of several runs (ensemble)"),
    CSFInfo("ENS-MI", ens.ens_mi, "logits of several runs (ensemble)"),
    CSFInfo("Mahalanobis", feat.mahalanobis_score, "features; split 'train' features+labels"),
    CSFInfo("DKNN", feat.knn_score, "features; split 'train' features"),
    CSFInfo("TrustScore", feat.trust_score, "features; split 'train' features+labels"),
    CSFInfo("ViM", feat.vim_score, "features; 'train' features; meta fc_weight, fc_bias"),
    CSFInfo("OpenMax", om.openmax_score, "logits; split 'train' logits+labels; opt-in (openmax=)"),
    CSFInfo("DeVries", hd.devries, "head 'devries'"),
    CSFInfo("DG-Res", hd.dg_res, "head 'dg_reservation'"),
    CSFInfo("ConfidNet", hd.confidnet, "head 'confidnet'"),
    CSFInfo("DUQ", hd.duq, "head 'duq'"),
    CSFInfo("DeVries-MCD", hd.devries, "head 'devries_mcd'"),
    CSFInfo("DG-Res-MCD", hd.dg_res, "head 'dg_reservation_mcd'"),
    CSFInfo("ConfidNet-MCD", hd.confidnet, "head 'confidnet_mcd'"),
    CSFInfo("EDL-MSR", edl.edl_msr, "head 'edl_alpha' (N × K Dirichlet parameters)"),
    CSFInfo("EDL-Unc", edl.edl_uncertainty, "head 'edl_alpha' (N × K Dirichlet parameters)"),
    CSFInfo("ODIN", hd.odin, "head 'odin'"),
]

#: Every CSF by name. Each returns float64 confidences of length N, higher = more confident.
REGISTRY: dict[str, CSFInfo] = {entry.name: entry for entry in _ENTRIES}

#: CSFs computed only where a job asks for them (not by :func:`compute_csfs`, so the
#: benchmark's tables keep their CSFs): the logit p-norm CSFs of Cattelan & Silva ("How to fix
#: a broken confidence estimator", UAI 2024), whose p (and T) are searched on the validation
#: split by AURC; the zoo job (``fdbench.zoo``) evaluates them on every member.
OPT_IN: dict[str, CSFInfo] = {
    "MaxLogit-pNorm": CSFInfo(
        "MaxLogit-pNorm", pn.maxlogit_pnorm, "logits; p fitted on split 'val' by AURC"
    ),
    "pNormSoftmax": CSFInfo(
        "pNormSoftmax", pn.pnorm_softmax, "logits; p and T fitted on split 'val' by AURC"
    ),
}

#: Entry-point group through which other packages register CSFs (:func:`register_csf`).
ENTRY_POINT_GROUP = "fdbench.csfs"


@dataclass(frozen=True)
class PluginCSF:
    """A plug-in CSF: ``function(run, split)`` returns N confidences of split ``split`` of
    ``run``; ``available(run, split)`` says whether it can (``None``: always); ``needs``
    describes what it reads, as :attr:`CSFInfo.needs`."""

    name: str
    function: Callable[[RunOutputs, str], np.ndarray]
    needs: str = "stored outputs (plug-in)"
    available: Callable[[RunOutputs, str], bool] | None = None


#: Plug-in CSFs by name, in order of registration (:func:`register_csf`).
PLUGINS: dict[str, PluginCSF] = {}
_PLUGINS_LOADED = False


def register_csf(
    name: str,
    *,
    needs: str = "stored outputs (plug-in)",
    available: Callable[[RunOutputs, str], bool] | None = None,
) -> Callable[[Callable[[RunOutputs, str], np.ndarray]], Callable[[RunOutputs, str], np.ndarray]]:
    """Decorator registering ``function(run, split) -> confidences`` as the plug-in CSF
    ``name`` (returns the function unchanged).

    ``name`` must not be a built-in CSF (:data:`REGISTRY`, :data:`OPT_IN`) nor another
    function's plug-in name (``ValueError``); registering the same function again is a no-op.
    ``available(run, split)`` restricts the splits it is computed on (e.g. to runs with
    features). See the module docstring for the entry-point group ``fdbench.csfs``.
    """
    if not isinstance(name, str) or not name.strip() or name != name.strip():
        raise ValueError(f"name must be a non-empty str without surrounding spaces, got {name!r}")
    if name in REGISTRY or name in OPT_IN:
        raise ValueError(f"{name!r} is a built-in CSF; choose another name for the plug-in")
    if available is not None and not callable(available):
        raise TypeError(f"available must be callable or None, got {type(available).__name__}")

    def decorate(
        function: Callable[[RunOutputs, str], np.ndarray],
    ) -> Callable[[RunOutputs, str], np.ndarray]:
        if not callable(function):
            raise TypeError(f"register_csf({name!r}) expects a function, got {function!r}")
        known = PLUGINS.get(name)
        if known is not None and known.function is not function:
            raise ValueError(f"a plug-in CSF named {name!r} is already registered")
        PLUGINS[name] = PluginCSF(name, function, needs, available)
        return function

    return decorate


def _load_plugins() -> None:
    """Register the CSFs of the ``fdbench.csfs`` entry points (once per process)."""
    global _PLUGINS_LOADED
    if _PLUGINS_LOADED:
        return
    _PLUGINS_LOADED = True
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        function = entry.load()
        if not any(p.function is function for p in PLUGINS.values()):
            register_csf(entry.name)(function)


def plugin_csfs() -> dict[str, PluginCSF]:
    """Every registered plug-in CSF by name (entry points loaded first)."""
    _load_plugins()
    return dict(PLUGINS)


def _plugin_confidence(plugin: PluginCSF, run: RunOutputs, split: str) -> np.ndarray:
    """The plug-in's confidences, validated: N finite real numbers, as float64."""
    n = len(run.splits[split].labels)
    values = np.asarray(plugin.function(run, split))
    if values.dtype.kind not in "biuf" or values.shape != (n,):
        raise ValueError(
            f"plug-in CSF {plugin.name!r} must return {n} real confidences for split "
            f"{split!r}, got dtype {values.dtype} and shape {values.shape}"
        )
    values = values.astype(np.float64)
    if not np.isfinite(values).all():
        raise ValueError(
            f"plug-in CSF {plugin.name!r} returned {int((~np.isfinite(values)).sum())} "
            f"non-finite confidence(s) for split {split!r}"
        )
    return values


#: The CSFs computed from each stored head, in order.
_HEAD_CSFS: dict[str, tuple[str, ...]] = {
    "devries": ("DeVries",),
    "dg_reservation": ("DG-Res",),
    "confidnet": ("ConfidNet",),
    "devries_mcd": ("DeVries-MCD",),
    "dg_reservation_mcd": ("DG-Res-MCD",),
    "confidnet_mcd": ("ConfidNet-MCD",),
    "edl_alpha": ("EDL-MSR", "EDL-Unc"),
    "odin": ("ODIN",),
    "duq": ("DUQ",),
}

_FIT_CACHE: dict[int, dict[str, Any]] = {}


def head_csf_names() -> tuple[str, ...]:
    """The CSFs computed from a learned confidence head (a training method's own confidence,
    e.g. DG-Res of DeepGamblers), without their MC-dropout variants (``*-MCD``)."""
    names = (name for head in _HEAD_CSFS.values() for name in head)
    return tuple(name for name in names if not name.endswith("-MCD"))


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


def available_csfs(
    run: RunOutputs,
    split: str,
    *,
    ensemble: list[RunOutputs] | None = None,
    openmax: om.OpenMaxParams | None = None,
) -> list[str]:
    """Names of the CSFs that :func:`compute_csfs` can compute for ``split`` of ``run``."""
    if split not in run.splits:
        raise ValueError(f"split must be one of {sorted(run.splits)}, got {split!r}")
    s = run.splits[split]
    names = ["MSR", "MLS", "PE", "energy", "DOCTOR"]
    val = run.splits.get("val")
    if val is not None and _labelled(val).any():
        names.append("TEMP-MLS")
    if s.mcd_logits is not None:
        names += ["MCD-MSR", "MCD-PE", "MCD-EE", "MCD-MI", "MCD-MLS"]
    if len(_ensemble_members(run, split, ensemble)) > 1:
        names += ["ENS-MSR", "ENS-PE", "ENS-EE", "ENS-MI"]
    train = _train_features(run)
    if s.features is not None and train is not None:
        names += ["Mahalanobis", "DKNN"]
        if np.unique(train[1]).size >= 2:
            names.append("TrustScore")
        if "fc_weight" in run.meta and "fc_bias" in run.meta:
            names.append("ViM")
    names += [name for h in s.heads if h in _HEAD_CSFS for name in _HEAD_CSFS[h]]
    if openmax is not None and _train_logits(run) is not None:
        names.append("OpenMax")
    for name, plugin in plugin_csfs().items():
        if plugin.available is None or plugin.available(run, split):
            names.append(name)
    return names


def compute_csfs(
    run: RunOutputs,
    split: str,
    *,
    ensemble: list[RunOutputs] | None = None,
    knn_k: int = 50,
    openmax: om.OpenMaxParams | None = None,
    predictions: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Compute every CSF the stored outputs of ``run`` allow on ``split``.

    Returns ``{name: confidence}`` (float64, length N, higher = more confident) for the names of
    :func:`available_csfs`: logit CSFs always; TEMP-MLS when split ``val`` has labelled samples
    (temperature fitted there on all of them, FD-Shifts' fit: ``fit_temperature(...,
    method="fd-shifts")``); MCD-* when the split has ``mcd_logits``; ENS-* when
    ``ensemble`` (other runs of the same method, ``run`` added if absent) gives at least two
    members; Mahalanobis, DKNN, TrustScore when the split has features and split ``train`` has
    labelled features (ViM also needs ``meta['fc_weight']`` and ``meta['fc_bias']``); the CSFs
    of stored heads by name (EDL-MSR and EDL-Unc from ``edl_alpha``); OpenMax
    (:mod:`fdbench.csf.openmax`) when ``openmax`` gives its parameters and split ``train`` has
    labelled logits (fitted on the correctly classified ones, as Bendale & Boult and Kim et
    al.); then every plug-in CSF (:func:`register_csf`) that is available on the split, its
    output validated (N finite numbers). Fits on ``train``/``val`` are computed once per run
    object and cached.
    Feature CSFs use the predicted class where needed (TrustScore): ``predictions`` when given
    (the binary protocol's thresholded prediction), else ``argmax(logits)``.
    """
    names = available_csfs(run, split, ensemble=ensemble, openmax=openmax)
    s = run.splits[split]
    logits = np.asarray(s.logits, dtype=np.float64)
    out: dict[str, np.ndarray] = {
        "MSR": sm.msr(logits),
        "MLS": sm.mls(logits),
        "PE": sm.pe(logits),
        "energy": sm.energy(logits),
        "DOCTOR": sm.doctor(logits),
    }
    if "TEMP-MLS" in names:
        out["TEMP-MLS"] = temp.temp_mls(logits, _temperature(run))
    if "MCD-MSR" in names:
        summary = mcd.mcd_summary(s.mcd_logits)
        predictive = summary.predictive_entropy
        out["MCD-MSR"] = summary.mean_probs.max(axis=1)
        out["MCD-PE"] = -predictive
        out["MCD-EE"] = -summary.mean_entropy
        out["MCD-MI"] = summary.mean_entropy - predictive
        out["MCD-MLS"] = summary.max_mean_logit
    if "ENS-MSR" in names:
        stacked = ens.stack_members([m.logits for m in _ensemble_members(run, split, ensemble)])
        summary = mcd.mcd_summary(stacked)
        predictive = summary.predictive_entropy
        out["ENS-MSR"] = summary.mean_probs.max(axis=1)
        out["ENS-PE"] = -predictive
        out["ENS-EE"] = -summary.mean_entropy
        out["ENS-MI"] = summary.mean_entropy - predictive
    if "Mahalanobis" in names:
        x = np.asarray(s.features, dtype=np.float64)
        train_x, train_y = _train_features(run)
        maha = _cached(run, "mahalanobis", lambda: feat.fit_mahalanobis(train_x, train_y))
        out["Mahalanobis"] = feat.mahalanobis_score(x, maha)
        knn = _cached(run, "knn", lambda: feat.fit_knn(train_x))
        out["DKNN"] = feat.knn_score(x, knn, k=knn_k)
        if "TrustScore" in names:
            trust = _cached(run, "trust", lambda: feat.fit_trust_score(train_x, train_y))
            predicted = np.argmax(logits, axis=1) if predictions is None else predictions
            out["TrustScore"] = feat.trust_score(x, predicted, trust)
        if "ViM" in names:
            vim = _cached(
                run,
                "vim",
                lambda: feat.fit_vim(train_x, run.meta["fc_weight"], run.meta["fc_bias"]),
            )
            out["ViM"] = feat.vim_score(x, logits, vim)
    for head, head_csfs in _HEAD_CSFS.items():
        for name in head_csfs:
            if name in names:
                out[name] = REGISTRY[name].function(np.asarray(s.heads[head]))
    if "OpenMax" in names:
        train_logits, train_labels = _train_logits(run)
        fit = _cached(
            run, f"openmax{openmax}", lambda: om.fit_openmax(train_logits, train_labels, openmax)
        )
        out["OpenMax"] = om.openmax_score(logits, fit)
    for name in names:
        if name in PLUGINS:
            out[name] = _plugin_confidence(PLUGINS[name], run, split)
    return {name: out[name] for name in names}
