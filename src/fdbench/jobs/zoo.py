"""The zoo job: evaluate every member (resumable, on dask workers if asked), then the analyses,
tables, figures and the report section of the run folder."""

from __future__ import annotations

import hashlib
import time
import warnings
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pandas as pd

from fdbench.core.io import read_parquet, write_bytes, write_table, write_tables, write_text
from fdbench.core.runner import Job, resolve_workers, run_stage
from fdbench.jobs.run_folder import RESULTS_FILE, open_run_folder, write_results, write_times
from fdbench.zoo import analyses as A
from fdbench.zoo import figures as F
from fdbench.zoo.config import ZooConfig
from fdbench.zoo.evaluate import evaluate_member
from fdbench.zoo.members import Member, discover_members, read_metadata
from fdbench.zoo.sources import write_sources
from fdbench.zoo.urls import url_stamp

__all__ = ["LEVELS_FILE", "RESULTS_FILE", "member_jobs", "run_zoo", "write_zoo_report"]

LEVELS_FILE = "cood_levels.parquet"


def _stamp(member: Member) -> str:
    """A short digest of the member's files (names, sizes, modification times; for a URL its
    name, size and the file system's checksum, :func:`fdbench.zoo.urls.url_stamp`): a changed
    member gets a new cache file instead of a stale result."""
    if isinstance(member.path, str):
        return hashlib.sha256(url_stamp(member.path).encode()).hexdigest()[:12]
    root = member.path
    paths = [root] if root.is_file() else sorted(root.rglob("*"))
    parts = [
        f"{p.relative_to(root.parent)}:{p.stat().st_size}:{p.stat().st_mtime_ns}"
        for p in paths
        if p.is_file()
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]


def evaluate_member_job(member: Member, config: ZooConfig, output: Path) -> Path:
    """Evaluate ``member`` and write its levels and its results as one unit
    (:func:`fdbench.core.io.write_tables`: neither is in place unless both were written, and
    resume recomputes a pair that was not written together)."""
    results, levels = evaluate_member(member, config)
    levels_path = output.with_name(output.name.replace(".results.", ".levels."))
    write_tables({levels_path: levels, output: results})
    return output


def member_jobs(config: ZooConfig, run_dir: Path) -> list[Job]:
    """One job per member of the zoo, its output ``members/<name>.<stamp>.results.parquet``
    (and the member's levels beside it).

    The paths the jobs get are absolute (resolved here, in the client's working directory), so
    that workers of a cluster started elsewhere read the members and write the run folder
    the user named."""
    jobs = []
    run_dir = run_dir.absolute()
    for member in discover_members(config.zoo):
        output = run_dir / "members" / f"{member.name}.{_stamp(member)}.results.parquet"
        if isinstance(member.path, Path):
            member = replace(member, path=member.path.absolute())
        args = (member, config, output)
        levels = output.with_name(output.name.replace(".results.", ".levels."))
        jobs.append(
            Job(
                f"zoo:{member.name}",
                evaluate_member_job,
                args,
                output,
                also=(levels,),
                verified=True,
            )
        )
    return jobs


def _settings(config: ZooConfig) -> dict:
    """The resolved config a zoo run folder is pinned to (the number of workers and the
    bootstrap size are left out: they change speed or intervals, not the member results)."""
    return config.model_dump(mode="json", exclude={"workers", "n_bootstrap"})


