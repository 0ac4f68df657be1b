"""The analysis files a benchmark run folder holds for its report (bootstrap, curves, SGR, …)."""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from fdbench.core.io import read_table, write_table
from fdbench.jobs.plan import SCORES_FILE, BenchmarkPlan, StudyScores, load_scores

if TYPE_CHECKING:
    from pathlib import Path

    from fdbench.config.schema import AnalysisConfig, BenchmarkConfig
    from fdbench.data.types import Experiment
    from fdbench.outputs import RunOutputs

GALLERY_KINDS = ("iid", "subclass", "new_class_semantic", "new_class_nonsemantic")


def _selected(study: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(study, p) for p in patterns)


def planned_studies(experiments: Sequence[Experiment], held_out: Sequence[str] = ()) -> list[str]:
    """The studies a benchmark's results will hold for ``experiments``, known before any
    training: per experiment its test splits (its studies but the ``held_out`` ones, a
    post-hoc search's validation OoD sets) with the pooled corruption studies
    (:func:`fdbench.evaluation.confidences.default_studies`) and Kim et al.'s pooled
    unknown-detection studies (:func:`fdbench.protocol.unknown_detection_pools`), as
    :func:`fdbench.jobs.benchmark.evaluate_runs` evaluates them; each name once, in order."""
    from fdbench.evaluation.confidences import default_studies
    from fdbench.protocol import unknown_detection_pools

    names: list[str] = []
    for experiment in experiments:
        tested = [s for s in experiment.studies if s.name not in held_out]
        names += default_studies([s.name for s in tested])
        names += unknown_detection_pools({s.name: s.kind.value for s in tested})
    return list(dict.fromkeys(names))


def check_report_studies(patterns: Sequence[str], studies: Sequence[str], where: str) -> None:
    """``ValueError`` naming ``analysis.report_studies`` if one of its ``patterns`` matches
    none of ``studies`` (those of ``where``), with the closest study name."""
    from fdbench.core.names import did_you_mean, printable

    for pattern in patterns:
        if not any(fnmatch.fnmatchcase(s, pattern) for s in studies):
            raise ValueError(
                f"analysis.report_studies: {printable(repr(pattern))} matches no study of "
                f"{where} ({', '.join(studies[:12])}{', ...' if len(studies) > 12 else ''})"
                f"{did_you_mean(pattern, studies)}"
            )


def check_analysis_selection(settings: AnalysisConfig, results: pd.DataFrame) -> None:
    """``ValueError`` naming the setting if a pattern of ``analysis.report_studies`` matches no
    study of ``results`` or a name the config gives in ``analysis.gallery_csfs`` is no CSF of
    it (the default list is drawn for what a run has): what the user asked for is analysed, or
    the run says why not (the sections would be silently missing)."""
    from fdbench.core.names import printable

    studies = sorted(results["study"].astype(str).unique())
    check_report_studies(settings.report_studies, studies, "the results")
    csfs = set(results["csf"].astype(str))
    chosen = settings.gallery_csfs if "gallery_csfs" in settings.model_fields_set else []
    for csf in chosen:
        if csf not in csfs:
            raise ValueError(
                f"analysis.gallery_csfs: {printable(repr(csf))} is no CSF of the results "
                f"({', '.join(sorted(csfs))})"
            )


def _gallery_labels(
    run: RunOutputs | None, parts: Sequence[tuple[str, np.ndarray]], csf: str, classes: list[str]
) -> dict[str, np.ndarray]:
    """The true and the predicted class (names; ``"new class"`` for label −1) of the samples
    ``parts`` of a study, for the gallery of ``csf``: the prediction of the classifier the CSF
    is judged with (:func:`fdbench.evaluation.runs.csf_prediction_source`), read from the run's
    outputs (``read_outputs(store, lazy=True)``). Empty when the run has no single store (an
    ensemble: ``run`` is ``None``)."""
    from fdbench.evaluation.runs import csf_prediction_source

    if run is None:
        return {}
    classes = [str(c) for c in run.meta.get("classes", classes)]
    labels, predictions = [], []
    for name, idx in parts:
        split = run.splits[name]
        if csf_prediction_source(csf) == "mcd" and split.mcd_logits is not None:
            mcd = np.asarray(split.mcd_logits)[idx]
            softmax = np.exp(mcd - mcd.max(axis=2, keepdims=True))
            scores = (softmax / softmax.sum(axis=2, keepdims=True)).mean(axis=1)
        else:
            scores = np.asarray(split.logits)[idx]
        labels.append(np.asarray(split.labels)[idx])
        predictions.append(scores.argmax(axis=1))

    def text(values: np.ndarray) -> np.ndarray:
        return np.array(
            ["new class" if v < 0 else classes[v] if v < len(classes) else str(v) for v in values]
        )

    return {
        "labels": text(np.concatenate(labels)),
        "predictions": text(np.concatenate(predictions)),
    }


