"""Bootstrap paired across scoring methods: one resample of a study's unfiltered test set."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from fdbench.analysis.scoring_methods import add_scoring_method

#: The metrics of the leaderboard and of its paired differences.
PAIRED_METRICS = ("augrc", "aurc", "auroc_f")
_CURVE_METRICS = frozenset(PAIRED_METRICS)
PAIRED_COLUMNS = ("dataset", "study", "scoring_method", "metric", "resample", "value", "n_seeds")


@dataclass(frozen=True)
class PairedSamples:
    """One run (dataset, method, seed) on one study, placed in the study's unfiltered test set.

    ``residuals`` (1 = failure) and each CSF's ``confidences`` cover the samples the run is
    evaluated on. ``positions`` are their places in the unfiltered test set of the study (of
    ``n_unfiltered`` samples; :func:`unfiltered_positions`); ``None`` means the run is
    evaluated on the whole set, in order (i.i.d., corruption and sub-class studies). Under the
    FD-Shifts protocol a new-class study drops the inliers the classifier misclassifies, so
    each classifier keeps other positions of the same set.
    """

    dataset: str
    method: str
    seed: int
    study: str
    residuals: np.ndarray
    confidences: Mapping[str, np.ndarray] = field(default_factory=dict)
    positions: np.ndarray | None = None
    n_unfiltered: int | None = None

    @property
    def size(self) -> int:
        """The number of samples of the unfiltered test set."""
        if self.n_unfiltered is not None:
            return int(self.n_unfiltered)
        return int(np.asarray(self.residuals).shape[0])


def unfiltered_positions(
    parts: Sequence[tuple[str, np.ndarray]], sizes: Mapping[str, int]
) -> tuple[np.ndarray, int]:
    """Positions of an evaluation set's samples in the unfiltered concatenation of its splits.

    ``parts`` are the (split, kept indices) of :class:`fdbench.protocol.EvaluationSet`, in
    order; ``sizes`` the number of samples of each split. The unfiltered set is the
    concatenation of the whole splits in the same order. Returns the positions and its size.
    """
    positions, offset = [], 0
    for name, idx in parts:
        if name not in sizes:
            raise ValueError(f"sizes: no size for split {name!r}; it has {sorted(sizes)}")
        n = int(sizes[name])
        idx = np.asarray(idx, dtype=np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise ValueError(f"parts: indices of split {name!r} must lie in [0, {n})")
        positions.append(idx + offset)
        offset += n
    return np.concatenate(positions) if positions else np.empty(0, np.int64), offset


def _task_metrics(
    task: PairedSamples, metrics: Sequence[str], n_resamples: int, seed: int
) -> dict[tuple[str, str], np.ndarray]:
    """{(csf, metric): values of the resamples} of one task on the resamples of its study."""
    from fdbench import metrics as M

    residuals = np.asarray(task.residuals, dtype=np.float64)
    confidences = {c: np.asarray(v, dtype=np.float64) for c, v in task.confidences.items()}
    weight = None
    if task.positions is not None:
        positions = np.asarray(task.positions, dtype=np.int64)
        n = task.size
        if positions.shape != residuals.shape:
            raise ValueError(
                f"positions of {task.method} seed {task.seed} on {task.study!r}: expected one per "
                f"residual ({residuals.size}), got shape {positions.shape}"
            )
        if positions.size and (positions.min() < 0 or positions.max() >= n):
            raise ValueError(f"positions of {task.study!r} must lie in [0, {n})")
        if np.unique(positions).size != positions.size:
            raise ValueError(f"positions of {task.study!r} must not repeat")
        if set(metrics) <= _CURVE_METRICS and np.all((residuals == 0) | (residuals == 1)):
            return _filtered_metrics(
                residuals, confidences, positions, n, metrics, n_resamples, seed
            )
        # the whole set, weight 0 where the classifier's filter drops a sample: the resample
        # draws from all n samples, the filter applies inside it
        weight = np.zeros(n)
        weight[positions] = 1.0
        placed = np.zeros(n)
        placed[positions] = residuals
        residuals = placed
        for c, v in confidences.items():
            placed = np.zeros(n)
            placed[positions] = v
            confidences[c] = placed
    elif task.n_unfiltered is not None and task.n_unfiltered != residuals.size:
        raise ValueError(
            f"{task.study!r}: n_unfiltered = {task.n_unfiltered} needs positions for the "
            f"{residuals.size} samples evaluated"
        )
    elif set(metrics) <= _CURVE_METRICS and np.all((residuals == 0) | (residuals == 1)):
        # what M.bootstrap computes, without its long table
        return _filtered_metrics(
            residuals, confidences, None, residuals.size, metrics, n_resamples, seed
        )
    table = M.bootstrap(
        residuals,
        confidences,
        metrics=list(metrics),
        n_resamples=n_resamples,
        seed=seed,
        sample_weight=weight,
    )
    values = table["value"].to_numpy().reshape(len(confidences), len(metrics), n_resamples)
    return {(c, m): values[i, j] for i, c in enumerate(confidences) for j, m in enumerate(metrics)}


def _filtered_metrics(
    residuals: np.ndarray,
    confidences: dict[str, np.ndarray],
    positions: np.ndarray | None,
    n: int,
    metrics: Sequence[str],
    n_resamples: int,
    seed: int,
) -> dict[tuple[str, str], np.ndarray]:
    """The curve metrics of a filtered run with integer weights: the study's counts (over its
    ``n`` unfiltered samples) at the run's ``positions`` (``None``: all n, in order), each CSF
    sorted once and evaluated on every resample in blocks, as :func:`fdbench.metrics.bootstrap`
    does (its sample-weight path would turn the counts into floating-point weights, about a
    quarter slower; for an unfiltered run it would build a long table to be read back). Each
    CSF's order is mapped to the unfiltered set once, so that every block gathers its sorted
    weights from the counts directly; the compiled pass
    (:func:`fdbench.metrics.bootstrap.compiled_curves`) takes all CSFs of the run at once."""
    from fdbench.metrics._core import Workspace
    from fdbench.metrics._validation import check_inputs
    from fdbench.metrics.bootstrap import (
        _CHUNK_ELEMENTS,
        _count_blocks,
        _csf_metrics,
        _prepare_csf,
        compiled_curves,
    )

    prepared = {}
    for csf, conf in confidences.items():
        r, c, _, _ = check_inputs(residuals, conf)
        s = _prepare_csf(r, c, False, True)
        if positions is not None:
            s = replace(s, ranking=replace(s.ranking, order=positions[s.ranking.order]))
        prepared[csf] = (s, c)
    chunk = max(1, _CHUNK_ELEMENTS // max(residuals.size, 1))
    blocks: dict[tuple[str, str], list[np.ndarray]] = {
        (csf, m): [] for csf in prepared for m in metrics
    }
    csfs = [s for s, _ in prepared.values()]
    compiled = compiled_curves(csfs, n, n_resamples, seed, None, chunk, metrics)
    if compiled is not None:
        for _, curves in compiled:
            for csf, values in zip(prepared, curves, strict=True):
                for m in metrics:
                    blocks[(csf, m)].append(values[m])
    else:
        work = Workspace(min(chunk, n_resamples), residuals.size, int(residuals.sum()), np.int32)
        for counts in _count_blocks(n, n_resamples, seed, None, chunk):
            for csf, (s, c) in prepared.items():
                values = _csf_metrics(s, counts, residuals, c, metrics, {}, True, work)
                for m in metrics:
                    blocks[(csf, m)].append(values[m])
    return {key: np.concatenate(parts) for key, parts in blocks.items()}


#: Values already bootstrapped for a run × study: {(dataset, method, seed, study): {(csf,
#: metric): the values of the resamples}}.
KnownValues = Mapping[tuple[str, str, int, str], Mapping[tuple[str, str], np.ndarray]]


def known_values(table: pd.DataFrame) -> dict:
    """:data:`KnownValues` from a bootstrap table with the columns of
    :data:`fdbench.analysis.bootstrap.BOOTSTRAP_COLUMNS`, each in resample order."""
    keys = ["dataset", "method", "seed", "study", "csf", "metric"]
    values = table["value"].to_numpy()
    resample = table["resample"].to_numpy()
    known: dict = {}
    for (dataset, method, seed, study, csf, metric), rows in table.groupby(
        keys, sort=False
    ).indices.items():
        rows = rows[np.argsort(resample[rows], kind="stable")]
        run = known.setdefault((dataset, method, int(seed), study), {})
        run[(csf, metric)] = values[rows]
    return known


def _known_metrics(
    task: PairedSamples, metrics: Sequence[str], n_resamples: int, known: KnownValues | None
) -> dict[tuple[str, str], np.ndarray] | None:
    """The task's values from ``known`` when it holds every CSF × metric of an unfiltered
    task with ``n_resamples`` resamples, else ``None``."""
    if known is None or task.positions is not None:
        return None
    run = known.get((task.dataset, task.method, task.seed, task.study))
    if run is None:
        return None
    wanted = [(c, m) for c in task.confidences for m in metrics]
    if any(key not in run or run[key].shape != (n_resamples,) for key in wanted):
        return None
    return {key: run[key] for key in wanted}


def study_sums(
    tasks: Sequence[PairedSamples],
    names: Mapping[tuple[str, str], str],
    metrics: Sequence[str],
    n_resamples: int,
    seed: int,
    known: KnownValues | None = None,
) -> dict[tuple[str, str, str, str], tuple[np.ndarray, int]]:
    """Per (dataset, study, scoring method, metric): the sum over runs of the values of every
    resample and the number of runs, for the runs of one study (``names``: (method, CSF) →
    scoring method). The study's counts are drawn once and reused by every run; an unfiltered
    run whose values are in ``known`` (bootstrapped with the same counts) takes them from
    there."""
    sums: dict[tuple[str, str, str, str], tuple[np.ndarray, int]] = {}
    for t in tasks:
        if not t.confidences:
            raise ValueError(f"study {t.study!r} of seed {t.seed} has no CSF")
        values_of = _known_metrics(t, metrics, n_resamples, known)
        if values_of is None:
            values_of = _task_metrics(t, metrics, n_resamples, seed)
        for (csf, metric), values in values_of.items():
            key = (t.dataset, t.study, names[(t.method, csf)], metric)
            total, count = sums.get(key, (np.zeros(n_resamples), 0))
            sums[key] = (total + values, count + 1)
    return sums


def paired_bootstrap(
    tasks: Sequence[PairedSamples],
    *,
    metrics: Sequence[str] = PAIRED_METRICS,
    n_resamples: int = 500,
    seed: int = 0,
    kinds: Mapping[str, str] | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    known: KnownValues | None = None,
) -> pd.DataFrame:
    """Seed-mean bootstrap values of every scoring method, paired within each study.

    For every (dataset, study) the resamples are drawn once, as multinomial counts over its
    unfiltered test set (:func:`fdbench.metrics.bootstrap_counts` of its size and ``seed``),
    and the same counts weight the samples of every run: a classifier that filters the set
    (FD-Shifts' new-class studies drop its misclassified inliers) keeps, in every resample,
    the drawn samples it keeps (Traub et al., NeurIPS 2024, compare scoring methods on paired
    resamples). A scoring method (:func:`fdbench.analysis.scoring_methods.add_scoring_method`,
    ``kinds`` as there) is a (method, CSF) pair; its value on a resample is the mean over its
    runs (seeds). The runs of one study must agree on the size of its unfiltered set.
    ``workers`` (a local dask cluster of that many processes) or ``scheduler`` (address of a
    running one) spread the studies over processes; the values do not depend on it.
    ``known`` (:func:`known_values` of a :func:`fdbench.analysis.bootstrap_analysis` table made
    with the same ``seed`` and ``n_resamples``) supplies the values of the runs evaluated on
    their whole study set, which are the same resamples of the same samples, instead of
    computing them again.

    Returns a table with columns ``PAIRED_COLUMNS`` (``n_seeds``: the runs averaged).
    """
    if not tasks:
        raise ValueError("tasks must hold at least one PairedSamples")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1; got {n_resamples}")
    metrics = list(dict.fromkeys(metrics))
    pairs = pd.DataFrame(
        [(t.method, c) for t in tasks for c in t.confidences], columns=["method", "csf"]
    ).drop_duplicates()
    named = add_scoring_method(pairs, kinds)
    names = dict(
        zip(zip(named["method"], named["csf"], strict=True), named["scoring_method"], strict=True)
    )
    studies: dict[tuple[str, str], list[PairedSamples]] = {}
    for t in tasks:
        group = studies.setdefault((t.dataset, t.study), [])
        if group and group[0].size != t.size:
            raise ValueError(
                f"study {t.study!r} of {t.dataset!r}: runs disagree on the size of its "
                f"unfiltered test set ({group[0].size} and {t.size}); resamples cannot be paired"
            )
        group.append(t)
    args = (names, metrics, n_resamples, seed)
    groups = list(studies.values())
    knowns = [_known_of(group, known) for group in groups]
    if workers is None and scheduler is None:
        parts = [study_sums(g, *args, k) for g, k in zip(groups, knowns, strict=True)]
    else:
        parts = _on_dask(groups, knowns, args, workers, scheduler)
    sums = [(key, total / count, count) for part in parts for key, (total, count) in part.items()]
    # one frame of n_resamples rows per key, built at once (a frame per key cost ~2 ms each)
    keys = np.array([key for key, _, _ in sums], dtype=object).reshape(len(sums), 4)
    return pd.DataFrame(
        {
            name: np.repeat(keys[:, i], n_resamples)
            for i, name in enumerate(("dataset", "study", "scoring_method", "metric"))
        }
        | {
            "resample": np.tile(np.arange(n_resamples), len(sums)),
            "value": np.concatenate([values for _, values, _ in sums]),
            "n_seeds": np.repeat([count for _, _, count in sums], n_resamples),
        }
    )[list(PAIRED_COLUMNS)]


def _known_of(group: Sequence[PairedSamples], known: KnownValues | None) -> dict | None:
    """The part of ``known`` about the runs of ``group`` (what a worker needs of it)."""
    if known is None:
        return None
    keys = {(t.dataset, t.method, t.seed, t.study) for t in group}
    return {key: known[key] for key in keys if key in known}


def _on_dask(
    groups: list, knowns: list, args: tuple, workers: int | None, scheduler: str | None
) -> list:
    from dask.distributed import Client

    from fdbench.core.runner import large_graphs_allowed, local_cluster

    cluster = local_cluster(workers) if scheduler is None else None
    client = Client(cluster if cluster is not None else scheduler)
    try:
        with large_graphs_allowed():
            futures = [
                client.submit(study_sums, group, *args, k, pure=False)
                for group, k in zip(groups, knowns, strict=True)
            ]
        return client.gather(futures)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
