"""Confidences of CSFs on studies -> metrics -> the tidy results rows."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from fdbench import metrics as M
from fdbench.core.threads import thread_map, usable_threads
from fdbench.evaluation.result_tables import (
    CurvePoints,
    TableType,
    check_table_type,
    curves_arrow,
    curves_frame,
    results_arrow,
    results_frame,
)
from fdbench.metrics.conventions import check_convention_keys
from fdbench.protocol import (
    NEW_CLASS_LABEL,
    EvaluationSet,
    Protocol,
    build_evaluation_set,
    corruption_pools,
    study_splits,
)

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from fdbench.csf.blocks import LogitTerms


#: Fewest samples of a study from which the CSFs' metric suites run on threads (NumPy's sorts,
#: gathers and sums release the GIL); smaller studies run one suite after the other.
THREADS_MIN_SAMPLES = 1 << 17
#: Most suites at once: each holds about a dozen arrays of N floats while it runs.
SUITE_THREADS = 2

NON_TEST_SPLITS = frozenset({"train", "val"})
#: The optional column of a confidence table that gives each sample's group (a site, a sex):
#: per-group operating points (docs/operating_points.md).
SUBGROUP_COLUMN = "subgroup"
TABLE_META_COLUMNS = frozenset({"label", "prediction", "study", "group", SUBGROUP_COLUMN})


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
    conventions: Sequence[str] = (),
    return_curves: bool = False,
    max_points: int = 2000,
    logit_terms: Mapping[str, LogitTerms] | None = None,
    output: TableType = "pandas",
) -> pd.DataFrame | pa.Table | tuple[pd.DataFrame, pd.DataFrame] | tuple[pa.Table, pa.Table]:
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
    labels (Bernhardt et al., Table 2: ROC-AUC for the binary tasks). ``conventions`` names
    authors'-code quantities to add under their own metric names
    (:func:`fdbench.metrics.evaluate_conventions`: ``fdbench.metrics.CONVENTION_KEYS`` on every
    study, ``OOD_CONVENTION_KEYS`` where the OoD-detection metrics are computed).

    Returns the tidy results table (columns
    :data:`~fdbench.evaluation.result_tables.RESULT_COLUMNS` plus ``n_samples``), a pandas
    DataFrame, or with ``output="arrow"`` a pyarrow Table of the same columns and types
    (:mod:`fdbench.evaluation.result_tables`; pandas is then not imported). With
    ``return_curves`` the result is ``(results, curves)``, ``curves`` equal to
    :func:`confidence_curves` of the same arguments (``max_points`` as there); where the
    suite ranks the confidences by argsort (0/1 residuals with labels), each curve comes from
    that ranking (:func:`fdbench.evaluation.curves.ranked_thinned_curve`, only the points kept
    divided) instead of a sort of its own. ``logit_terms`` (per split, the NLL and Brier terms
    and arg-max predictions of ``logits`` from the logit CSFs' row blocks:
    :func:`fdbench.csf.registry.logit_terms`) spare the NLL, Brier score and balanced accuracy
    a log-softmax of their own (:func:`fdbench.evaluation.logit_scores.study_logit_scores`).
    """
    from fdbench.evaluation.curves import check_max_points

    conventions = check_convention_keys(tuple(conventions))
    check_table_type(output)
    if n_bootstrap < 0:
        raise ValueError(f"n_bootstrap must be >= 0; got {n_bootstrap}")
    info = {"dataset": "", "method": "", "seed": 0, **(run_info or {})}
    unknown_detection = Protocol(protocol) is Protocol.UNKNOWN_DETECTION
    if studies is None:
        studies = default_studies(list(labels))
    if not studies:
        raise ValueError("no test study to evaluate: only train/val splits were given")
    if return_curves:
        check_max_points(max_points)
    rows: list[dict[str, object]] = []
    curves: list[tuple[str, list[tuple[str, CurvePoints]]]] = []
    for study in studies:
        es, study_confidences = _study_confidences(
            study, labels, predictions, confidences, protocol, iid_split, pools
        )
        in_distribution_only = not es.is_new_class.any()
        with_ood = unknown_detection and not in_distribution_only
        study_labels = es.gather(labels, copy=False) if in_distribution_only else None
        with_logits = in_distribution_only and bool(logits)
        scores = _logit_scores(es, labels, logits, logit_terms) if with_logits else None
        gathered = with_logits and (scores is None or binary_protocol)
        study_logits = es.gather(logits) if gathered else None
        unit = return_curves and bool(np.all((es.residuals == 0) | (es.residuals == 1)))
        curves.append((study, []))
        threads = min(usable_threads(), SUITE_THREADS) if len(es) >= THREADS_MIN_SAMPLES else 1
        suite = functools.partial(
            _csf_suite,
            residuals=es.residuals,
            labels=study_labels,
            logits=study_logits if scores is None else None,
            unit=unit,
            max_points=max_points if return_curves else None,
        )
        suites = thread_map(suite, study_confidences.values(), threads=threads, remainder_here=True)
        for (csf, conf), (values, curve) in zip(study_confidences.items(), suites, strict=True):
            if scores is not None:
                values = _with_scores(values, scores)
            if curve is not None:
                curves[-1][1].append((csf, curve))
            if with_ood:
                values.update(ood_detection_metrics(es.is_new_class, conf))
            if conventions:
                is_ood = es.is_new_class.astype(np.float64) if with_ood else None
                values.update(
                    M.evaluate_conventions(es.residuals, conf, conventions, is_ood=is_ood)
                )
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
    arrow = output == "arrow"
    results = results_arrow(rows) if arrow else results_frame(rows)
    if not return_curves:
        return results
    return results, curves_arrow(curves, info) if arrow else curves_frame(curves, info)