def write_report_inputs(
    config: BenchmarkConfig,
    experiments: Sequence[Experiment],
    plan: BenchmarkPlan,
    run_dir: Path,
    results: pd.DataFrame,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
) -> None:
    """Write ``bootstrap.parquet``, ``curves.parquet``, ``reliability.parquet``, ``sgr.csv``,
    ``operating_points.csv``, ``gallery.npz``, ``rounding.csv``, ``severity_bootstrap.parquet``,
    ``accepted_calibration.parquet`` and the leaderboard files (:func:`_write_leaderboard`)
    into ``run_dir`` (layout of docs/report.md).

    Everything covers the studies matching ``config.analysis.report_studies``. The bootstrap
    covers every run (paired resamples across CSFs and seeds); so does the calibration
    (``fdbench.analysis.csf_calibration``: FD-Shifts' per-CSF treatment, Platt scaling fitted on
    each run's validation split where the CSF is not a probability; ``reliability.parquet``
    holds the bins of every run, with ``seed``, ``treatment`` and ``platt_collapsed``; the report
    averages the ECE over runs). Curves, SGR risk excess and the failure gallery use the lowest
    seed of each method (the gallery: of the first method, on studies of the kinds in
    ``GALLERY_KINDS``); so do the operating points (``operating_points.csv``:
    :func:`fdbench.analysis.operating_points.operating_point_table` certified on the validation
    split at ``operating_point_alpha``/``operating_point_delta``, checked on every study). Of
    a method trained over a grid, each CSF's scores come from the candidate ``results`` keeps
    for it (:func:`fdbench.jobs.benchmark.select_candidates`).

    ``severity_bootstrap.parquet`` holds the bootstrap rows of every level study (pooled
    corruption intensity, C-OOD level; :func:`fdbench.analysis.severity_level`) of every run:
    those the bootstrap above covers are copied, the others bootstrapped with the same seed
    and number of resamples (so the resamples are the same as if they had been in it).
    ``accepted_calibration.parquet`` holds :func:`fdbench.analysis.accepted_calibration_table`
    at 80 % coverage for every run on the report studies.
    """
    from fdbench.analysis import (
        StudySamples,
        accepted_calibration_table,
        csf_calibration,
        risk_excess,
        severity_level,
    )
    from fdbench.analysis.operating_points import operating_point_table
    from fdbench.evaluation.curves import curve_table
    from fdbench.outputs import read_outputs
    from fdbench.report import select_gallery

    settings = config.analysis
    images = {e.name: {s.name: s.images for s in e.studies} for e in experiments}
    kinds = {e.name: {s.name: s.kind.value for s in e.studies} for e in experiments}
    sizes = {e.name: {s.name: len(s.images) for s in e.studies} for e in experiments}
    class_names = {e.name: list(e.class_names) for e in experiments}
    tasks, curves, reliability, sgr, galleries, leaderboard = [], [], [], [], [], []
    points = []
    level_tasks, accepted = [], []
    lowest: dict[tuple[str, str], int] = {}
    runs = []
    provenance = ["dataset", "method", "seed", "candidate"]
    kept = results.groupby(provenance, sort=False)["csf"].unique()
    for job in plan.evaluation:
        head = read_table(job.output, columns=provenance).iloc[0]
        run = (str(head["dataset"]), str(head["method"]), int(head["seed"]))
        csfs = kept.get((*run, int(head["candidate"])))
        if csfs is None:
            continue
        stores = job.args[0]
        store = stores[0] if len(stores) == 1 else None
        runs.append((run, job.output.parent / SCORES_FILE, set(csfs), store))
        key = run[:2]
        lowest[key] = min(lowest.get(key, run[2]), run[2])
    for (dataset, method, seed), path, csfs, store in runs:
        entries = [r for r in (_restricted(e, csfs) for e in load_scores(path)) if r.confidences]
        leaderboard.extend(_paired_samples(dataset, method, seed, entries, sizes[dataset]))
        val = {e.source: e for e in entries if e.study == "val"}
        for e in entries:
            if severity_level(e.study) and not _selected(e.study, settings.report_studies):
                level_tasks.append(
                    StudySamples(dataset, method, seed, e.study, e.residuals, e.confidences)
                )
        entries = [
            e for e in entries if e.study != "val" and _selected(e.study, settings.report_studies)
        ]
        for e in entries:
            tasks.append(StudySamples(dataset, method, seed, e.study, e.residuals, e.confidences))
        info = {"dataset": dataset, "method": method, "seed": seed}
        for source, v in val.items():
            group = [e for e in entries if e.source == source]
            if group:
                accepted.append(
                    accepted_calibration_table(
                        v.residuals,
                        v.confidences,
                        {e.study: e.residuals for e in group},
                        {e.study: e.confidences for e in group},
                    ).assign(**info)
                )
                _, bins = csf_calibration(
                    v.residuals,
                    v.confidences,
                    {e.study: e.residuals for e in group},
                    {e.study: e.confidences for e in group},
                )
                reliability.append(bins.assign(**info))
        if seed != lowest[(dataset, method)]:
            continue
        for e in entries:
            curves.append(
                curve_table(
                    e.residuals, e.confidences, study=e.study, max_points=settings.curve_points
                ).assign(**info)
            )
        for source, v in val.items():
            group = [e for e in entries if e.source == source]
            if not group:
                continue
            for csf, conf in v.confidences.items():
                table = risk_excess(
                    (v.residuals, conf),
                    {e.study: (e.residuals, e.confidences[csf]) for e in group},
                    settings.sgr_target_risks,
                    settings.sgr_delta,
                )
                sgr.append(table.assign(csf=csf, **info))
                points.append(
                    operating_point_table(
                        (v.residuals, conf),
                        {e.study: (e.residuals, e.confidences[csf]) for e in group},
                        settings.operating_point_alpha,
                        settings.operating_point_delta,
                    ).assign(csf=csf, **info)
                )
        if method != config.methods[0].name:
            continue
        outputs = None  # the run's store, opened (and its checksums verified) once
        for e in entries:
            if kinds[dataset].get(e.study) not in GALLERY_KINDS:
                continue
            pictures = np.concatenate([images[dataset][name][idx] for name, idx in e.parts])
            for csf in settings.gallery_csfs:
                if csf in e.confidences:
                    if outputs is None and store is not None:
                        outputs = read_outputs(store, lazy=True)
                    named = _gallery_labels(outputs, e.parts, csf, class_names[dataset])
                    galleries.append(
                        select_gallery(
                            pictures,
                            e.residuals,
                            e.confidences[csf],
                            study=f"{dataset}: {e.study}",
                            csf=csf,
                            k=settings.gallery_k,
                            **named,
                        )
                    )
    _write_tables(run_dir, accepted, curves, reliability, sgr, galleries)
    if points:
        write_table(pd.concat(points, ignore_index=True), run_dir / "operating_points.csv")
    boot, shared = None, []
    with _one_cluster(workers, scheduler, settings.n_bootstrap > 0) as (workers, scheduler):
        if tasks and settings.n_bootstrap:
            boot, extra = _bootstrap(tasks, settings, workers, scheduler)
            write_table(boot, run_dir / "bootstrap.parquet")
            shared.extend((boot, extra))
        if settings.n_bootstrap:
            shared.extend(
                _write_severity_bootstrap(run_dir, boot, level_tasks, settings, workers, scheduler)
            )
        if leaderboard and settings.n_bootstrap:
            _write_leaderboard(config, leaderboard, results, run_dir, workers, scheduler, shared)
    _write_rounding(config, plan, run_dir)


