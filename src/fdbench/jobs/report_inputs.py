"""The analysis files a benchmark run folder holds for its report (bootstrap, curves, SGR, …)."""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from fdbench.io import read_table, write_table
from fdbench.jobs.plan import SCORES_FILE, BenchmarkPlan, StudyScores, load_scores

if TYPE_CHECKING:
    from pathlib import Path

    from fdbench.config import BenchmarkConfig
    from fdbench.data.studies import Experiment

GALLERY_KINDS = ("iid", "subclass", "new_class_semantic", "new_class_nonsemantic")


def _selected(study: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(study, p) for p in patterns)


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
    ``gallery.npz`` and ``rounding.csv`` into ``run_dir`` (layout of docs/report.md).

    Everything covers the studies matching ``config.analysis.report_studies``. The bootstrap
    covers every run (paired resamples across CSFs and seeds); so does the calibration
    (``fdbench.analysis.csf_calibration``: FD-Shifts' per-CSF treatment, Platt scaling fitted on
    each run's validation split where the CSF is not a probability; ``reliability.parquet``
    holds the bins of every run, with ``seed``, ``treatment`` and ``platt_collapsed``; the report
    averages the ECE over runs). Curves, SGR risk excess and the failure gallery use the lowest
    seed of each method (the gallery: of the first method, on studies of the kinds in
    ``GALLERY_KINDS``). Of a method trained over a grid, each CSF's scores come from the
    candidate ``results`` keeps for it (:func:`fdbench.jobs.benchmark.select_candidates`).
    """
    from fdbench.analysis import StudySamples, bootstrap_analysis, csf_calibration, risk_excess
    from fdbench.report import Gallery, curve_table, select_gallery

    settings = config.analysis
    images = {e.name: {s.name: s.images for s in e.studies} for e in experiments}
    kinds = {e.name: {s.name: s.kind.value for s in e.studies} for e in experiments}
    tasks, curves, reliability, sgr, galleries = [], [], [], [], []
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
        runs.append((run, job.output.parent / SCORES_FILE, set(csfs)))
        key = run[:2]
        lowest[key] = min(lowest.get(key, run[2]), run[2])
    for (dataset, method, seed), path, csfs in runs:
        entries = [r for r in (_restricted(e, csfs) for e in load_scores(path)) if r.confidences]
        val = {e.source: e for e in entries if e.study == "val"}
        entries = [
            e for e in entries if e.study != "val" and _selected(e.study, settings.report_studies)
        ]
        for e in entries:
            tasks.append(StudySamples(dataset, method, seed, e.study, e.residuals, e.confidences))
        info = {"dataset": dataset, "method": method, "seed": seed}
        for source, v in val.items():
            group = [e for e in entries if e.source == source]
            if group:
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
        if method != config.methods[0].name:
            continue
        for e in entries:
            if kinds[dataset].get(e.study) not in GALLERY_KINDS:
                continue
            pictures = np.concatenate([images[dataset][name][idx] for name, idx in e.parts])
            for csf in settings.gallery_csfs:
                if csf in e.confidences:
                    galleries.append(
                        select_gallery(
                            pictures,
                            e.residuals,
                            e.confidences[csf],
                            study=f"{dataset}: {e.study}",
                            csf=csf,
                            k=settings.gallery_k,
                        )
                    )
    if tasks and settings.n_bootstrap:
        boot = bootstrap_analysis(
            tasks,
            n_resamples=settings.n_bootstrap,
            seed=settings.bootstrap_seed,
            workers=workers,
            scheduler=scheduler,
        )
        write_table(boot, run_dir / "bootstrap.parquet")
    if curves:
        write_table(pd.concat(curves, ignore_index=True), run_dir / "curves.parquet")
    if reliability:
        write_table(pd.concat(reliability, ignore_index=True), run_dir / "reliability.parquet")
    if sgr:
        write_table(pd.concat(sgr, ignore_index=True), run_dir / "sgr.csv")
    if galleries:
        Gallery.concat(galleries).save(run_dir / "gallery.npz")
    _write_rounding(config, plan, run_dir)


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
