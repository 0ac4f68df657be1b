"""One zoo member's evaluation: CSFs streamed block by block, metrics, TS, p-norm fits, C-OOD."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from fdbench import metrics as M
from fdbench.csf.pnorm import fit_maxlogit_pnorm, fit_pnorm_softmax, maxlogit_pnorm, pnorm_softmax
from fdbench.csf.softmax import log_softmax
from fdbench.csf.temperature import fit_temperature
from fdbench.data.shifts.cood import (
    cood_estimation_split,
    cood_group_size,
    cood_severity_levels,
    cood_small_classes,
)
from fdbench.metrics.conventions import GALIL_START_INDEX

from .members import (
    Member,
    check_member,
    declared_val_mask,
    has_array,
    iter_blocks,
    read_array,
)

if TYPE_CHECKING:
    from .config import ZooConfig

__all__ = [
    "RANKING_METRICS",
    "MemberFits",
    "block_scores",
    "evaluate_member",
    "fit_member",
    "sac",
    "sac_name",
]

#: Metrics of every (CSF, calibration) row, from :func:`fdbench.metrics.evaluate_all`.
RANKING_METRICS = ("accuracy", "auroc_f", "aurc", "eaurc", "augrc", "naurc", "fpr@95tpr")
#: The softmax rows (MSR before/after TS) also get the calibration and scoring metrics.
PROBABILITY_METRICS = ("ece", "nll", "brier")
#: Bytes of a read block's outputs (logits and MC-dropout passes) scored at once: the
#: temporaries of :func:`block_scores` (a few times this) stay small beside a member's logits
#: however large ``chunk_size`` is. Scores are per sample, so the rows scored together do not
#: change them.
SCORE_BYTES = 2**18


@dataclass(frozen=True)
class MemberFits:
    """What a member's validation split fixes: the temperature (Guo et al., NLL minimum), the
    p of MaxLogit-pNorm (``None``: MSR fallback) and the p and T of p-NormSoftmax, and where
    the validation split came from (``"val"`` stored, ``"declared"`` carved out of test)."""

    temperature: float
    pnorm_p: float | None
    pnorm_softmax_p: float | None
    pnorm_softmax_t: float
    n_val: int
    n_classes: int
    val_source: str


def sac_name(target: float) -> str:
    """The metric name of the selective accuracy constraint at ``target``: ``sac@95``."""
    return f"sac@{round(target * 100, 6):g}"


def sac(residuals: np.ndarray, confidence: np.ndarray, target: float) -> float:
    """Selective accuracy constraint (Galil et al., ICLR 2023, Sec. 2): the largest coverage
    whose selective accuracy is at least ``target``, or NaN when no threshold reaches it.

    The coverage is :func:`fdbench.metrics.coverage_at_risk` at risk ``1 − target`` (equal
    confidences accepted together, METRICS.md); NaN marks the constraint as infeasible.
    """
    if not 0 < target < 1:
        raise ValueError(f"target: expected an accuracy in (0, 1), got {target!r}")
    coverage = M.coverage_at_risk(residuals, confidence, 1.0 - target)
    return coverage if coverage > 0 else float("nan")


def _read_split(member: Member, split: str, chunk_size: int) -> np.ndarray:
    return np.concatenate(
        [b["logits"] for b in iter_blocks(member, split, ("logits",), chunk_size=chunk_size)]
    )


def fit_member(
    member: Member, config: ZooConfig, test_labels: np.ndarray
) -> tuple[MemberFits, np.ndarray | None]:
    """Fit TS and the p-norm CSFs on the member's validation split only.

    A stored ``val`` split is used as it is; otherwise :func:`declared_val_mask` carves a
    seeded, stratified ``val_fraction`` out of the test samples, returned as the mask of test
    samples left out of every test metric.
    """
    declared = None
    if has_array(member, "val", "logits"):
        logits = _read_split(member, "val", config.chunk_size)
        labels = np.asarray(read_array(member, "val", "labels"), dtype=np.int64)
        source = "val"
    else:
        declared = declared_val_mask(test_labels, config.val_fraction, config.seed)
        parts, start = [], 0
        for block in iter_blocks(member, "test", ("logits",), chunk_size=config.chunk_size):
            z = block["logits"]
            parts.append(z[declared[start : start + z.shape[0]]])
            start += z.shape[0]
        logits, labels = np.concatenate(parts), test_labels[declared]
        source = "declared"
    temperature = fit_temperature(logits, labels)
    p = fit_maxlogit_pnorm(logits, labels, p_grid=config.pnorm.p_grid).p
    soft_p, soft_t = None, 1.0
    if config.pnorm.softmax:
        fit = fit_pnorm_softmax(
            logits, labels, p_grid=config.pnorm.p_grid, t_grid=config.pnorm.t_grid()
        )
        soft_p, soft_t = fit.p, fit.temperature
    fits = MemberFits(
        temperature, p, soft_p, soft_t, int(labels.size), int(logits.shape[1]), source
    )
    return fits, declared


def block_scores(
    logits: np.ndarray,
    fits: MemberFits,
    *,
    labels: np.ndarray | None = None,
    mcd_logits: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Per-sample scores of one block: predictions, every CSF (``MSR@ts`` is MSR of the
    temperature-scaled logits), and with ``labels`` the per-sample NLL and Brier score
    before and after TS; with ``mcd_logits`` (N × S × K) MCD-MSR and MCD-PE (entropy of the
    mean softmax, Galil et al.'s MC-dropout κ) and their prediction ``mcd_pred``."""
    out = {"pred": np.argmax(logits, axis=1), "MLS": logits.max(axis=1)}
    rows = np.arange(logits.shape[0])
    for suffix, temperature in (("", None), ("@ts", fits.temperature)):
        logp = log_softmax(logits if temperature is None else logits / temperature)
        out[f"MSR{suffix}"] = np.exp(logp.max(axis=1))
        probs = np.exp(logp)
        if labels is not None:
            out[f"nll{suffix}"] = -logp[rows, labels]
            picked = probs[rows, labels]
        if temperature is None:
            out["PE"] = np.sum(np.multiply(probs, logp, out=logp), axis=1)
        if labels is not None:
            squares = np.multiply(probs, probs, out=probs)
            out[f"brier{suffix}"] = np.sum(squares, axis=1) - 2 * picked + 1
        del logp, probs
    p = fits.pnorm_p
    out["MaxLogit-pNorm"] = out["MSR"] if p is None else maxlogit_pnorm(logits, p)
    if fits.pnorm_softmax_p is not None:
        out["pNormSoftmax"] = pnorm_softmax(logits, fits.pnorm_softmax_p, fits.pnorm_softmax_t)
    if mcd_logits is not None:
        mean = np.exp(log_softmax(mcd_logits, axis=2)).mean(axis=1)
        out["mcd_pred"] = np.argmax(mean, axis=1)
        out["MCD-MSR"] = mean.max(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out["MCD-PE"] = np.sum(np.where(mean > 0, mean * np.log(mean), 0.0), axis=1)
    return out


def _stream(
    member: Member,
    split: str,
    fits: MemberFits,
    chunk_size: int,
    labels: np.ndarray | None,
    with_mcd: bool,
) -> dict[str, np.ndarray]:
    arrays = ("logits", "mcd_logits") if with_mcd else ("logits",)
    parts: dict[str, list[np.ndarray]] = {}
    start = 0
    for block in iter_blocks(member, split, arrays, chunk_size=chunk_size):
        z, mcd = block["logits"], block.get("mcd_logits")
        row_bytes = sum(values[0].nbytes for values in block.values())
        step = max(1, SCORE_BYTES // row_bytes)
        for first in range(0, z.shape[0], step):
            rows = slice(first, min(first + step, z.shape[0]))
            y = None if labels is None else labels[start + rows.start : start + rows.stop]
            scores = block_scores(
                z[rows], fits, labels=y, mcd_logits=None if mcd is None else mcd[rows]
            )
            for key, value in scores.items():
                parts.setdefault(key, []).append(value)
        start += z.shape[0]
    return {key: np.concatenate(values) for key, values in parts.items()}


def _rows(member: str, csf: str, calibration: str, study: str, values: dict, n: int) -> list:
    return [
        {
            "member": member,
            "csf": csf,
            "calibration": calibration,
            "study": study,
            "metric": metric,
            "value": float(value),
            "n_samples": n,
        }
        for metric, value in values.items()
    ]


def _id_metrics(
    residuals: np.ndarray, confidence: np.ndarray, config: ZooConfig
) -> dict[str, float]:
    suite = M.evaluate_all(residuals, confidence)
    values = {m: suite[m] for m in RANKING_METRICS}
    for target in config.sac_targets:
        values[sac_name(target)] = sac(residuals, confidence, target)
    if config.authors_code is not None:
        values.update(_authors_code_metrics(residuals, confidence, config))
    return values


def _authors_code_metrics(
    residuals: np.ndarray, confidence: np.ndarray, config: ZooConfig
) -> dict[str, float]:
    """Galil et al.'s code's AURC, AUROC and SAC (:mod:`fdbench.metrics.conventions`), ties in
    ``config.authors_code`` order; SAC NaN with at most 200 samples. Their code sorts float32
    confidences: the ``torch`` order sorts them as float32."""
    order = config.authors_code
    conf = confidence.astype(np.float32) if order == "torch" else confidence
    keys = ("aurc_per_sample", "auroc_f_ordered")
    values = M.evaluate_conventions(residuals, conf, keys, tie_order=order)
    for target in config.sac_targets:
        big_enough = residuals.size > GALIL_START_INDEX
        values[f"{sac_name(target)}_first_drop"] = (
            M.coverage_at_accuracy_first_drop(residuals, conf, target, tie_order=order)
            if big_enough
            else float("nan")
        )
    return values


def _percentiles(n_levels: int) -> tuple[float, ...]:
    values = np.linspace(0, 100, n_levels)
    return tuple(int(v) if float(v).is_integer() else float(v) for v in values)


def evaluate_member(member: Member, config: ZooConfig) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Evaluate one member; return its results rows and its C-OOD levels table.

    Results rows (``member, csf, calibration, study, metric, value, n_samples``):

    - ``study == "iid"``: per CSF (MSR, MLS, PE, MaxLogit-pNorm, pNormSoftmax, and MCD-MSR,
      MCD-PE where the member has MC-dropout logits; the MCD rows judge the prediction of the
      mean softmax) the metrics :data:`RANKING_METRICS` and SAC at every target
      (:func:`sac`, NaN = infeasible); MSR also after temperature scaling
      (``calibration == "ts"``, T fitted on validation only) and, for both, ECE
      (``n_bins`` equal-width bins), NLL and Brier of the softmax. With ``authors_code``
      every such row also holds Galil et al.'s code's quantities
      (:func:`_authors_code_metrics`).
    - ``study == "val"``: the fits: ``temperature``, ``pnorm_p``, ``pnorm_softmax_p``,
      ``pnorm_softmax_t`` (NaN where MSR's fallback won), ``n_val``, ``n_classes``; the
      column ``val_source`` says whether the validation split was stored or declared.
    - ``study == "cood"``: ``classes_removed`` (OOD classes with fewer than ``n_estimation +
      n_test`` samples, removed unless ``cood.keep_small_classes``; Galil et al., App. L.1)
      and ``classes_kept``.
    - ``study == "cood/<percentile>"``, for every CSF of ``config.cood.csfs`` the member has:
      ``auroc_cood`` (ID test samples positive against the level's OOD test samples, ties ½),
      ``severity`` (the level's mean class score) and ``group_size``.
    - ``study == "imagenet_o"``, where the member has outputs on ImageNet-O, for the same CSFs:
      ``auroc_ood``, the ID test samples positive against every ImageNet-O sample (the extra
      OOD set of Galil et al.'s Figure 6, one set without levels).

    The member is first checked (:func:`fdbench.zoo.members.check_member`): dtypes, shapes,
    labels and OOD class ids; its logits are checked for NaN/inf as they are streamed.

    Levels table: per CSF and level the percentile, severity and the OOD class ids of its
    group (JSON), so that every C-OOD number can be recomputed from the member's outputs.
    """
    check_member(member)
    labels = np.asarray(read_array(member, "test", "labels"), dtype=np.int64)
    fits, declared = fit_member(member, config, labels)
    with_mcd = has_array(member, "test", "mcd_logits")
    test = _stream(member, "test", fits, config.chunk_size, labels, with_mcd)
    keep = np.ones(labels.size, dtype=bool) if declared is None else ~declared
    test = {k: v[keep] for k, v in test.items()}
    y = labels[keep]
    n = int(y.size)
    residuals = (test["pred"] != y).astype(np.float64)
    rows: list[dict] = []
    csfs = ["MSR", "MLS", "PE", "MaxLogit-pNorm"]
    csfs += ["pNormSoftmax"] if "pNormSoftmax" in test else []
    for csf in csfs:
        rows += _rows(member.name, csf, "none", "iid", _id_metrics(residuals, test[csf], config), n)
    for calibration, suffix in (("none", ""), ("ts", "@ts")):
        values = {} if calibration == "none" else _id_metrics(residuals, test["MSR@ts"], config)
        values["ece"] = M.ece(residuals, test[f"MSR{suffix}"], n_bins=config.n_bins)
        values["nll"] = float(np.mean(test[f"nll{suffix}"]))
        values["brier"] = float(np.mean(test[f"brier{suffix}"]))
        rows += _rows(member.name, "MSR", calibration, "iid", values, n)
    if with_mcd:
        mcd_residuals = (test["mcd_pred"] != y).astype(np.float64)
        for csf in ("MCD-MSR", "MCD-PE"):
            values = _id_metrics(mcd_residuals, test[csf], config)
            rows += _rows(member.name, csf, "none", "iid", values, n)
    nan = float("nan")
    fitted = {k: v for k, v in asdict(fits).items() if k != "val_source"}
    fitted = {k: nan if v is None else v for k, v in fitted.items()}
    rows += _rows(member.name, "", "none", "val", fitted, fits.n_val)
    levels = []
    if has_array(member, "ood", "logits"):
        cood_rows, levels = _cood(member, config, fits, test, with_mcd)
        rows += cood_rows
    if has_array(member, "imagenet_o", "logits"):
        rows += _extra_ood(member, config, fits, test, with_mcd, "imagenet_o")
    table = pd.DataFrame(rows).assign(val_source=fits.val_source)
    return table, pd.DataFrame(
        levels,
        columns=["member", "csf", "level", "percentile", "severity", "group_size", "classes"],
    )


def _cood(
    member: Member,
    config: ZooConfig,
    fits: MemberFits,
    test: dict[str, np.ndarray],
    with_mcd: bool,
) -> tuple[list[dict], list[dict]]:
    classes = np.asarray(read_array(member, "ood", "classes"), dtype=np.int64)
    ood_mcd = with_mcd and has_array(member, "ood", "mcd_logits")
    ood = _stream(member, "ood", fits, config.chunk_size, None, ood_mcd)
    settings = config.cood
    sizes = {"n_estimation": settings.n_estimation, "n_test": settings.n_test}
    estimation, testing = cood_estimation_split(
        classes, **sizes, seed=config.seed, keep_small_classes=settings.keep_small_classes
    )
    used = estimation | testing
    n_classes = int(np.unique(classes[used]).size)
    removed = 0 if settings.keep_small_classes else cood_small_classes(classes, **sizes).size
    counts = {"classes_removed": removed, "classes_kept": n_classes}
    rows: list[dict] = _rows(member.name, "", "none", "cood", counts, int(used.sum()))
    if n_classes == 0:  # the zoo run warns once for all such members (classes_kept = 0)
        return rows, []
    k = cood_group_size(fits.n_classes, n_classes, settings.n_levels)
    levels: list[dict] = []
    for csf in settings.csfs:
        if csf not in ood or csf not in test:
            continue
        found = cood_severity_levels(
            ood[csf][used],
            classes[used],
            k=k,
            estimation_mask=estimation[used],
            test_mask=testing[used],
            percentiles=_percentiles(settings.n_levels),
        )
        id_conf = test[csf]
        pool = ood[csf][used]
        for level, (p, idx) in enumerate(zip(found.percentiles, found.test_indices, strict=True)):
            conf = np.concatenate([id_conf, pool[idx]])
            is_ood = np.concatenate([np.zeros(id_conf.size), np.ones(idx.size)])
            values = {
                "auroc_cood": M.auroc_out(is_ood, conf),
                "severity": float(found.scores[level]),
                "group_size": k,
            }
            rows += _rows(member.name, csf, "none", f"cood/{p}", values, int(idx.size))
            levels.append(
                {
                    "member": member.name,
                    "csf": csf,
                    "level": level,
                    "percentile": float(p),
                    "severity": float(found.scores[level]),
                    "group_size": k,
                    "classes": json.dumps([int(c) for c in found.groups[level]]),
                }
            )
    return rows, levels


def _extra_ood(
    member: Member,
    config: ZooConfig,
    fits: MemberFits,
    test: dict[str, np.ndarray],
    with_mcd: bool,
    split: str,
) -> list[dict]:
    """``auroc_ood`` of every CSF of ``config.cood.csfs`` on the OOD set ``split`` as a whole:
    the member's ID test samples (positive) against all of the set's samples, ties ½."""
    mcd = with_mcd and has_array(member, split, "mcd_logits")
    ood = _stream(member, split, fits, config.chunk_size, None, mcd)
    rows: list[dict] = []
    for csf in config.cood.csfs:
        if csf not in ood or csf not in test:
            continue
        conf = np.concatenate([test[csf], ood[csf]])
        is_ood = np.concatenate([np.zeros(test[csf].size), np.ones(ood[csf].size)])
        values = {"auroc_ood": M.auroc_out(is_ood, conf)}
        rows += _rows(member.name, csf, "none", split, values, int(ood[csf].size))
    return rows