def run_zoo(
    config: ZooConfig,
    run_dir: Path,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    report: bool = True,
    progress: Callable[[str, int, int], None] | None = None,
    earlier_times: dict[str, float] | None = None,
) -> pd.DataFrame:
    """Evaluate every member of ``config.zoo`` into ``run_dir`` and return the results table.

    The members of ``config.sources`` (timm models, benchmark run folders) are first written
    into the zoo folder (:func:`fdbench.zoo.sources.write_sources`; members already there are
    kept).

    ``run_dir`` must be new, empty or a run folder fdbench made; it is pinned to the config
    (:func:`fdbench.jobs.run_folder.open_run_folder`).

    Members already evaluated (their cache file in ``members/`` exists) are skipped, so an
    interrupted run resumes and a second run only repeats the analyses; ``workers`` /
    ``scheduler`` evaluate members on dask.distributed (same files). Then writes
    ``results.parquet``/``.csv`` (every member's rows), ``cood_levels.parquet``,
    ``members.csv`` (one row per member), ``tables/*.csv``, ``figures/*.png`` and
    ``zoo_report.html``; stage times go to ``times.json``, after ``earlier_times`` (the
    seconds of stages the caller ran before, e.g. ``training_s`` of the embedded zoo).
    """
    workers = resolve_workers(workers, scheduler, config.workers)
    open_run_folder(run_dir, _settings(config))
    write_sources(config)
    times: dict[str, float] = dict(earlier_times or {})
    start = time.perf_counter()
    jobs = member_jobs(config, run_dir)
    run_stage("members", jobs, workers=workers, scheduler=scheduler, progress=progress)
    times["evaluation_s"] = time.perf_counter() - start
    start = time.perf_counter()
    results = pd.concat([read_parquet(job.output) for job in jobs], ignore_index=True)
    levels = pd.concat(
        [
            read_parquet(job.output.with_name(job.output.name.replace(".results.", ".levels.")))
            for job in jobs
        ],
        ignore_index=True,
    )
    write_results(results, run_dir)
    write_table(levels, run_dir / LEVELS_FILE)
    _warn_without_levels(results, config)
    if report:
        write_zoo_report(run_dir, results, read_metadata(config.zoo), config)
    times["analysis_report_s"] = time.perf_counter() - start
    write_times(times, run_dir)
    return results