@contextmanager
def _one_cluster(
    workers: int | None, scheduler: str | None, needed: bool
) -> Iterator[tuple[int | None, str | None]]:
    """The (workers, scheduler) the bootstraps of the analysis stage run on: with ``workers``
    and no ``scheduler``, one local cluster (:func:`fdbench.core.runner.local_cluster`) that
    all of them share, started only where ``needed`` (each would otherwise start its own, about
    1.4 s of start-up and imports here); otherwise the arguments as they are."""
    if not needed or scheduler is not None or not workers:
        yield workers, scheduler
        return
    from fdbench.core.runner import local_cluster

    cluster = local_cluster(workers)
    try:
        yield None, cluster.scheduler_address
    finally:
        cluster.close()


def _write_tables(run_dir, accepted, curves, reliability, sgr, galleries) -> None:
    """The analysis files that need no bootstrap (those of :func:`write_report_inputs`)."""
    from fdbench.report import Gallery

    if accepted:
        table = pd.concat(accepted, ignore_index=True)
        write_table(table, run_dir / "accepted_calibration.parquet")
    if curves:
        write_table(pd.concat(curves, ignore_index=True), run_dir / "curves.parquet")
    if reliability:
        write_table(pd.concat(reliability, ignore_index=True), run_dir / "reliability.parquet")
    if sgr:
        write_table(pd.concat(sgr, ignore_index=True), run_dir / "sgr.csv")
    if galleries:
        Gallery.concat(galleries).save(run_dir / "gallery.npz")


