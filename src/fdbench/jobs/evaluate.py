"""Evaluation of stored outputs: CSFs × studies × metrics into the tidy results table."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from fdbench import metrics as M
from fdbench.protocol import (
    NEW_CLASS_LABEL,
    EvaluationSet,
    Protocol,
    build_evaluation_set,
    corruption_pools,
    study_splits,
    unknown_detection_pools,
)
from fdbench.protocol.binary import (
    BINARY_EXCLUDED_CSFS,
    BINARY_PREDICTED_CLASS_CSFS,
    fpr_threshold,
    predicted_class_probability,
    threshold_predictions,
)

if TYPE_CHECKING:
    from fdbench.csf.openmax import OpenMaxParams
    from fdbench.outputs import RunOutputs

RESULT_COLUMNS = ("dataset", "method", "seed", "csf", "study", "metric", "value")
BOOTSTRAP_METRICS = ("aurc", "augrc", "eaurc", "eaugrc", "auroc_f", "fpr@95tpr")
NON_TEST_SPLITS = frozenset({"train", "val"})
TABLE_META_COLUMNS = frozenset({"label", "prediction", "study", "group"})


def default_studies(splits: Sequence[str]) -> list[str]:
    """The studies evaluated by default on outputs with these split names.

    Every split but ``train``/``val``, in order, then the pooled corruption studies
    ``corruption/<severity>`` that the per-type splits ``corruption/<type>/<severity>`` form
    (:func:`fdbench.protocol.corruption_pools`; FD-Shifts' studies), unless a split already
    carries that name. The per-type studies stay as the finer view.
    """
    names = [s for s in splits if s not in NON_TEST_SPLITS]
    return [*names, *(p for p in corruption_pools(names) if p not in names)]


def splits_of(
    studies: Sequence[str],
    splits: Sequence[str],
    *,
    pools: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """The splits the ``studies`` are made of (pooled studies expanded), each once, in order."""
    return list(
        dict.fromkeys(n for study in studies for n in study_splits(study, splits, pools=pools))
    )


def split_kinds(labels: Mapping[str, np.ndarray]) -> dict[str, str]:
    """Study kinds of splits known only by their labels: ``new_class`` for a split made only of
    new-class samples (label -1), ``iid`` otherwise; ``train``/``val`` are left out."""
    return {
        name: "new_class" if np.all(np.asarray(y) == NEW_CLASS_LABEL) else "iid"
        for name, y in labels.items()
        if name not in NON_TEST_SPLITS
    }


def ood_detection_metrics(is_new_class: np.ndarray, confidence: np.ndarray) -> dict[str, float]:
    """OoD detection with the in-distribution/OoD label (Kim et al., 2023, Section 4):
    ``auroc_out`` and ``fpr@95tpr_out`` (in-distribution positive, every in-distribution sample
    whether classified correctly or not), NaN when one group is absent."""
    if is_new_class.all() or not is_new_class.any():
        return {"auroc_out": float("nan"), "fpr@95tpr_out": float("nan")}
    is_ood = is_new_class.astype(np.float64)
    return {
        "auroc_out": M.auroc_out(is_ood, confidence),
        "fpr@95tpr_out": M.fpr_at_tpr_out(is_ood, confidence, 0.95),
    }


def evaluate_confidences(
    labels: Mapping[str, np.ndarray],
    predictions: Mapping[str, np.ndarray],
    confidences: Mapping[str, Mapping[str, np.ndarray]],
    *,
    studies: Sequence[str] | None = None,
    logits: Mapping[str, np.ndarray] | None = None,
    protocol: Protocol | str = Protocol.FAILURE_DETECTION,
    iid_split: str = "iid",
    n_bootstrap: int = 0,
    seed: int = 0,
    confidence_level: float = 0.95,
    run_info: Mapping[str, object] | None = None,
    on_study: Callable[[str], None] | None = None,
    pools: Mapping[str, Sequence[str]] | None = None,
    binary_protocol: bool = False,
) -> pd.DataFrame:
    """Compute the metric suite for every CSF on every study.

    ``labels``/``predictions``/``logits`` map split names to per-sample arrays, ``confidences``
    maps split names to ``{csf_name: confidence}``. Each study is assembled by
    :func:`fdbench.protocol.build_evaluation_set` (new-class studies are paired with the
    ``iid_split`` split; a pooled corruption study concatenates its per-type splits), then
    :func:`fdbench.metrics.evaluate_all` runs once per CSF. ``studies`` defaults to
    :func:`default_studies`. ``pools`` names further pooled studies and their member splits
    (:func:`fdbench.protocol.unknown_detection_pools`). Under the ``unknown_detection``
    protocol every study with new-class samples also gets the OoD-detection metrics of
    :func:`ood_detection_metrics`. With ``n_bootstrap > 0`` the rows gain ``std``,
    ``ci_lower`` and ``ci_upper`` columns from seeded, paired bootstrap resamples (the same
    resamples for every CSF of a study). With ``binary_protocol`` (``predictions``
    thresholded, see :func:`prediction_groups`) an in-distribution study's
    ``balanced_accuracy`` follows ``predictions`` instead of the logits' arg-max, and a
    ``roc_auc`` row holds the classification ROC-AUC of ``softmax(logits)[:, 1]`` against the
    labels (Bernhardt et al., Table 2: ROC-AUC for the binary tasks).

    Returns the tidy results table (columns ``RESULT_COLUMNS`` plus ``n_samples``).
    """
    if n_bootstrap < 0:
        raise ValueError(f"n_bootstrap must be >= 0; got {n_bootstrap}")
    info = {"dataset": "", "method": "", "seed": 0, **(run_info or {})}
    unknown_detection = Protocol(protocol) is Protocol.UNKNOWN_DETECTION
    if studies is None:
        studies = default_studies(list(labels))
    if not studies:
        raise ValueError("no test study to evaluate: only train/val splits were given")
    rows: list[dict[str, object]] = []
    for study in studies:
        es, study_confidences = _study_confidences(
            study, labels, predictions, confidences, protocol, iid_split, pools
        )
        in_distribution_only = not es.is_new_class.any()
        with_ood = unknown_detection and not in_distribution_only
        study_labels = es.gather(labels) if in_distribution_only else None
        study_logits = es.gather(logits) if in_distribution_only and logits else None
        for csf, conf in study_confidences.items():
            values = M.evaluate_all(es.residuals, conf, labels=study_labels, logits=study_logits)
            if with_ood:
                values.update(ood_detection_metrics(es.is_new_class, conf))
            if binary_protocol and study_logits is not None:
                values.update(_binary_classification(study_labels, study_logits, es, predictions))
            intervals = (
                _bootstrap_intervals(es.residuals, conf, n_bootstrap, seed, confidence_level)
                if n_bootstrap
                else {}
            )
            for metric, value in values.items():
                row = {**info, "csf": csf, "study": study, "metric": metric, "value": value}
                row["n_samples"] = len(es)
                row.update(intervals.get(metric, {}))
                rows.append(row)
        if on_study is not None:
            on_study(study)
    table = pd.DataFrame(rows)
    ordered = [*RESULT_COLUMNS, "n_samples"]
    return table[ordered + [c for c in table.columns if c not in ordered]]


def _study_confidences(
    study: str,
    labels: Mapping[str, np.ndarray],
    predictions: Mapping[str, np.ndarray],
    confidences: Mapping[str, Mapping[str, np.ndarray]],
    protocol: Protocol | str,
    iid_split: str,
    pools: Mapping[str, Sequence[str]] | None,
) -> tuple[EvaluationSet, dict[str, np.ndarray]]:
    """The evaluation set of ``study`` and the confidences of every CSF present on all of its
    splits, gathered in the evaluation set's sample order."""
    es = build_evaluation_set(
        study, labels, predictions, protocol=protocol, iid_split=iid_split, pools=pools
    )
    names = _common_csfs(confidences, [name for name, _ in es.parts])
    return es, {
        csf: es.gather({split: confidences[split][csf] for split, _ in es.parts}) for csf in names
    }


def confidence_curves(
    labels: Mapping[str, np.ndarray],
    predictions: Mapping[str, np.ndarray],
    confidences: Mapping[str, Mapping[str, np.ndarray]],
    *,
    studies: Sequence[str] | None = None,
    protocol: Protocol | str = Protocol.FAILURE_DETECTION,
    iid_split: str = "iid",
    run_info: Mapping[str, object] | None = None,
    pools: Mapping[str, Sequence[str]] | None = None,
    max_points: int = 2000,
) -> pd.DataFrame:
    """Risk-coverage and generalized-risk curves of every CSF on every study.

    The studies, residuals and confidences are those :func:`evaluate_confidences` scores
    (same arguments, same evaluation sets); each study's curves are
    :func:`fdbench.report.curve_table` (``fdbench.metrics.risk_coverage_curve``, thinned to at
    most ``max_points`` points per curve). The run columns ``dataset``, ``method`` and
    ``seed`` come from ``run_info`` as in the results table.

    Returns columns ``CURVE_COLUMNS`` plus ``dataset``, ``method`` and ``seed``: the
    ``curves.parquet`` the report draws.
    """
    from fdbench.report.curves import curve_table

    info = {"dataset": "", "method": "", "seed": 0, **(run_info or {})}
    if studies is None:
        studies = default_studies(list(labels))
    if not studies:
        raise ValueError("no test study to evaluate: only train/val splits were given")
    frames = []
    for study in studies:
        es, study_confidences = _study_confidences(
            study, labels, predictions, confidences, protocol, iid_split, pools
        )
        table = curve_table(es.residuals, study_confidences, study=study, max_points=max_points)
        frames.append(table.assign(**{k: info[k] for k in ("dataset", "method", "seed")}))
    return pd.concat(frames, ignore_index=True)


def _binary_classification(
    labels: np.ndarray,
    logits: np.ndarray,
    es: EvaluationSet,
    predictions: Mapping[str, np.ndarray],
) -> dict[str, float]:
    """Balanced accuracy of the thresholded predictions and the classification ROC-AUC."""
    pred = es.gather(predictions)
    present = np.unique(labels)
    recalls = [np.mean(pred[labels == c] == c) for c in present]
    positive = np.exp(M.log_softmax(logits))[:, 1]
    return {
        "balanced_accuracy": float(np.mean(recalls)),
        "roc_auc": M.auroc_f((labels != 1).astype(np.float64), positive),
    }


def _common_csfs(
    confidences: Mapping[str, Mapping[str, np.ndarray]], splits: Sequence[str]
) -> list[str]:
    missing = [s for s in splits if s not in confidences]
    if missing:
        raise ValueError(f"no confidences for split(s) {missing}")
    names = [n for n in confidences[splits[0]] if all(n in confidences[s] for s in splits)]
    if not names:
        raise ValueError(f"no CSF is available on every split of {list(splits)}")
    return names


def _bootstrap_intervals(
    residuals: np.ndarray,
    confidence: np.ndarray,
    n_resamples: int,
    seed: int,
    confidence_level: float,
) -> dict[str, dict[str, float]]:
    binary = bool(np.all((residuals == 0) | (residuals == 1)))
    names = [m for m in BOOTSTRAP_METRICS if binary or m not in {"auroc_f", "fpr@95tpr"}]
    draws = M.bootstrap(residuals, confidence, metrics=names, n_resamples=n_resamples, seed=seed)
    summary = M.bootstrap_summary(draws, confidence_level=confidence_level)
    return {
        metric: {
            "std": float(summary.loc[metric, "std"]),
            "ci_lower": float(summary.loc[metric, "lower"]),
            "ci_upper": float(summary.loc[metric, "upper"]),
        }
        for metric in summary.index
    }


def read_confidence_table(
    path: str | Path, *, columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """Read a CSV or Parquet table of ``label``, ``prediction`` and confidence columns.

    An optional ``study`` (or ``group``) column names the study of each sample (default
    ``iid``); label -1 marks a new-class sample. Every other numeric column is a CSF unless
    ``columns`` selects some; a column of text in which no cell is a number (such as file
    names) is not a CSF. Values are validated, never coerced: integer labels >= -1, integer
    predictions, finite real confidences (bool counts as 0/1). A cell that is not a number is
    a ``ValueError`` naming the column and row; a complex, date or duration column a
    ``TypeError`` naming the column.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"outputs file not found: {path}")
    suffix = path.suffix.lower()
    if suffix not in {".csv", ".parquet", ".pq"}:
        raise ValueError(f"table must be .csv or .parquet; got {path.name}")
    try:
        table = pd.read_csv(path) if suffix == ".csv" else pd.read_parquet(path)
    except (OSError, ValueError) as err:
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ValueError(f"cannot read {path.name}: {message}") from err
    missing = [c for c in ("label", "prediction") if c not in table.columns]
    if missing:
        raise ValueError(f"{path.name}: missing column(s) {missing}; found {list(table.columns)}")
    if table.empty:
        raise ValueError(f"{path.name}: the table has no rows")
    if "study" not in table.columns:
        table["study"] = table["group"].astype(str) if "group" in table.columns else "iid"
    if columns:
        absent = [c for c in columns if c not in table.columns]
        if absent:
            raise ValueError(f"{path.name}: confidence column(s) {absent} not found")
        meta = [c for c in columns if c in TABLE_META_COLUMNS]
        if meta:
            raise ValueError(f"{path.name}: {meta} cannot be confidence columns")
        csfs = list(dict.fromkeys(columns))
    else:
        csfs = [
            c for c in table.columns if c not in TABLE_META_COLUMNS and not _is_annotation(table[c])
        ]
    if not csfs:
        raise ValueError(f"{path.name}: no numeric confidence column besides label/prediction")
    for name in ("label", "prediction"):
        values = _real_column(table[name], name, path)
        bad = ~(np.isfinite(values) & (np.mod(values, 1) == 0))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{path.name}: column {name!r} must hold integers without gaps; "
                f"row {row}{_line(path, row)} holds {table[name].iloc[row]!r}"
            )
        table[name] = values.astype(np.int64)
    if (table["label"] < NEW_CLASS_LABEL).any():
        raise ValueError(f"{path.name}: labels must be >= -1 (-1 marks a new-class sample)")
    for c in csfs:
        values = _real_column(table[c], c, path)
        bad = ~np.isfinite(values)
        if bad.any():
            first = np.flatnonzero(bad)[:5].tolist()
            raise ValueError(
                f"{path.name}: confidence column {c!r} has {int(bad.sum())} non-finite value(s), "
                f"first at rows {first}"
            )
        table[c] = values
    return table[["study", "label", "prediction", *csfs]]


def _line(path: Path, row: int) -> str:
    return f" (line {row + 2} of the file)" if path.suffix.lower() == ".csv" else ""


def _is_annotation(column: pd.Series) -> bool:
    """A column of text in which no cell is a number (e.g. file names): not a CSF."""
    if column.dtype.kind not in "OSU":
        return False
    present = column.dropna()
    return bool(pd.to_numeric(present, errors="coerce").isna().all())


def _real_column(column: pd.Series, name: str, path: Path) -> np.ndarray:
    """The float64 values of a table column; a cell that is not a real number is an error
    naming the column and row (nothing is coerced: not text, complex, dates or durations)."""
    kind = column.dtype.kind
    if kind in "biuf":
        return column.to_numpy(dtype=np.float64)
    if kind in "OSU":
        parsed = pd.to_numeric(column, errors="coerce")
        bad = parsed.isna().to_numpy() & column.notna().to_numpy()
        if not bad.any() and parsed.dtype.kind in "biuf":
            return parsed.to_numpy(dtype=np.float64)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{path.name}: column {name!r}, row {row}{_line(path, row)}: "
                f"{column.iloc[row]!r} is not a number ({int(bad.sum())} such cell(s))"
            )
    raise TypeError(
        f"{path.name}: column {name!r} must hold real numbers, got dtype {column.dtype}"
    )


def evaluate_table(
    table: pd.DataFrame,
    *,
    protocol: Protocol | str = Protocol.FAILURE_DETECTION,
    iid_split: str = "iid",
    n_bootstrap: int = 0,
    seed: int = 0,
    run_info: Mapping[str, object] | None = None,
    return_curves: bool = False,
) -> pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame]:
    """Evaluate a table from :func:`read_confidence_table` (one split per ``study`` value).

    With ``return_curves`` the result is ``(results, curves)``, ``curves`` the
    :func:`confidence_curves` of the same studies.
    """
    csfs = [c for c in table.columns if c not in TABLE_META_COLUMNS]
    labels, predictions, confidences = {}, {}, {}
    for study, part in table.groupby("study", sort=False):
        labels[study] = part["label"].to_numpy(dtype=np.int64)
        predictions[study] = part["prediction"].to_numpy(dtype=np.int64)
        confidences[study] = {c: part[c].to_numpy(dtype=np.float64) for c in csfs}
    pools = _protocol_pools(protocol, split_kinds(labels))
    studies = [*default_studies(list(labels)), *pools]
    common = {
        "studies": studies,
        "protocol": protocol,
        "iid_split": iid_split,
        "run_info": run_info,
        "pools": pools,
    }
    results = evaluate_confidences(
        labels, predictions, confidences, n_bootstrap=n_bootstrap, seed=seed, **common
    )
    if not return_curves:
        return results
    return results, confidence_curves(labels, predictions, confidences, **common)


def _protocol_pools(
    protocol: Protocol | str, kinds: Mapping[str, str]
) -> dict[str, tuple[str, ...]]:
    """The pooled studies evaluated under ``protocol``: Kim et al.'s pooled unknown-detection
    studies (:func:`fdbench.protocol.unknown_detection_pools`) under ``unknown_detection``,
    none under ``failure_detection``."""
    if Protocol(protocol) is not Protocol.UNKNOWN_DETECTION:
        return {}
    return unknown_detection_pools(kinds)


def csf_prediction_source(name: str) -> str:
    """Which prediction a CSF is judged with: ``"mcd"`` for MC-dropout CSFs, else ``"logits"``.

    FD-Shifts (Jaeger et al., ICLR 2023) evaluates MC-dropout CSFs (``MCD-*`` and the ``*-MCD``
    heads) together with the MC-dropout classifier, whose prediction is the arg-max of the mean
    softmax over the dropout samples; every other CSF goes with the deterministic network.
    """
    return "mcd" if name.startswith("MCD-") or name.endswith("-MCD") else "logits"


@dataclass(frozen=True)
class PredictionGroup:
    """The inputs of :func:`evaluate_confidences` for the CSFs that share one classifier.

    ``threshold`` is the binary protocol's threshold on ``softmax(logits)[:, 1]`` (None: the
    arg-max prediction).
    """

    source: str
    labels: dict[str, np.ndarray]
    logits: dict[str, np.ndarray]
    predictions: dict[str, np.ndarray]
    confidences: dict[str, dict[str, np.ndarray]]
    threshold: float | None = None


def _source_logits(runs: Sequence[RunOutputs], split: str, source: str) -> np.ndarray:
    """The logits (or log mean softmax) of one prediction group's classifier on ``split``."""
    if source == "ensemble":
        return ensemble_log_probs([np.asarray(r.splits[split].logits) for r in runs])
    if source == "mcd":
        return ensemble_log_probs(np.moveaxis(np.asarray(runs[0].splits[split].mcd_logits), 1, 0))
    return np.asarray(runs[0].splits[split].logits, dtype=np.float64)


def _binary_threshold(runs: Sequence[RunOutputs], source: str, fpr: float) -> float:
    """The group's threshold on p_1 with validation FPR ``fpr`` (split ``val``)."""
    val = runs[0].splits.get("val")
    if val is None:
        raise ValueError("binary_fpr: the outputs need a 'val' split to set the threshold on")
    positive = np.exp(M.log_softmax(_source_logits(runs, "val", source)))[:, 1]
    return fpr_threshold(positive, np.asarray(val.labels), fpr)


def prediction_groups(
    runs: Sequence[RunOutputs],
    splits: Sequence[str],
    *,
    knn_k: int = 50,
    openmax: OpenMaxParams | None = None,
    binary_fpr: float | None = None,
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
    fpr_threshold`; the authors set one per classifier, e.g. ``mcmc_scores.py``); MSR,
    MCD-MSR and ENS-MSR become the softmax of that predicted class; TrustScore is computed
    for it; the entropy CSFs (``BINARY_EXCLUDED_CSFS``) are left out.
    """
    from fdbench.csf import compute_csfs

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
                if k.startswith("ENS-")
            }
            for s in splits
        }
        return [_group("ensemble", labels, logits, confidences, runs, binary_fpr)]
    threshold = None if binary_fpr is None else _binary_threshold(runs, "logits", binary_fpr)
    all_csfs = {}
    for s in splits:
        thresholded = None
        if threshold is not None:
            positive = np.exp(M.log_softmax(_source_logits(runs, s, "logits")))[:, 1]
            thresholded = threshold_predictions(positive, threshold)
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
        groups.append(_group(source, labels, logits, confidences, runs, binary_fpr))
    return groups


def _group(source, labels, logits, confidences, runs, binary_fpr) -> PredictionGroup:
    if binary_fpr is None:
        predictions = {s: np.argmax(v, axis=1) for s, v in logits.items()}
        return PredictionGroup(source, labels, logits, predictions, confidences)
    threshold = _binary_threshold(runs, source, binary_fpr)
    predictions, adapted = {}, {}
    for s, z in logits.items():
        probs = np.exp(M.log_softmax(z))
        predictions[s] = threshold_predictions(probs[:, 1], threshold)
        own = predicted_class_probability(probs, predictions[s])
        adapted[s] = {
            name: own if name in BINARY_PREDICTED_CLASS_CSFS else value
            for name, value in confidences[s].items()
            if name not in BINARY_EXCLUDED_CSFS
        }
    return PredictionGroup(source, labels, logits, predictions, adapted, threshold)


def _run_info(first: RunOutputs, ensemble: bool) -> dict[str, object]:
    info = {k: first.meta[k] for k in ("dataset", "seed") if k in first.meta}
    method = first.meta.get("method", "")
    info["method"] = f"ensemble({method})" if ensemble else method
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
) -> pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame]:
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
    protocol (two-class outputs with a ``val`` split; see :func:`prediction_groups`).

    With ``return_curves`` the result is ``(results, curves)``: the :func:`confidence_curves`
    of every prediction group (each CSF with its own classifier's failures) on the same
    studies.
    """
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
    groups = prediction_groups(runs, needed, openmax=openmax, binary_fpr=binary_fpr)
    tables = [
        evaluate_confidences(
            group.labels,
            group.predictions,
            group.confidences,
            logits=group.logits,
            n_bootstrap=n_bootstrap,
            seed=seed,
            binary_protocol=group.threshold is not None,
            **common,
        )
        for group in groups
    ]
    results = pd.concat(tables, ignore_index=True)
    if not return_curves:
        return results
    curves = [
        confidence_curves(group.labels, group.predictions, group.confidences, **common)
        for group in groups
    ]
    return results, pd.concat(curves, ignore_index=True)


def ensemble_log_probs(member_logits: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
    """Log of the members' mean softmax, log((1/M) Σ_m softmax(z_m)), computed stably.

    Its arg-max is the deep ensemble's prediction (Lakshminarayanan et al., NeurIPS 2017), and
    used as logits it gives the ensemble's NLL and Brier score. MC-dropout samples (moved to
    the first axis) give the MC-dropout classifier the same way.
    """
    stacked = np.stack([M.log_softmax(z) for z in member_logits])
    top = stacked.max(axis=0)
    return top + np.log(np.mean(np.exp(stacked - top), axis=0))
