"""Stored outputs of a run -> CSFs per prediction group -> results rows."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, cast

import numpy as np

from fdbench import metrics as M
from fdbench.evaluation.confidences import (
    NON_TEST_SPLITS,
    default_studies,
    evaluate_confidences,
    splits_of,
)
from fdbench.evaluation.result_tables import TableType, check_table_type, concat_tables
from fdbench.evaluation.tables import _protocol_pools
from fdbench.protocol import Protocol
from fdbench.protocol.binary import (
    THRESHOLD_RULES,
    fpr_threshold,
    fpr_threshold_roc_curve,
    predicted_class_probability,
    threshold_predictions,
)

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from fdbench.csf.blocks import LogitTerms
    from fdbench.csf.openmax import OpenMaxParams
    from fdbench.outputs import RunOutputs


def csf_prediction_source(name: str) -> str:
    """Which prediction CSF ``name`` is judged with: the ``judged_by`` field of its spec
    (:class:`fdbench.csf.CSFSpec`): ``"mcd"``, ``"ensemble"`` or ``"logits"``; ``"logits"``
    for a name that is no registered CSF (a confidence column of a user's table).

    FD-Shifts (Jaeger et al., ICLR 2023) evaluates MC-dropout CSFs (MCD-* and the MC-dropout
    heads) together with the MC-dropout classifier, whose prediction is the arg-max of the mean
    softmax over the dropout samples; the ENS-* CSFs go with the deep ensemble; every other
    CSF with the deterministic network.
    """
    from fdbench.csf import find_csf

    spec = find_csf(name)
    return "logits" if spec is None else spec.judged_by


@dataclass(frozen=True)
class PredictionGroup:
    """The inputs of :func:`evaluate_confidences` for the CSFs that share one classifier.

    ``threshold`` is the binary protocol's threshold on ``softmax(logits)[:, 1]`` (None: the
    arg-max prediction). ``logit_terms``: per split, the per-sample NLL and Brier terms of
    ``logits`` that the logit CSFs' row blocks computed (:func:`fdbench.csf.registry.
    logit_terms`), when every split has them.
    """

    source: str
    labels: dict[str, np.ndarray]
    logits: dict[str, np.ndarray]
    predictions: dict[str, np.ndarray]
    confidences: dict[str, dict[str, np.ndarray]]
    threshold: float | None = None
    logit_terms: dict[str, LogitTerms] | None = None


def _source_logits(runs: Sequence[RunOutputs], split: str, source: str) -> np.ndarray:
    """The logits (or log mean softmax) of one prediction group's classifier on ``split``."""
    if source == "ensemble":
        return ensemble_log_probs([np.asarray(r.splits[split].logits) for r in runs])
    if source == "mcd":
        return ensemble_log_probs(np.moveaxis(np.asarray(runs[0].splits[split].mcd_logits), 1, 0))
    return np.asarray(runs[0].splits[split].logits, dtype=np.float64)


def _binary_threshold(
    runs: Sequence[RunOutputs], source: str, fpr: float, rule: str = "exact"
) -> float:
    """The group's threshold on p_1 with validation FPR ``fpr`` (split ``val``) by ``rule``
    (``exact``: :func:`~fdbench.protocol.binary.fpr_threshold`; ``roc_curve``:
    :func:`~fdbench.protocol.binary.fpr_threshold_roc_curve`, the authors' code)."""
    val = runs[0].splits.get("val")
    if val is None:
        raise ValueError("binary_fpr: the outputs need a 'val' split to set the threshold on")
    positive = np.exp(M.log_softmax(_source_logits(runs, "val", source)))[:, 1]
    choose = fpr_threshold_roc_curve if rule == "roc_curve" else fpr_threshold
    return choose(positive, np.asarray(val.labels), fpr)


def prediction_groups(
    runs: Sequence[RunOutputs],
    splits: Sequence[str],
    *,
    knn_k: int = 50,
    openmax: OpenMaxParams | None = None,
    binary_fpr: float | None = None,
    threshold_rule: str = "exact",
) -> list[PredictionGroup]:
    """Compute every CSF of one run (or of a deep ensemble of runs) on ``splits``, grouped by
    the classifier that defines their failures.

    One run gives the ``logits`` group (arg-max of the stored logits) and, when MC-dropout
    logits are stored, the ``mcd`` group (arg-max of the mean MC softmax; see
    :func:`csf_prediction_source`). Several runs give one ``ensemble`` group: the ensemble's
    prediction (arg-max of the members' mean softmax) with the ENS-* CSFs. ``openmax`` adds
    the OpenMax CSF (:mod:`fdbench.csf.openmax`) to the ``logits`` group of one run.

    ``binary_fpr`` switches on the binary protocol (Bernhardt et al., TMLR 2022; two classes
    only): each group predicts class 1 where its ``p_1`` reaches the threshold that gives FPR
    ``binary_fpr`` on the group's own ``val`` split (:func:`fdbench.protocol.binary.
    fpr_threshold`; the authors set one per classifier, e.g. ``mcmc_scores.py``); the CSFs
    whose spec says ``binary="predicted_class"`` (MSR, MCD-MSR, ENS-MSR) become the softmax of
    that predicted class; TrustScore is computed for it; those with ``binary="exclude"`` (the
    entropy CSFs) are left out. ``threshold_rule``
    ``"roc_curve"`` sets the threshold as the authors' code does (``get_threshold``:
    :func:`fdbench.protocol.binary.fpr_threshold_roc_curve`, predictions ``p_1 > t``) instead
    of the default ``"exact"`` (the FPR nearest ``binary_fpr``, predictions ``p_1 >= t``).
    """
    from fdbench.csf import compute_csfs

    if threshold_rule not in THRESHOLD_RULES:
        raise ValueError(
            f"threshold_rule: expected one of {list(THRESHOLD_RULES)}, got {threshold_rule!r}"
        )
    rule = threshold_rule
    if not runs:
        raise ValueError("runs must hold at least one RunOutputs")
    first = runs[0]
    missing = [s for s in splits if s not in first.splits]
    if missing:
        raise ValueError(f"split(s) {missing} not in the outputs; available: {list(first.splits)}")
    if binary_fpr is not None and first.splits[splits[0]].n_classes != 2:
        n_classes = first.splits[splits[0]].n_classes
        raise ValueError(f"binary_fpr needs two-class outputs; these have {n_classes} classes")
    labels = {s: np.asarray(first.splits[s].labels) for s in splits}
    if len(runs) > 1:
        for member in runs[1:]:
            for s in splits:
                if not np.array_equal(np.asarray(member.splits[s].labels), labels[s]):
                    raise ValueError(f"ensemble members disagree on the labels of split {s!r}")
        logits = {s: _source_logits(runs, s, "ensemble") for s in splits}
        confidences = {
            s: {
                k: v
                for k, v in compute_csfs(first, s, ensemble=list(runs), knn_k=knn_k).items()
                if csf_prediction_source(k) == "ensemble"
            }
            for s in splits
        }
        return [_group("ensemble", labels, logits, confidences, runs, binary_fpr, rule)]
    threshold = None if binary_fpr is None else _binary_threshold(runs, "logits", binary_fpr, rule)
    all_csfs = {}
    for s in splits:
        thresholded = None
        if threshold is not None:
            positive = np.exp(M.log_softmax(_source_logits(runs, s, "logits")))[:, 1]
            thresholded = threshold_predictions(positive, threshold, strict=rule == "roc_curve")
        all_csfs[s] = compute_csfs(first, s, knn_k=knn_k, openmax=openmax, predictions=thresholded)
    groups = []
    for source in ("logits", "mcd"):
        confidences = {
            s: {k: v for k, v in all_csfs[s].items() if csf_prediction_source(k) == source}
            for s in splits
        }
        if not all(confidences[s] for s in splits):
            continue
        if source == "mcd" and any(first.splits[s].mcd_logits is None for s in splits):
            # MC-dropout heads stored without the MC-dropout logits (e.g. an FD-Shifts folder
            # with external_confids_dist.npz but no raw_logits_dist.npz): their classifier, and
            # so their failures, are unknown
            warnings.warn(
                f"skipping {sorted(next(iter(confidences.values())))}: MC-dropout CSFs need the "
                "MC-dropout logits, which these outputs lack",
                stacklevel=2,
            )
            continue
        logits = {s: _source_logits(runs, s, source) for s in splits}
        terms = _split_terms(first, splits) if source == "logits" else None
        group = _group(source, labels, logits, confidences, runs, binary_fpr, rule, terms)
        groups.append(replace(group, logit_terms=terms))
    return groups


def _split_terms(run: RunOutputs, splits: Sequence[str]) -> dict[str, LogitTerms] | None:
    """The logit-metric terms the CSF blocks computed on each of ``splits`` of ``run``; None
    unless every split has them."""
    from fdbench.csf.registry import logit_terms

    terms = {s: logit_terms(run, s) for s in splits}
    return None if any(t is None for t in terms.values()) else cast("dict[str, LogitTerms]", terms)


def _group(
    source, labels, logits, confidences, runs, binary_fpr, rule, terms=None
) -> PredictionGroup:
    """The prediction group of ``source``; its arg-max predictions are those of the logit
    ``terms`` the CSF blocks computed (``np.argmax`` of the same rows) where there are some."""
    from fdbench.csf import csf_spec

    if binary_fpr is None:
        predictions = {
            s: np.argmax(v, axis=1) if terms is None else terms[s].predicted
            for s, v in logits.items()
        }
        return PredictionGroup(source, labels, logits, predictions, confidences)
    threshold = _binary_threshold(runs, source, binary_fpr, rule)
    predictions, adapted = {}, {}
    for s, z in logits.items():
        probs = np.exp(M.log_softmax(z))
        predictions[s] = threshold_predictions(probs[:, 1], threshold, strict=rule == "roc_curve")
        own = predicted_class_probability(probs, predictions[s])
        treatment = {name: csf_spec(name).binary for name in confidences[s]}
        adapted[s] = {
            name: own if treatment[name] == "predicted_class" else value
            for name, value in confidences[s].items()
            if treatment[name] != "exclude"
        }
    return PredictionGroup(source, labels, logits, predictions, adapted, threshold)


def _run_info(first: RunOutputs, ensemble: bool) -> dict[str, object]:
    info = {k: first.meta[k] for k in ("dataset", "seed") if k in first.meta}
    method = first.meta.get("method", "")
    if ensemble:
        from fdbench.analysis.scoring_methods import ensemble_method

        method = ensemble_method(method)
    info["method"] = method
    return info


def evaluate_run(
    run: RunOutputs | Sequence[RunOutputs],
    *,
    protocol: Protocol | str = Protocol.FAILURE_DETECTION,
    iid_split: str = "iid",
    studies: Sequence[str] | None = None,
    n_bootstrap: int = 0,
    seed: int = 0,
    openmax: OpenMaxParams | None = None,
    binary_fpr: float | None = None,
    return_curves: bool = False,
    threshold_rule: str = "exact",
    conventions: Sequence[str] = (),
    output: TableType = "pandas",
) -> pd.DataFrame | pa.Table | tuple[pd.DataFrame, pd.DataFrame] | tuple[pa.Table, pa.Table]:
    """Compute every CSF the stored outputs allow and evaluate them on every test study.

    ``run`` is one run or the member runs of a deep ensemble (then the classifier is the
    ensemble and the CSFs are ENS-*; the ``method`` column reads ``ensemble(<method>)``).
    Failures are defined per CSF group by :func:`prediction_groups`: the network's arg-max for
    most CSFs, the MC-dropout mean prediction for MC-dropout CSFs. ``studies`` defaults to
    :func:`default_studies` (pooled corruption studies included), and under the
    ``unknown_detection`` protocol also Kim et al.'s pooled studies
    (:func:`fdbench.protocol.unknown_detection_pools`, from the stored split kinds). With
    ``openmax`` the OpenMax CSF is computed too (one run only). Run metadata ``dataset``,
    ``method`` and ``seed`` fill the table's columns. ``binary_fpr`` applies the binary
    protocol (two-class outputs with a ``val`` split; see :func:`prediction_groups`, which
    also takes ``threshold_rule``). ``conventions``: as in :func:`evaluate_confidences`.

    With ``return_curves`` the result is ``(results, curves)``: the
    :func:`~fdbench.evaluation.confidences.confidence_curves`
    of every prediction group (each CSF with its own classifier's failures) on the same
    studies, drawn from the metrics' own ranking where there is one
    (:func:`evaluate_confidences`). ``output="arrow"`` returns pyarrow Tables instead of
    DataFrames (:func:`evaluate_confidences`; pandas is not imported).
    """
    check_table_type(output)
    runs = [run] if not isinstance(run, Sequence) else list(run)
    if isinstance(run, Sequence) and len(runs) < 2:
        raise ValueError(f"an ensemble needs at least 2 members; got {len(runs)}")
    first = runs[0]
    available = list(first.splits)
    kinds = {n: s.kind for n, s in first.splits.items() if n not in NON_TEST_SPLITS}
    pools = _protocol_pools(protocol, kinds)
    if studies is None:
        studies = [*default_studies(available), *pools]
    iid = [iid_split] if iid_split in first.splits else []
    needed = list(dict.fromkeys([*splits_of(studies, available, pools=pools), *iid]))
    common = {
        "studies": studies,
        "protocol": protocol,
        "iid_split": iid_split,
        "run_info": _run_info(first, len(runs) > 1),
        "pools": pools,
    }
    groups = prediction_groups(
        runs, needed, openmax=openmax, binary_fpr=binary_fpr, threshold_rule=threshold_rule
    )
    evaluated = [
        evaluate_confidences(
            group.labels,
            group.predictions,
            group.confidences,
            logits=group.logits,
            n_bootstrap=n_bootstrap,
            seed=seed,
            binary_protocol=group.threshold is not None,
            conventions=conventions,
            return_curves=return_curves,
            logit_terms=group.logit_terms,
            output=output,
            **common,
        )
        for group in groups
    ]
    if not return_curves:
        return concat_tables(evaluated)
    results, curves = zip(*evaluated, strict=True)
    return concat_tables(results), concat_tables(curves)


def ensemble_log_probs(member_logits: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
    """Log of the members' mean softmax, log((1/M) Σ_m softmax(z_m)), computed stably.

    Its arg-max is the deep ensemble's prediction (Lakshminarayanan et al., NeurIPS 2017), and
    used as logits it gives the ensemble's NLL and Brier score. MC-dropout samples (moved to
    the first axis) give the MC-dropout classifier the same way.
    """
    stacked = np.stack([M.log_softmax(z) for z in member_logits])
    top = stacked.max(axis=0)
    return top + np.log(np.mean(np.exp(stacked - top), axis=0))