def _csf_suite(
    confidence: np.ndarray,
    *,
    residuals: np.ndarray,
    labels: np.ndarray | None,
    logits: np.ndarray | None,
    unit: bool,
    max_points: int | None,
) -> tuple[dict[str, float], CurvePoints | None]:
    """One CSF's :func:`fdbench.metrics.evaluate_all` and, with ``max_points``, its thinned
    risk-coverage curve (from the suite's own ranking where the residuals are 0/1: ``unit``,
    which only a caller asking for curves sets)."""
    from fdbench.evaluation.curves import curve_points, thin_curve

    ranked: list[CurvePoints] = []
    on_ranking = _ranked_curve_into(ranked, max_points) if unit and max_points is not None else None
    values = M.evaluate_all(
        residuals, confidence, labels=labels, logits=logits, on_ranking=on_ranking
    )
    if max_points is None:
        return values, None
    if ranked:
        return values, ranked[0]
    return values, thin_curve(curve_points(residuals, confidence), max_points)


def _ranked_curve_into(
    curves: list[CurvePoints], max_points: int
) -> Callable[[np.ndarray, np.ndarray], None]:
    """An ``on_ranking`` for :func:`fdbench.metrics.evaluate_all` that appends the thinned
    curve of its ranking (:func:`fdbench.evaluation.curves.ranked_thinned_curve`) to
    ``curves``."""
    from fdbench.evaluation.curves import ranked_thinned_curve

    return lambda W, L: curves.append(ranked_thinned_curve(W, L, max_points))


def _logit_scores(
    es: EvaluationSet,
    labels: Mapping[str, np.ndarray],
    logits: Mapping[str, np.ndarray],
    terms: Mapping[str, LogitTerms] | None,
) -> dict[str, float] | None:
    """The entries of :func:`fdbench.metrics.evaluate_all` that depend on the logits only
    (``LOGIT_KEYS``: NLL, Brier, balanced accuracy), computed once for every CSF of a study,
    in row blocks of the splits' logits
    (:func:`fdbench.evaluation.logit_scores.study_logit_scores`); ``None`` when a plug-in
    metric needs the logits (then each CSF's ``evaluate_all`` gets the study's logits)."""
    from fdbench.evaluation.logit_scores import study_logit_scores

    if any(s.plugin and s.needs_logits for s in M.metric_specs().values()):
        return None
    return study_logit_scores(es, labels, logits, terms=terms)


def _with_scores(values: dict[str, float], scores: dict[str, float]) -> dict[str, float]:
    """``values`` of ``evaluate_all(..., labels=...)`` with ``scores`` in the place where
    ``evaluate_all(..., labels=..., logits=...)`` puts them (after ``LABEL_KEYS``)."""
    out: dict[str, float] = {}
    for key, value in values.items():
        out[key] = value
        if key == M.LABEL_KEYS[-1]:
            out.update(scores)
    return out


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
        csf: es.gather({split: confidences[split][csf] for split, _ in es.parts}, copy=False)
        for csf in names
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
    :func:`fdbench.evaluation.curves.curve_table` (``fdbench.metrics.risk_coverage_curve``, thinned
    to at most ``max_points`` points per curve). The run columns ``dataset``, ``method`` and
    ``seed`` come from ``run_info`` as in the results table.

    Returns columns ``CURVE_COLUMNS`` plus ``dataset``, ``method`` and ``seed``: the
    ``curves.parquet`` the report draws.
    """
    import pandas as pd

    from fdbench.evaluation.curves import curve_table

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
    names = [
        s.name for s in M.metric_specs().values() if s.interval and (binary or not s.binary_only)
    ]
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