def _paired_samples(
    dataset: str, method: str, seed: int, entries: list[StudyScores], sizes: dict[str, int]
) -> list:
    """The leaderboard's inputs of one run: every study with a paper column, each prediction
    group placed in the study's unfiltered test set (``sizes``: samples of each split)."""
    from fdbench.analysis.leaderboard import study_column
    from fdbench.analysis.paired import PairedSamples, unfiltered_positions

    samples = []
    for e in entries:
        if study_column(e.study) is None:
            continue
        positions, n = unfiltered_positions(e.parts, sizes)
        whole = n == positions.size
        samples.append(
            PairedSamples(
                dataset,
                method,
                seed,
                e.study,
                e.residuals,
                e.confidences,
                None if whole else positions,
                n,
            )
        )
    return samples


#: The metrics of the analysis files' bootstrap (``bootstrap.parquet``).
BOOTSTRAP_METRICS = ("aurc", "augrc")


def _bootstrap(
    tasks: list, settings: AnalysisConfig, workers: int | None, scheduler: str | None
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """:func:`fdbench.analysis.bootstrap_analysis` of ``tasks`` with :data:`BOOTSTRAP_METRICS`,
    and the rows of the leaderboard's other metric, AUROC_f, where every task has 0/1
    residuals (it comes with AUGRC from the same sums, so the leaderboard need not bootstrap
    these runs again; ``None`` otherwise)."""
    from fdbench.analysis import bootstrap_analysis
    from fdbench.analysis.paired import PAIRED_METRICS

    binary = all(np.all((t.residuals == 0) | (t.residuals == 1)) for t in tasks)
    extra = [m for m in PAIRED_METRICS if m not in BOOTSTRAP_METRICS] if binary else []
    table = bootstrap_analysis(
        tasks,
        metrics=(*BOOTSTRAP_METRICS, *extra),
        n_resamples=settings.n_bootstrap,
        seed=settings.bootstrap_seed,
        workers=workers,
        scheduler=scheduler,
    )
    if not extra:
        return table, None
    mine = table["metric"].isin(BOOTSTRAP_METRICS).to_numpy()
    return table[mine].reset_index(drop=True), table[~mine]


def _write_leaderboard(
    config: BenchmarkConfig,
    samples: list,
    results: pd.DataFrame,
    run_dir: Path,
    workers: int | None = None,
    scheduler: str | None = None,
    shared: Sequence[pd.DataFrame | None] = (),
) -> None:
    """Write the leaderboard across scoring methods (:mod:`fdbench.analysis.leaderboard`):
    ``leaderboard_bootstrap.parquet`` (paired seed-mean bootstrap values per study),
    ``leaderboard.csv`` (mean ± std over seeds per paper column; ``leaderboard_studies.csv``
    per study), ``leaderboard_ranks.csv``,
    ``leaderboard_significance.csv`` and ``paired_deltas.csv`` (every ordered pair), each of
    the last three for AUGRC, AURC and AUROC_f. The paired bootstrap runs on ``workers`` /
    ``scheduler`` as the other bootstrap does; the runs evaluated on their whole study set
    take their values from the tables of ``shared`` (bootstrapped with the same seed and
    resamples) where these hold them."""
    from fdbench.analysis import leaderboard as lb
    from fdbench.analysis.paired import PAIRED_METRICS, known_values, paired_bootstrap

    kinds = {m.name: m.kind for m in config.methods}
    settings = config.analysis
    tables = [t for t in shared if t is not None and not t.empty]
    paired = paired_bootstrap(
        samples,
        n_resamples=settings.n_bootstrap,
        seed=settings.bootstrap_seed,
        kinds=kinds,
        workers=workers,
        scheduler=scheduler,
        known=known_values(pd.concat(tables, ignore_index=True)) if tables else None,
    )
    write_table(paired, run_dir / "leaderboard_bootstrap.parquet")
    summary = lb.seed_summary(results, kinds)
    write_table(summary, run_dir / "leaderboard.csv")
    per_study = lb.seed_summary(results, kinds, by_column=False)
    write_table(per_study, run_dir / "leaderboard_studies.csv")
    columns = lb.column_bootstrap(paired)
    ranks = [lb.leaderboard_ranks(columns, m).assign(metric=m) for m in PAIRED_METRICS]
    write_table(pd.concat(ranks, ignore_index=True), run_dir / "leaderboard_ranks.csv")
    maps = [lb.leaderboard_significance(columns, m).assign(metric=m) for m in PAIRED_METRICS]
    write_table(pd.concat(maps, ignore_index=True), run_dir / "leaderboard_significance.csv")
    deltas = lb.paired_deltas(columns, reference=None, estimates=summary)
    write_table(deltas, run_dir / "paired_deltas.csv")


def _write_severity_bootstrap(
    run_dir, boot, level_tasks, settings, workers, scheduler
) -> list[pd.DataFrame | None]:
    """The bootstrap rows of every level study: those of ``boot`` and those of ``level_tasks``
    (bootstrapped here with the same seed and number of resamples, :func:`_bootstrap`).
    Returns the tables bootstrapped here (the written rows and the AUROC_f rows)."""
    from fdbench.analysis import severity_level

    frames, made = [], []
    if boot is not None:
        levels = [s for s in boot["study"].unique() if severity_level(str(s))]
        frames.append(boot[boot["study"].isin(levels)])
    if level_tasks:
        made = list(_bootstrap(level_tasks, settings, workers, scheduler))
        frames.append(made[0])
    frames = [f for f in frames if not f.empty]
    if frames:
        table = pd.concat(frames, ignore_index=True)
        write_table(table, run_dir / "severity_bootstrap.parquet")
    return made


def _restricted(entry: StudyScores, csfs: set[str]) -> StudyScores:
    """``entry`` with only the confidences of ``csfs`` (the CSFs selected from its run)."""
    if set(entry.confidences) <= csfs:
        return entry
    confidences = {c: v for c, v in entry.confidences.items() if c in csfs}
    return dataclasses.replace(entry, confidences=confidences)


def _write_rounding(config: BenchmarkConfig, plan: BenchmarkPlan, run_dir: Path) -> None:
    from fdbench.csf.precision import precision_diagnostics
    from fdbench.outputs import read_outputs

    first = config.methods[0]
    tables = []
    for job in plan.training:
        _, experiment, method, seed, _ = job.args
        if method != first.name or seed != min(first.seeds):
            continue
        iid = read_outputs(job.output).splits["iid"]
        table = precision_diagnostics(iid.logits, iid.labels)
        table.insert(0, "dataset", experiment.name)
        tables.append(table)
    if tables:
        write_table(pd.concat(tables, ignore_index=True), run_dir / "rounding.csv")