def write_zoo_report(
    run_dir: Path, results: pd.DataFrame, meta: pd.DataFrame, config: ZooConfig
) -> Path:
    """Write the analyses' tables (``tables/*.csv``), figures (``figures/*.png``),
    ``members.csv`` and the report section ``zoo_report.html`` of a zoo run."""
    from fdbench.report.html import image_html, page_html
    from fdbench.report.zoo_page import zoo_sections

    members = A.member_table(results, meta)
    write_table(members.reset_index(), run_dir / "members.csv")
    curves = {csf: A.cood_curves(results, csf) for csf in config.cood.csfs}
    curves = {csf: c for csf, c in curves.items() if not c.empty}
    tables: list[tuple[str, str, pd.DataFrame, bool | None]] = [
        ("members", "Per member (MSR; _ts: after temperature scaling)", members, None),
        ("ts_effect", "Temperature scaling: change by T < 1 and T > 1", A.ts_effect(members), None),
        ("pnorm_gain", "AURC gain over MSR of the p-norm CSFs", A.pnorm_gain(results), None),
        ("mcd_effect", "MC dropout: entropy of one pass vs MC mean", A.mcd_effect(results), None),
        (
            "spearman",
            "Spearman correlations across members (bootstrap over members)",
            A.spearman_table(members, n_bootstrap=config.n_bootstrap, seed=config.seed),
            None,
        ),
        ("by_family", "Per family (medians)", A.group_comparison(members, "family"), None),
        ("by_regime", "Per training regime (medians)", A.group_comparison(members, "regime"), None),
        ("imagenet_o", "ImageNet-O: OOD AUROC per CSF", A.extra_ood_table(results), True),
    ]
    for csf, c in curves.items():
        tables.append((f"cood_auroc_{csf}", f"C-OOD AUROC per level ({csf})", c, True))
        ranks = A.cood_ranks(c)
        tables.append((f"cood_ranks_{csf}", f"Member rank per C-OOD level ({csf})", ranks, None))
        tables.append(
            (
                f"cood_rank_correlation_{csf}",
                f"Spearman correlation of member rankings across C-OOD levels ({csf})",
                A.cood_level_rank_correlation(c),
                None,
            )
        )
    for name, _, frame, _ in tables:
        if frame.empty:
            continue
        named = frame.index.name is not None or isinstance(frame.index, pd.MultiIndex)
        write_table(frame.reset_index() if named else frame, run_dir / "tables" / f"{name}.csv")
    figures = [
        ("scatter", "Across the zoo", F.scatter_figure(members)),
        ("ts", "AUROC_f change through TS", F.ts_figure(members)),
        ("pnorm_gain", "AURC gain of the p-norm CSFs", F.pnorm_gain_figure(A.pnorm_gain(results))),
    ]
    figures += [
        (f"cood_{csf}", f"C-OOD AUROC vs severity ({csf})", F.cood_severity_figure(c, csf))
        for csf, c in curves.items()
    ]
    shown_figures = []
    for name, title, png in figures:
        if png is None:
            continue
        write_bytes(run_dir / "figures" / f"{name}.png", png)
        shown_figures.append((f"fig-{name}", title, image_html(png, name, title)))
    zoo_name = Path(config.zoo).name
    run = [
        ("zoo", f"{zoo_name} ({members.shape[0]} members)"),
        *[
            (column, ", ".join(f"{k} ({v})" for k, v in members[column].value_counts().items()))
            for column in ("family", "regime")
            if column in members.columns and members[column].notna().any()
        ],
        ("CSFs", ", ".join(dict.fromkeys(str(c) for c in results["csf"].dropna() if str(c)))),
        ("C-OOD CSFs", ", ".join(config.cood.csfs)),
        ("bootstrap", f"{config.n_bootstrap} resamples over members"),
    ]
    sections = zoo_sections(run, members, shown_figures, tables)
    note = (
        f"{members.shape[0]} members of {zoo_name}. Temperature, p and T fitted on each "
        "member's validation split only; C-OOD levels per member and CSF (Galil et al., "
        f"App. L: {config.cood.n_estimation}/{config.cood.n_test} estimation/test samples per "
        f"OOD class, {_removed_note(results, config)}, group size = number of ID classes, "
        "scaled down for a small pool). Every number comes from results.parquet."
    )
    path = run_dir / "zoo_report.html"
    write_text(path, page_html(f"fdbench zoo: {config.name}", sections, note))
    return path


def _warn_without_levels(results: pd.DataFrame, config: ZooConfig) -> None:
    """One warning for the members left without C-OOD levels (every OOD class removed by the
    class filter of Galil et al., App. L.1), not one per member."""
    kept = results[(results["study"] == "cood") & (results["metric"] == "classes_kept")]
    empty = sorted(str(m) for m in kept.loc[kept["value"] == 0, "member"].unique())
    if not empty:
        return
    minimum = config.cood.n_estimation + config.cood.n_test
    named = ", ".join(empty[:5]) + (f" and {len(empty) - 5} more" if len(empty) > 5 else "")
    warnings.warn(
        f"no C-OOD levels for {len(empty)} of {results['member'].nunique()} members ({named}): "
        f"every OOD class has fewer than {minimum} samples and is removed (Galil et al., "
        "App. L.1; cood.keep_small_classes keeps them)",
        stacklevel=2,
    )


def _removed_note(results: pd.DataFrame, config: ZooConfig) -> str:
    """What the C-OOD class filter did: how many classes it removed per member (App. L.1)."""
    minimum = config.cood.n_estimation + config.cood.n_test
    if config.cood.keep_small_classes:
        return f"classes with fewer than {minimum} samples kept (cood.keep_small_classes)"
    rows = results[(results["study"] == "cood") & (results["metric"] == "classes_removed")]
    counts = sorted({int(v) for v in rows["value"]})
    removed = "/".join(str(c) for c in counts) if counts else "0"
    return f"{removed} classes with fewer than {minimum} samples removed per member (App. L.1)"
