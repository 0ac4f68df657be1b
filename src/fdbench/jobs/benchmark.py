"""The main job: train every (method, seed), infer, evaluate every CSF on every study, select
each CSF's grid candidate on validation, report."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from fdbench.analysis.scoring_methods import ensemble_method
from fdbench.core.io import (
    RUN_MARKER,
    atomic_path,
    atomic_paths,
    checksum_path,
    read_table,
    seal_unit,
    write_table,
    write_table_file,
    write_text,
)
from fdbench.core.provenance import (
    FINGERPRINT_COLUMN,
    PROVENANCE_FILE,
    check_same_splits,
    combined_fingerprint,
    provenance_record,
    recording_reads,
)
from fdbench.core.resources import job_resources
from fdbench.core.runner import Job, resolve_workers, run_stage
from fdbench.data.fingerprints import experiment_fingerprints
from fdbench.evaluation.confidences import NON_TEST_SPLITS, default_studies, evaluate_confidences
from fdbench.evaluation.runs import prediction_groups
from fdbench.jobs.plan import SCORES_FILE, BenchmarkPlan, StudyScores, write_scores
from fdbench.jobs.report_inputs import (
    check_analysis_selection,
    check_report_studies,
    planned_studies,
    write_report_inputs,
)
from fdbench.jobs.run_folder import (
    CONFIG_FILE,
    RESULTS_FILE,
    RUN_TIMES_FILE,
    TIMES_FILE,
    check_inputs_unchanged,
    check_run_folder,
    open_run_folder,
    write_results,
    write_times,
)
from fdbench.protocol import (
    Protocol,
    build_evaluation_set,
    study_splits,
    unknown_detection_pools,
)

if TYPE_CHECKING:
    from fdbench.config.schema import BenchmarkConfig, PostHocConfig
    from fdbench.csf.openmax import OpenMaxParams
    from fdbench.csf.posthoc import PostHocChoice
    from fdbench.data.types import Experiment
    from fdbench.evaluation.runs import PredictionGroup
    from fdbench.outputs import RunOutputs


def evaluate_runs(
    stores: Sequence[Path],
    out_dir: Path,
    *,
    iid_split: str = "iid",
    with_val: bool = False,
    openmax: OpenMaxParams | None = None,
    seed: int | None = None,
    binary_fpr: float | None = None,
    fingerprints: dict[str, str] | None = None,
    threshold_rule: str = "exact",
    conventions: Sequence[str] = (),
    posthoc: PostHocConfig | None = None,
) -> Path:
    """Evaluate one run (one store) or a deep ensemble (several stores) into ``out_dir``.

    Writes ``results.parquet`` (both protocols: FD-Shifts failure detection on every study, and
    Kim et al.'s unknown detection on the studies with new-class samples and on the pooled
    studies of :func:`fdbench.protocol.unknown_detection_pools`, with the OoD-detection
    metrics) and ``scores.npz``
    (per study and prediction group: residuals and confidences under failure detection, plus
    the ``val`` split). The studies are the stored test splits and the pooled corruption
    studies ``corruption/<severity>`` (:func:`fdbench.evaluation.confidences.default_studies`). With
    ``with_val`` the results also hold failure-detection rows of the ``val`` split
    (``study == "val"``), which :func:`select_candidates` selects on. Every row records the grid
    candidate it comes from: ``candidate`` (index) and ``params`` (its parameters as JSON), from
    the stores' meta. ``seed`` fills the ``seed`` column (default: the first store's seed; an
    ensemble of ``ensemble_combinations`` gets its combination's index, so that the seed
    statistics of the results run over the combinations). ``binary_fpr`` applies the binary
    protocol (validation-FPR threshold, :func:`fdbench.evaluation.runs.prediction_groups`) to
    two-class outputs, its threshold set by ``threshold_rule``; outputs with more classes keep
    the arg-max prediction. With
    ``fingerprints`` (split → :func:`fdbench.core.provenance.split_fingerprint` of the experiment
    the stores were computed on) every row records in
    :data:`~fdbench.core.provenance.FINGERPRINT_COLUMN` the fingerprint of its study's splits
    (:func:`fdbench.core.provenance.combined_fingerprint`). ``conventions`` adds authors'-code
    quantities (:func:`fdbench.evaluation.confidences.evaluate_confidences`). With ``posthoc``
    (one run, no binary protocol) the post-hoc scores of :mod:`fdbench.csf.posthoc` join the
    ``logits`` group, their hyper-parameters searched on validation data only
    (:func:`fdbench.csf.posthoc.posthoc_confidences`), and every row records in
    :data:`CSF_PARAMS_COLUMN` its CSF's chosen values as JSON (empty for the other CSFs). The
    ``val_ood`` splits of ``posthoc`` are validation data: no evaluation (a single run's, an
    ensemble's, one under the binary protocol) tests them as a study. Both files are committed
    as one unit
    (:func:`fdbench.core.io.atomic_paths`): neither is in place unless both were written, and
    resume recomputes a pair that was not written together.
    """
    from fdbench.outputs import read_outputs

    runs = [read_outputs(path) for path in stores]
    first = runs[0]
    held_out = set(posthoc.val_ood) if posthoc is not None else set()
    posthoc = posthoc if len(runs) == 1 and binary_fpr is None else None
    available = [s for s in first.splits if s not in held_out]
    studies = default_studies(available)
    splits = [s for s in available if s not in NON_TEST_SPLITS]
    pools = unknown_detection_pools({s: first.splits[s].kind for s in splits})
    if first.splits[splits[0]].n_classes != 2:
        binary_fpr = None
    groups = prediction_groups(
        runs,
        [*splits, *(["val"] if "val" in first.splits else [])],
        openmax=openmax,
        binary_fpr=binary_fpr,
        threshold_rule=threshold_rule,
    )
    choices: dict[str, PostHocChoice] = {}
    if posthoc is not None:
        choices = _add_posthoc(first, groups, posthoc)
    needed = [*studies, *(["val"] if "val" in first.splits else [])]
    info = {
        "dataset": first.meta.get("dataset", ""),
        "method": ensemble_method(first.meta["method"]) if len(runs) > 1 else first.meta["method"],
        "seed": int(first.meta.get("seed", 0)) if seed is None else int(seed),
    }
    tables, scores = [], []
    for group in groups:
        for protocol in Protocol:
            chosen = studies
            if protocol is Protocol.FAILURE_DETECTION and with_val:
                chosen = [*studies, "val"]
            if protocol is Protocol.UNKNOWN_DETECTION:
                chosen = [
                    s
                    for s in studies
                    if any(np.any(group.labels[n] == -1) for n in study_splits(s, available))
                ] + list(pools)
            if chosen:
                table = evaluate_confidences(
                    group.labels,
                    group.predictions,
                    group.confidences,
                    studies=chosen,
                    logits=group.logits,
                    protocol=protocol,
                    iid_split=iid_split,
                    run_info=info,
                    pools=pools,
                    binary_protocol=group.threshold is not None,
                    conventions=conventions,
                )
                tables.append(table.assign(protocol=protocol.value))
        for study in needed:
            es = build_evaluation_set(study, group.labels, group.predictions, iid_split=iid_split)
            conf = {
                c: es.gather({s: group.confidences[s][c] for s, _ in es.parts})
                for c in group.confidences[study_splits(study, available)[0]]
            }
            scores.append(StudyScores(study, group.source, es.residuals, conf, es.parts))
    table = pd.concat(tables, ignore_index=True).assign(
        candidate=int(first.meta.get("candidate", 0)),
        params=json.dumps(first.meta.get("params", {}), sort_keys=True),
    )
    if posthoc is not None:
        params = {name: choice.params_json() for name, choice in choices.items()}
        table[CSF_PARAMS_COLUMN] = table["csf"].map(params).fillna("")
    if fingerprints is not None:
        paired = [iid_split] if iid_split in available else []
        prints = {
            study: combined_fingerprint(
                fingerprints, [*paired, *study_splits(study, available, pools=pools)]
            )
            for study in table["study"].unique()
        }
        table[FINGERPRINT_COLUMN] = table["study"].map(prints)
    results = out_dir / RESULTS_FILE
    with atomic_paths([out_dir / SCORES_FILE, results]) as (scores_tmp, results_tmp):
        write_scores(scores_tmp, scores)
        write_table_file(table, results, results_tmp)
    return results


#: The results column of the hyper-parameters a post-hoc score's search chose (JSON).
CSF_PARAMS_COLUMN = "csf_params"


def _add_posthoc(
    run: RunOutputs, groups: list[PredictionGroup], posthoc: PostHocConfig
) -> dict[str, PostHocChoice]:
    """Add the post-hoc scores' confidences to the ``logits`` group of ``groups`` (on the
    group's splits) and return the search's choices by score."""
    from fdbench.csf.posthoc import posthoc_confidences, posthoc_score

    for name in posthoc.scores or []:
        posthoc_score(name)
    group = next(g for g in groups if g.source == "logits")
    splits = list(group.confidences)
    confidences, choices = posthoc_confidences(
        run,
        splits,
        posthoc.scores,
        mode=posthoc.mode,
        val_ood=posthoc.val_ood,
        metric=posthoc.metric,
    )
    for split in splits:
        group.confidences[split].update(confidences[split])
    return choices


def check_validation_ood(val_ood: Sequence[str], experiment: Experiment) -> None:
    """Refuse (``ValueError``) a ``posthoc.val_ood`` split that is no study of ``experiment``
    (the search of mode ``"ood"`` reads it from every run of the experiment)."""
    names = [s.name for s in experiment.studies]
    missing = [s for s in val_ood if s not in names]
    if missing:
        raise ValueError(
            f"posthoc.val_ood names {missing}, no study of experiment {experiment.name!r} "
            f"(its studies: {', '.join(names)}); restrict data.experiments to those that hold it"
        )


def plan_benchmark(
    config: BenchmarkConfig, experiments: Sequence[Experiment], run_dir: Path
) -> BenchmarkPlan:
    """Training jobs for every (experiment, method, seed) and evaluation jobs for every run and
    every configured ensemble (the runs of a method with bases, e.g. ConfidNet, wait for the
    models of their base methods).

    A method with a grid is evaluated once per candidate (an ensemble: once per candidate, over
    the seeds' models of that candidate), in ``.../candidate<i>`` folders, with its ``val``
    rows for the selection; a method without a grid has one evaluation per run, as before.
    Every method candidate checks the experiment of each run first
    (:meth:`~fdbench.training.methods.TrainingMethod.check_experiment`), so that a method that
    cannot run on it (e.g. an external set overlapping a test set) fails before any training.
    With ``config.openmax`` the single runs' evaluations add the OpenMax CSF.
    With ``ensemble_combinations`` every ensemble is evaluated once per subset of its seeds
    (:meth:`~fdbench.config.schema.EnsembleCombinations.subsets`), in ``.../combination<i>``
    folders, its rows carrying ``i`` as their ``seed``.
    ``config.data.binary_protocol`` sets the binary protocol of two-class experiments.
    Training jobs declare one GPU (:func:`fdbench.core.resources.job_resources`) unless
    ``training.device`` is ``"cpu"``: on workers that advertise GPUs they run one per GPU.
    Every evaluation records the fingerprints of its splits
    (:func:`fdbench.data.fingerprints.experiment_fingerprints`, kept in ``plan.fingerprints`` by
    experiment, and by run where ``config.data.per_run`` draws the splits per run); an
    ensemble whose members were trained on different splits is refused.
    """
    from fdbench.csf.openmax import OpenMaxParams
    from fdbench.training.experiments import experiment_for_run
    from fdbench.training.jobs import output_stores, plan_jobs, run_training_job

    models = run_dir / "runs"
    openmax = None if config.openmax is None else OpenMaxParams(**config.openmax.model_dump())
    binary = config.data.binary_protocol
    binary_fpr = None if binary is None else binary.fpr
    rule = "exact" if binary is None else binary.threshold_rule
    conventions = tuple(config.conventions)
    training, evaluation = [], []
    fingerprints: dict[str, dict[str, str]] = {}

    def prints(experiment: Experiment, seed: int) -> dict[str, str]:
        key = f"{experiment.name}/run{seed}" if config.data.per_run else experiment.name
        if key not in fingerprints:
            fingerprints[key] = experiment_fingerprints(
                experiment_for_run(config, experiment, seed)
            )
        return fingerprints[key]

    for experiment in experiments:
        if config.posthoc is not None:
            check_validation_ood(config.posthoc.val_ood, experiment)
        for method, seed in plan_jobs(config):
            spec = config.method(method)
            key = f"{experiment.name}/{method}/{seed}"
            after = tuple(f"train:{experiment.name}/{b}/{seed}" for b in spec.dependencies())
            stores = output_stores(config, experiment.name, method, seed, models)
            run = experiment_for_run(config, experiment, seed)
            for candidate in spec.methods():
                candidate.check_experiment(run)
            training.append(
                Job(
                    f"train:{key}",
                    run_training_job,
                    (config, run, method, seed, models),
                    stores[-1],
                    after,
                    verified=True,
                    resources=job_resources(0 if config.training.device == "cpu" else 1),
                )
            )
            folder = run_dir / "evaluation" / experiment.name / method / f"seed{seed}"
            evaluation.extend(
                _evaluation_jobs(
                    f"eval:{key}",
                    [[s] for s in stores],
                    folder,
                    openmax,
                    binary_fpr,
                    fingerprints=prints(experiment, seed),
                    threshold_rule=rule,
                    conventions=conventions,
                    posthoc=config.posthoc,
                )
            )
        for method in config.ensembles:
            seeds = config.method(method).seeds
            key = f"eval:{experiment.name}/{ensemble_method(method)}"
            folder = run_dir / "evaluation" / experiment.name / f"ensemble-{method}"
            combinations = config.ensemble_combinations
            subsets = [tuple(seeds)] if combinations is None else combinations.subsets(seeds)
            for i, subset in enumerate(subsets):
                members = [
                    output_stores(config, experiment.name, method, s, models) for s in subset
                ]
                shared = _shared_fingerprints(
                    f"{ensemble_method(method)} of {experiment.name}",
                    [prints(experiment, s) for s in subset],
                )
                evaluation.extend(
                    _evaluation_jobs(
                        key if combinations is None else f"{key}/combination{i}",
                        [list(stores) for stores in zip(*members, strict=True)],
                        folder if combinations is None else folder / f"combination{i}",
                        binary_fpr=binary_fpr,
                        seed=None if combinations is None else i,
                        fingerprints=shared,
                        threshold_rule=rule,
                        conventions=conventions,
                        posthoc=config.posthoc,
                    )
                )
    return BenchmarkPlan(training, evaluation, config.selection.metric, fingerprints)


def _shared_fingerprints(what: str, members: list[dict[str, str]]) -> dict[str, str]:
    """The split fingerprints the members of an ensemble share; ``ValueError`` naming the
    first split whose samples differ between members (their outputs cannot be merged)."""
    first = members[0]
    for other in members[1:]:
        for split in sorted(set(first) | set(other)):
            if first.get(split) != other.get(split):
                raise ValueError(
                    f"{what}: the members were trained and tested on different samples of "
                    f"split {split!r} (fingerprints differ); refusing to merge their outputs"
                )
    return first


def _evaluation_jobs(
    key: str,
    candidates: list[list[Path]],
    folder: Path,
    openmax: OpenMaxParams | None = None,
    binary_fpr: float | None = None,
    *,
    seed: int | None = None,
    fingerprints: dict[str, str] | None = None,
    threshold_rule: str = "exact",
    conventions: tuple[str, ...] = (),
    posthoc: PostHocConfig | None = None,
) -> list[Job]:
    """One evaluation job per grid candidate (``candidates[i]``: the stores it evaluates);
    ``openmax`` adds the OpenMax CSF to single runs; ``binary_fpr`` applies the binary
    protocol (:func:`evaluate_runs`) with ``threshold_rule``; ``seed`` overrides the results'
    seed column; ``fingerprints`` (the splits') go into every row; ``conventions`` adds
    authors'-code quantities; ``posthoc`` adds the post-hoc scores to single runs and keeps
    its ``val_ood`` splits out of every evaluation's studies."""
    single = evaluate_runs
    if fingerprints is not None:
        single = functools.partial(single, fingerprints=fingerprints)
    if openmax is not None and len(candidates[0]) == 1:
        single = functools.partial(single, openmax=openmax)
    if binary_fpr is not None:
        single = functools.partial(single, binary_fpr=binary_fpr)
        if threshold_rule != "exact":
            single = functools.partial(single, threshold_rule=threshold_rule)
    if conventions:
        single = functools.partial(single, conventions=conventions)
    if posthoc is not None:
        single = functools.partial(single, posthoc=posthoc)
    if seed is not None:
        single = functools.partial(single, seed=seed)
    if len(candidates) == 1:
        return [
            Job(
                key,
                single,
                (candidates[0], folder),
                folder / RESULTS_FILE,
                also=(folder / SCORES_FILE,),
                verified=True,
            )
        ]
    evaluate = functools.partial(single, with_val=True)
    return [
        Job(
            f"{key}/candidate{i}",
            evaluate,
            (stores, folder / f"candidate{i}"),
            folder / f"candidate{i}" / RESULTS_FILE,
            also=(folder / f"candidate{i}" / SCORES_FILE,),
            verified=True,
        )
        for i, stores in enumerate(candidates)
    ]


def select_candidates(results: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Keep, per (dataset, method, CSF), the test rows of the grid candidate best on validation.

    The methods whose rows include ``val`` rows (``study == "val"``, see :func:`evaluate_runs`)
    were trained over a grid: for each of their CSFs,
    :func:`fdbench.analysis.selection.best_configs` picks the ``candidate`` with the best mean
    over seeds of ``metric`` on ``val``, and only that candidate's rows of every other study
    (both protocols) are kept; the ``val`` rows are dropped. A CSF competes only among the
    candidates that have it (MCD-* among those trained with dropout), never falling back to
    another. Rows of methods without ``val`` rows (one candidate) are kept as they are; row
    order is preserved.

    This is FD-Shifts' selection per confidence score (``filter_best_hparams`` in
    ``fd_shifts/reporting/__init__.py``: per experiment, model and confid, the reward and
    dropout with the best mean over runs on ``val_tuning``), by the metric that is reported
    (Traub et al., NeurIPS 2024).
    """
    from fdbench.analysis.selection import best_configs

    is_val = (results["study"] == "val").to_numpy()
    if not is_val.any():
        return results
    methods = ["dataset", "method"]
    keys = [*methods, "csf", "candidate"]
    graded = pd.MultiIndex.from_frame(results.loc[is_val, methods].drop_duplicates())
    chosen = best_configs(results[is_val], metric, config_columns=["candidate"])
    in_grid = pd.MultiIndex.from_frame(results[methods]).isin(graded)
    selected = pd.MultiIndex.from_frame(results[keys]).isin(pd.MultiIndex.from_frame(chosen[keys]))
    keep = ~is_val & (~in_grid | selected)
    return results[keep].reset_index(drop=True)


def collect_results(plan: BenchmarkPlan) -> pd.DataFrame:
    """Concatenate the results of every evaluation job into one tidy table, keeping per CSF the
    grid candidate selected on validation (:func:`select_candidates`). Results of one
    (dataset, study, seed) evaluated on different splits are refused
    (:func:`fdbench.core.provenance.check_same_splits`)."""
    table = pd.concat([read_table(job.output) for job in plan.evaluation], ignore_index=True)
    check_same_splits(table, "the evaluations")
    return select_candidates(table, plan.selection_metric)


def run_benchmark(
    config: BenchmarkConfig,
    run_dir: Path,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    report: bool = True,
    progress: Callable[[str, int, int], None] | None = None,
) -> pd.DataFrame:
    """Run the whole benchmark of ``config`` into ``run_dir`` and return the results table.

    Stages: build the experiments (datasets fetched on first use), train and infer every
    (experiment, method, seed) (:func:`fdbench.training.jobs.run_training_job`), evaluate every
    run and ensemble (:func:`evaluate_runs`), then write ``results.parquet``/``results.csv``,
    the analysis inputs and the HTML report. Finished jobs are skipped, so an interrupted run
    resumes where it stopped and gives the same table; ``workers``/``scheduler`` run the jobs and
    the bootstrap analysis on dask.distributed with the same results (``workers=None`` takes
    ``config.workers``, ``workers=0`` runs everything in this process).
    ``progress(stage, done, total)`` is called as jobs finish, as training jobs finish epochs
    (``done`` then counts the running jobs' share of their epochs) and as the analysis advances
    (stage ``"analysis"``).

    The analysis is skipped when its inputs are unchanged since it last completed: the key
    (:func:`analysis_key`) of the recorded checksums of every job's outputs and of the whole
    config is kept in :data:`ANALYSIS_FILE`. Stage times go to ``times.json``; a stage that did
    no work (every job done, analysis up to date) keeps the time recorded when it did.
    ``provenance.json`` records the fdbench version and commit, the resolved config, the
    SHA-256 of every data file read and the fingerprint of every split
    (:func:`fdbench.core.provenance.provenance_record`).

    ``run_dir`` must be new, empty or a run folder fdbench made (its marker file,
    :func:`fdbench.jobs.run_folder.open_run_folder`). Every file a job left is checked against its
    recorded SHA-256 before it is reused; a damaged one is recomputed with a warning naming it.
    Nothing is written to ``run_dir`` before the whole config holds: the folder is checked
    first, then the experiments are built and every job planned (which checks the methods
    against the data), and ``analysis.report_studies`` must match the studies they will have
    (:func:`fdbench.jobs.report_inputs.planned_studies`).
    """
    from fdbench.training.experiments import build_experiments
    from fdbench.training.jobs import collect_timings

    workers = resolve_workers(workers, scheduler, config.workers)
    check_run_folder(run_dir, _settings(config))
    times: dict[str, float] = {}
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    start = time.perf_counter()
    with recording_reads() as reads:
        experiments = build_experiments(config)
        times["build_studies_s"] = time.perf_counter() - start
        # the jobs get absolute paths: workers of a cluster run in other working directories
        plan = plan_benchmark(config, experiments, run_dir.absolute())
    held_out = config.posthoc.val_ood if config.posthoc is not None else ()
    studies = planned_studies(_run_experiments(config, experiments), held_out)
    check_report_studies(config.analysis.report_studies, studies, "the experiments")
    # nothing is written before the whole config (builder, experiments, methods, patterns) holds
    open_run_folder(run_dir, _settings(config))
    check_inputs_unchanged(run_dir, plan.fingerprints)
    record = provenance_record(config.model_dump(mode="json"), reads, plan.fingerprints)
    with atomic_path(run_dir / PROVENANCE_FILE) as tmp:
        tmp.write_text(json.dumps(record, indent=2) + "\n")
    worked = set()
    for stage, jobs in (("training", plan.training), ("evaluation", plan.evaluation)):
        start = time.perf_counter()
        if run_stage(stage, jobs, workers=workers, scheduler=scheduler, progress=progress):
            worked.add(f"{stage}_s")
        times[f"{stage}_s"] = time.perf_counter() - start
    start = time.perf_counter()
    if "training_s" in worked or not (run_dir / RUN_TIMES_FILE).exists():
        write_table(collect_timings(run_dir / "runs"), run_dir / RUN_TIMES_FILE)
    key = analysis_key(config, plan, report)
    if _analysis_current(run_dir, key, report):
        results = read_table(run_dir / RESULTS_FILE)
        if progress is not None:
            progress("analysis", 1, 1)
    else:

        def record_times() -> None:  # before the page, which shows the wall time
            so_far = {**times, "analysis_report_s": time.perf_counter() - start}
            write_times(so_far, run_dir, worked=worked | {"analysis_report_s"}, started=started)

        earlier = file_identities(run_dir, analysis_files(run_dir))
        results = _analyse(
            config, experiments, plan, run_dir, report, workers, scheduler, progress, record_times
        )
        remove_unwritten(run_dir, earlier)
        seal_unit(run_dir, analysis_files(run_dir))
        write_text(run_dir / ANALYSIS_FILE, json.dumps({"inputs": key}, indent=2) + "\n")
        worked.add("analysis_report_s")
    times["analysis_report_s"] = time.perf_counter() - start
    write_times(times, run_dir, worked=worked, started=started)
    return results


def _run_experiments(
    config: BenchmarkConfig, experiments: Sequence[Experiment]
) -> list[Experiment]:
    """The experiments the runs are tested on: ``experiments``, or where
    ``config.data.per_run`` draws them per run, each run's (built once, by
    :func:`plan_benchmark`)."""
    from fdbench.training.experiments import experiment_for_run
    from fdbench.training.jobs import plan_jobs

    if not config.data.per_run:
        return list(experiments)
    seeds = sorted({seed for _, seed in plan_jobs(config)})
    return [experiment_for_run(config, e, seed) for e in experiments for seed in seeds]


#: The record of the last completed analysis of a run folder: the key of its inputs.
ANALYSIS_FILE = "analysis.json"
#: Files of a run folder that are no output of its analysis step (or that ``fdbench report``
#: rewrites on its own: the page and its manifest).
NOT_ANALYSIS_FILES = frozenset(
    {
        ANALYSIS_FILE,
        CONFIG_FILE,
        TIMES_FILE,
        RUN_TIMES_FILE,
        PROVENANCE_FILE,
        RUN_MARKER,
        "report.html",
        "report_manifest.json",
    }
)


def analysis_files(run_dir: Path) -> list[str]:
    """The files of ``run_dir``'s analysis step (results, analysis tables, gallery): every
    top-level file fdbench wrote there with its checksum beside it, but
    :data:`NOT_ANALYSIS_FILES`. The benchmark seals them as one unit
    (:func:`fdbench.core.io.seal_unit`) once the step is complete, so ``fdbench report`` never
    reads one analysis's results beside another's bootstrap (an analysis interrupted half-way
    after its inputs changed)."""
    return sorted(
        path.name
        for path in run_dir.iterdir()
        if path.is_file()
        and not path.name.startswith(".")
        and path.suffix != ".sha256"
        and path.name not in NOT_ANALYSIS_FILES
        and checksum_path(path).is_file()
    )


def file_identities(folder: Path, names: Sequence[str]) -> dict[str, tuple[int, int, int]]:
    """The identity of each file ``names`` of ``folder`` (inode, size, modification time in
    ns): a file written again (atomically: a new file renamed over it) gets another."""
    identities = {}
    for name in names:
        info = (folder / name).stat()
        identities[name] = (info.st_ino, info.st_size, info.st_mtime_ns)
    return identities


def remove_unwritten(folder: Path, earlier: dict[str, tuple[int, int, int]]) -> list[str]:
    """Remove (with their checksum files) the files of ``earlier`` (:func:`file_identities`
    taken before a step) that the step did not write again, and return their names.

    The analysis step writes the files its settings produce; those an earlier analysis of other
    settings wrote (the leaderboard and bootstrap tables after ``n_bootstrap`` became 0, the
    report inputs after ``--no-report``) would otherwise stay beside them and be sealed with
    them (:func:`fdbench.core.io.seal_unit`), so ``fdbench report`` would render one
    analysis's tables beside another's results."""
    stale = sorted(
        name
        for name, identity in earlier.items()
        if (folder / name).is_file() and file_identities(folder, [name])[name] == identity
    )
    for name in stale:
        (folder / name).unlink()
        checksum_path(folder / name).unlink(missing_ok=True)
    return stale


#: The steps of the analysis stage as its progress reports them: results, analysis files,
#: report page.
ANALYSIS_STEPS = 3


def analysis_key(config: BenchmarkConfig, plan: BenchmarkPlan, report: bool) -> str:
    """SHA-256 naming the inputs of the analysis stage: the whole resolved config (analysis
    settings included), whether the report is written, the fdbench version, and the checksums
    recorded for every training and evaluation job's outputs in plan order (as written beside
    each file, or an outputs store's ``checksums.sha256``), so that any changed input changes
    the key."""
    import hashlib

    from fdbench import __version__
    from fdbench.core.io import DIRECTORY_CHECKSUMS

    digest = hashlib.sha256()
    digest.update(config.model_dump_json().encode())
    digest.update(f"report={report};version={__version__}".encode())
    for job in (*plan.training, *plan.evaluation):
        for path in job.outputs:
            record = path / DIRECTORY_CHECKSUMS if path.is_dir() else checksum_path(path)
            digest.update(record.read_bytes() if record.is_file() else b"-")
    return digest.hexdigest()


def _analysis_current(run_dir: Path, key: str, report: bool) -> bool:
    """Whether the analysis recorded in ``run_dir`` was made from inputs with this ``key`` and
    its results (and, with ``report``, the page) are intact."""
    from fdbench.core.io import damage

    record = run_dir / ANALYSIS_FILE
    outputs = [RESULTS_FILE, "results.csv", *(("report.html",) if report else ())]
    if damage(record) is not None or any(damage(run_dir / name) for name in outputs):
        return False
    try:
        return json.loads(record.read_text()).get("inputs") == key
    except (ValueError, AttributeError):
        return False


def _analyse(
    config: BenchmarkConfig,
    experiments: Sequence[Experiment],
    plan: BenchmarkPlan,
    run_dir: Path,
    report: bool,
    workers: int | None,
    scheduler: str | None,
    progress: Callable[[str, int, int], None] | None,
    before_report: Callable[[], None] | None = None,
) -> pd.DataFrame:
    """The analysis stage: collect the results, write the analysis files and the report,
    reporting each of its :data:`ANALYSIS_STEPS` steps to ``progress``; ``before_report`` is
    called just before the page is written (the stage times go to ``times.json`` then)."""
    steps = ANALYSIS_STEPS if report else 1

    def step(done: int) -> None:
        if progress is not None:
            progress("analysis", done, steps)

    step(0)
    results = collect_results(plan)
    if report:
        check_analysis_selection(config.analysis, results)
    write_results(results, run_dir)
    if config.posthoc is not None:
        from fdbench.jobs.posthoc_comparison import write_posthoc_comparison

        write_posthoc_comparison(results, run_dir, config.analysis.report_studies)
    step(1)
    if report:
        write_report_inputs(
            config, experiments, plan, run_dir, results, workers=workers, scheduler=scheduler
        )
        step(2)
        from fdbench.report import unknown_detection_summary, write_report
        from fdbench.report.tables import report_table

        if before_report is not None:
            before_report()
        write_report(
            run_dir,
            report_table(results),
            unknown_detection=unknown_detection_summary(results),
            seed_boxplots=config.analysis.seed_boxplots,
        )
        step(3)
    return results


def _settings(config: BenchmarkConfig) -> dict:
    """The resolved config a run folder is pinned to (:func:`fdbench.jobs.run_folder.pin_config`).

    The analysis settings and the number of workers are left out: they change the report or
    the speed, not the results.
    """
    return config.model_dump(mode="json", exclude={"analysis", "workers"})
