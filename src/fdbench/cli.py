"""The ``fdbench`` command: parses arguments, calls the stages, prints results."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    import pandas as pd

app = typer.Typer(
    name="fdbench",
    help="Benchmark failure detection of classifiers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

TABLE_SUFFIXES = (".csv", ".parquet", ".pq")
FORCE_HELP = "Overwrite files at the output path that fdbench did not write (never an input)."
#: ``fdbench evaluate`` prints one table per study up to this many studies; beyond, one compact
#: table, the per-study tables going to files.
MAX_PRINTED_STUDIES = 12
#: ``fdbench evaluate --out FILE`` also writes the risk-coverage curves as ``curves.parquet``
#: beside FILE, the name under which ``fdbench report`` reads them.
CURVES_STEM = "curves"
PER_MILLE = {"aurc", "augrc", "eaurc", "eaugrc"}
DISPLAY = (
    ("aurc", "AURC‰", min),
    ("augrc", "AUGRC‰", min),
    ("eaurc", "e-AURC‰", min),
    ("auroc_f", "AUROC_f", max),
    ("fpr@95tpr", "FPR@95", min),
    ("ece", "ECE", min),
)


def _show_version(value: bool) -> None:
    if value:
        from fdbench.provenance import source_version

        found = source_version()
        typer.echo(f"fdbench {found['version']} ({found['commit']})")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_show_version,
            is_eager=True,
            help="Print fdbench's version and commit and exit.",
        ),
    ] = False,
) -> None:
    """Benchmark failure detection of classifiers."""


#: Jobs finished and planned per stage of the running command, for the Ctrl-C message.
_JOBS: dict[str, tuple[int, int]] = {}


def _progress_bar() -> contextlib.AbstractContextManager:
    """The progress display of every stage: description, bar, done/total, elapsed time and
    the estimated time remaining."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        "{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        "eta",
        TimeRemainingColumn(),
    )


def _interrupted_message() -> str:
    """The one line printed on Ctrl-C: jobs finished per stage and how to resume."""
    jobs = [(s, d, t) for s, (d, t) in _JOBS.items() if s != "analysis"]
    if not jobs:
        return "fdbench: interrupted"
    done = ", ".join(f"{int(d)} of {t} {s} jobs" for s, d, t in jobs)
    return f"fdbench: interrupted: {done} finished; run the same command again to resume"


def _write_table(table: pd.DataFrame, out: Path) -> None:
    from fdbench.io import write_table

    write_table(table, out)


def _is_input(out: Path, source: Path) -> bool:
    """Whether writing ``out`` would write ``source`` or a file inside it (same path, symlink,
    hard link, or a path inside an input folder)."""
    if not source.exists():
        return False
    if out.exists() and os.path.samefile(out, source):
        return True
    resolved, origin = out.resolve(), source.resolve()
    return resolved == origin or (source.is_dir() and resolved.is_relative_to(origin))


def check_outputs(outputs: dict[str, Path | None], inputs: list[Path]) -> None:
    """Before any work: no output (``--option`` → path) may be an input of the same command,
    and none may be a file fdbench did not write unless ``--force`` is given
    (:func:`fdbench.io.check_replaceable`)."""
    from fdbench.io import check_replaceable

    for option, out in outputs.items():
        if out is None:
            continue
        for source in inputs:
            if _is_input(out, source):
                raise ValueError(
                    f"{option} {out} is the input {source} of this command (or inside it); "
                    "refusing to overwrite an input: choose another output path"
                )
        if out.exists() and not out.is_dir():
            check_replaceable(out)


def _forced(force: bool) -> contextlib.AbstractContextManager:
    from fdbench.io import overwrite_foreign

    return overwrite_foreign() if force else contextlib.nullcontext()


def print_leaderboard(run_dir: Path) -> None:
    """Print the leaderboard of scoring methods by AUGRC of every data set of a run folder
    (:func:`fdbench.report.leaderboard.leaderboard_frame`); nothing if it has none."""
    from rich.console import Console
    from rich.table import Table

    from fdbench.report.leaderboard import leaderboard_frame, read_leaderboard

    tables = read_leaderboard(run_dir)
    if tables is None:
        return
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 160)
    for dataset in dict.fromkeys(tables["ranks"]["dataset"]):
        frame = leaderboard_frame(tables["summary"], tables["ranks"], dataset)
        grid = Table(
            title=f"Leaderboard by AUGRC ×1000 (mean ± std over seeds) — {dataset}",
            title_justify="left",
        )
        grid.add_column("scoring method")
        for column in frame.columns:
            grid.add_column(str(column), justify="right", no_wrap=True)
        for name, row in frame.iterrows():
            cells = [f"{v:.2f}" if isinstance(v, float) else str(v) for v in row]
            grid.add_row(str(name), *cells)
        console.print(grid)


def print_results(table: pd.DataFrame) -> None:
    """Print one table per study: CSF rows, AURC-type metrics ×1000 as the papers show them."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 160)
    has_ci = "ci_lower" in table.columns
    for study, part in table.groupby("study", sort=False):
        wide = part.pivot_table(index="csf", columns="metric", values="value", sort=False)
        accuracy = wide["accuracy"].iloc[0] if "accuracy" in wide else float("nan")
        title = f"{study}  (n = {int(part['n_samples'].iloc[0])}, accuracy = {accuracy:.4f})"
        grid = Table(title=title, title_justify="left")
        grid.add_column("CSF")
        shown = [(m, h, best) for m, h, best in DISPLAY if m in wide and wide[m].notna().any()]
        for _, header, _ in shown:
            grid.add_column(header, justify="right", no_wrap=True)
        bests = {m: best(wide[m].dropna()) for m, _, best in shown}
        if has_ci:
            lo = part.pivot_table(index="csf", columns="metric", values="ci_lower", sort=False)
            hi = part.pivot_table(index="csf", columns="metric", values="ci_upper", sort=False)
        for csf, values in wide.iterrows():
            cells = [str(csf)]
            for metric, _, _ in shown:
                scale = 1000.0 if metric in PER_MILLE else 1.0
                value = values[metric]
                if value != value:
                    cells.append("–")
                    continue
                digits = 2 if scale != 1.0 else 4
                text = f"{value * scale:.{digits}f}"
                if has_ci and metric in lo.columns and lo.at[csf, metric] == lo.at[csf, metric]:
                    low, high = lo.at[csf, metric] * scale, hi.at[csf, metric] * scale
                    text += f" [{low:.{digits}f}, {high:.{digits}f}]"
                if value == bests[metric]:
                    text = f"[bold green]{text}[/]"
                cells.append(text)
            grid.add_row(*cells)
        console.print(grid)


@app.command()
def evaluate(
    path: Annotated[
        Path,
        typer.Argument(
            help="Saved outputs: .npz (logits, labels[, study]), a torch.save .pt file of "
            "tensors, .csv/.parquet table (label, prediction, confidence columns[, study]), "
            "OpenOOD score dumps (.npz with pred, conf, label, or their scores/ folder), an "
            "fdbench outputs store or an FD-Shifts run directory (docs/outputs.md)."
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Write the tidy results (.csv/.parquet), and the risk-coverage curves as "
            "curves.parquet in the same folder, for `fdbench report FOLDER`.",
        ),
    ] = None,
    protocol: Annotated[
        str, typer.Option(help="failure_detection (FD-Shifts) or unknown_detection (Kim et al.).")
    ] = "failure_detection",
    bootstrap: Annotated[
        int, typer.Option("--bootstrap", help="Bootstrap resamples for 95 % intervals (0 = off).")
    ] = 0,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap resamples.")] = 0,
    iid_study: Annotated[
        str, typer.Option(help="The in-distribution study new-class studies are paired with.")
    ] = "iid",
    confidence: Annotated[
        list[str] | None,
        typer.Option("--confidence", "-c", help="Confidence column(s) of a table (default: all)."),
    ] = None,
    binary_fpr: Annotated[
        float | None,
        typer.Option(
            "--binary-fpr",
            help="Binary protocol (two-class outputs with a val split): predict class 1 at the "
            "threshold with this validation FPR, e.g. 0.2 (Bernhardt et al.).",
        ),
    ] = None,
    precision_report: Annotated[
        bool,
        typer.Option(
            "--precision-report",
            help="Also print how float16/32/64 softmax rounding changes AURC and AUROC_f.",
        ),
    ] = False,
    openmax: Annotated[
        bool,
        typer.Option(
            "--openmax",
            help="Also compute the OpenMax CSF (Kim et al.'s defaults) from the stored train "
            "logits.",
        ),
    ] = False,
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            help="Name of the outputs (e.g. the data set): the dataset column of the results, "
            "and the title of their report.",
        ),
    ] = None,
    tables: Annotated[
        Path | None,
        typer.Option(
            "--tables",
            help=f"Folder for one CSV table per study when there are more than "
            f"{MAX_PRINTED_STUDIES} studies (default: beside --out, else ./<PATH name>_tables).",
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help=FORCE_HELP)] = False,
) -> None:
    """Evaluate every CSF on every study of saved outputs and print the metric tables.

    With more than a few studies the console shows one compact table (per CSF: the i.i.d.
    study and the mean over the others) and every per-study table goes to a CSV file under
    ``--tables``. Under ``--protocol unknown_detection`` the pooled studies of Kim et al. are
    added and their Table 5 layout is printed after the per-study tables."""
    with _forced(force):
        _evaluate(
            path,
            out,
            protocol,
            bootstrap,
            seed,
            iid_study,
            confidence,
            precision_report,
            openmax,
            binary_fpr,
            name,
            tables,
        )


def _evaluate(
    path: Path,
    out: Path | None,
    protocol: str,
    bootstrap: int,
    seed: int,
    iid_study: str,
    confidence: list[str] | None,
    precision_report: bool,
    openmax: bool,
    binary_fpr: float | None = None,
    name: str | None = None,
    tables: Path | None = None,
) -> None:
    from fdbench.io import check_output_file, check_output_folder, verify_if_recorded
    from fdbench.jobs.evaluate import evaluate_run, evaluate_table, read_confidence_table
    from fdbench.protocol import Protocol

    if not path.exists():
        raise FileNotFoundError(f"PATH {path} not found: it does not exist")
    curves_out = None
    if out is not None:
        check_output_file(out, "--out", TABLE_SUFFIXES)
        if out.stem == CURVES_STEM:
            raise ValueError(
                f"--out {out.name}: {CURVES_STEM}.parquet beside --out holds the curves; "
                "choose another name for the results"
            )
        curves_out = out.with_name(f"{CURVES_STEM}.parquet")
    if protocol not in {p.value for p in Protocol}:
        choices = " or ".join(p.value for p in Protocol)
        raise ValueError(f"--protocol must be {choices}; got {protocol!r}")
    if bootstrap < 0:
        raise ValueError(f"--bootstrap must be >= 0; got {bootstrap}")
    if name is not None and not name.strip():
        raise ValueError("--name must not be empty")
    if binary_fpr is not None and not 0.0 <= binary_fpr <= 1.0:
        raise ValueError(f"--binary-fpr must be in [0, 1]; got {binary_fpr}")
    from fdbench.outputs import is_score_dump, read_score_dump

    score_dump = is_score_dump(path)
    is_table = path.suffix.lower() in {".csv", ".parquet", ".pq"}
    if is_table or score_dump:
        what = "an OpenOOD score dump" if score_dump else "a confidence table"
        for given, option in (
            (precision_report, "--precision-report"),
            (openmax, "--openmax"),
            (binary_fpr is not None, "--binary-fpr"),
        ):
            if given:
                raise ValueError(f"{option} needs logits; {what} has none")
    if confidence and not is_table:
        raise ValueError("--confidence selects columns of a table; PATH is not a .csv/.parquet")
    _check_bootstrap_fits(bootstrap, "--bootstrap")
    tables = tables if tables is not None else _default_tables(path, out)
    check_output_folder(tables, "--tables")
    check_outputs({"--out": out, "--out (curves)": curves_out, "--tables": tables}, [path])
    if path.is_file():
        verify_if_recorded(path)
    if is_table or score_dump:
        if score_dump:
            table = read_score_dump(path, iid_study=iid_study)
        else:
            table = read_confidence_table(path, columns=confidence)
        results, curves = evaluate_table(
            table,
            protocol=protocol,
            iid_split=iid_study,
            n_bootstrap=bootstrap,
            seed=seed,
            return_curves=True,
        )
    else:
        from fdbench.csf import OpenMaxParams
        from fdbench.outputs import load_outputs

        run = load_outputs(path)
        results, curves = evaluate_run(
            run,
            protocol=protocol,
            iid_split=iid_study,
            n_bootstrap=bootstrap,
            seed=seed,
            openmax=OpenMaxParams() if openmax else None,
            binary_fpr=binary_fpr,
            return_curves=True,
        )
        if precision_report:
            _print_precision_report(run)
    if name is not None:
        results["dataset"] = name
        curves["dataset"] = name
    if results["study"].nunique() > MAX_PRINTED_STUDIES:
        print_compact(results, iid_study=iid_study)
        written = write_study_tables(results, tables)
        typer.echo(f"wrote {len(written)} per-study tables to {tables}")
    else:
        print_results(results)
    print_unknown_detection(results, iid_study=iid_study)
    if out is not None:
        _write_table(results, out)
        _write_table(curves, curves_out)
        typer.echo(f"wrote {out} and {curves_out}")


def _default_tables(path: Path, out: Path | None) -> Path:
    """Where the per-study tables of ``fdbench evaluate`` go without ``--tables``: beside
    ``--out`` (``<out name>_tables``), else ``./<PATH name>_tables``."""
    if out is not None:
        return out.with_name(f"{out.stem}_tables")
    return Path(f"{path.resolve().stem}_tables")


def print_compact(results: pd.DataFrame, *, iid_study: str = "iid") -> None:
    """One table for many studies: per CSF, AUGRC ×1000 and AUROC_f on the i.i.d. study, their
    means over the other studies, and on how many studies the CSF has the lowest AUGRC."""
    from rich.console import Console
    from rich.table import Table

    table = results
    if "protocol" in results.columns:
        table = results[results["protocol"] == "failure_detection"]
    wide = table.pivot_table(index=["csf", "study"], columns="metric", values="value", sort=False)
    studies = table["study"].unique()
    others = [s for s in studies if s != iid_study]
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 160)
    grid = Table(
        title=f"{len(studies)} studies: {iid_study} and the mean over the {len(others)} others "
        "(per-study tables in files)",
        title_justify="left",
    )
    for header in (
        "CSF",
        f"AUGRC‰ {iid_study}",
        "AUGRC‰ others",
        f"AUROC_f {iid_study}",
        "AUROC_f others",
        "best AUGRC in",
    ):
        grid.add_column(header, justify="left" if header == "CSF" else "right")
    augrc = wide["augrc"].unstack("study") if "augrc" in wide else None
    auroc = wide["auroc_f"].unstack("study") if "auroc_f" in wide else None
    wins = (augrc.eq(augrc.min()) & augrc.notna()).sum(axis=1) if augrc is not None else None

    def cell(frame: pd.DataFrame | None, csf: str, columns: list[str], scale: float) -> str:
        if frame is None or not set(columns) & set(frame.columns):
            return "–"
        value = frame.loc[csf, [c for c in columns if c in frame.columns]].mean()
        return "–" if value != value else f"{value * scale:.{2 if scale > 1 else 4}f}"

    for csf in table["csf"].unique():
        grid.add_row(
            str(csf),
            cell(augrc, csf, [iid_study], 1000.0),
            cell(augrc, csf, others, 1000.0),
            cell(auroc, csf, [iid_study], 1.0),
            cell(auroc, csf, others, 1.0),
            "–" if wins is None else f"{int(wins.get(csf, 0))} of {len(studies)}",
        )
    console.print(grid)


def write_study_tables(results: pd.DataFrame, folder: Path) -> list[Path]:
    """Write one CSV per study and protocol into ``folder``: CSF rows, metric columns (values as
    computed, not scaled), named after the study with ``/`` replaced by ``__``."""
    from fdbench.io import atomic_path

    if "protocol" not in results.columns:
        results = results.assign(protocol="failure_detection")
    written = []
    for (protocol, study), part in results.groupby(["protocol", "study"], sort=False):
        wide = part.pivot_table(index="csf", columns="metric", values="value", sort=False)
        name = str(study).replace("/", "__")
        if protocol != "failure_detection":
            name = f"{protocol}__{name}"
        path = folder / f"{name}.csv"
        with atomic_path(path) as tmp:
            wide.to_csv(tmp)
        written.append(path)
    return written


def _check_bootstrap_fits(n_resamples: int, option: str) -> None:
    """Refuse up front a number of resamples whose seeds alone cannot fit in memory (the
    bootstrap checks its full need again when it starts)."""
    from fdbench.metrics.bootstrap import SEED_BYTES, check_memory

    check_memory(n_resamples * SEED_BYTES, f"{option}: {n_resamples} resamples")


def print_unknown_detection(results: pd.DataFrame, *, iid_study: str = "iid") -> None:
    """Print Kim et al.'s Table 5 layout when the results hold the pooled unknown-detection
    study (:func:`fdbench.report.unknown_detection_summary`); nothing otherwise."""
    from rich.console import Console
    from rich.table import Table

    from fdbench.report import unknown_detection_display, unknown_detection_summary

    frame = unknown_detection_display(unknown_detection_summary(results, iid_study=iid_study))
    if frame.empty:
        return
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 200)
    grid = Table(
        title="Unknown detection (Kim et al., Table 5): mean ± std over seeds; AURC ×1000, "
        "others %",
        title_justify="left",
    )
    grid.add_column(str(frame.index.name))
    for column in frame.columns:
        grid.add_column(str(column), justify="right")
    for label, row in frame.iterrows():
        grid.add_row(str(label), *(str(v) for v in row))
    console.print(grid)


def _print_precision_report(run: object) -> None:
    from rich.console import Console

    from fdbench.csf.precision import precision_diagnostics

    console = Console()
    for name, split in run.splits.items():
        if name in {"train", "val"} or (split.labels < 0).all():
            continue
        report = precision_diagnostics(split.logits, split.labels)
        console.print(f"[bold]float precision of the softmax on {name}[/]")
        console.print(report.to_string(index=False))


def _default_config(quick: bool) -> Path:
    from importlib.resources import files

    name = "fashion_mnist_quick.yaml" if quick else "fashion_mnist.yaml"
    return Path(str(files("fdbench") / "configs" / name))


def _embedded_config(config: Path) -> Path:
    """The embedded config named ``config`` (with or without ``.yaml``) when there is one,
    else ``config`` itself (its absence is reported when it is read)."""
    from importlib.resources import files

    if config.parent != Path("."):
        return config
    name = config.name if config.suffix in {".yaml", ".yml"} else f"{config.name}.yaml"
    embedded = Path(str(files("fdbench") / "configs" / name))
    return embedded if embedded.exists() else config


@app.command()
def benchmark(
    config: Annotated[
        Path | None,
        typer.Argument(
            help="Benchmark YAML config, or the name of an embedded one (e.g. "
            "unknown_detection.yaml; default: the embedded Fashion-MNIST one)."
        ),
    ] = None,
    quick: Annotated[
        bool, typer.Option("--quick", help="Run the small embedded configuration (minutes).")
    ] = False,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Run folder (default: runs/<config name>).")
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Run jobs on a dask LocalCluster of N worker processes (0: in this process; "
            "default: the config's 'workers').",
        ),
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option(help="Run jobs on the dask scheduler at this address.")
    ] = None,
    report: Annotated[bool, typer.Option(help="Write the analysis files and HTML report.")] = True,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Write into an --out folder that is not a run folder of fdbench, replacing "
            "files fdbench did not write (never the CONFIG file).",
        ),
    ] = False,
) -> None:
    """Train, infer, evaluate every CSF on every study, and report (resumable)."""
    with _forced(force):
        _benchmark(config, quick, out, workers, scheduler, report)


def _benchmark(
    config: Path | None,
    quick: bool,
    out: Path | None,
    workers: int | None,
    scheduler: str | None,
    report: bool,
) -> None:
    from fdbench.config import load_config
    from fdbench.io import check_output_folder
    from fdbench.jobs.benchmark import run_benchmark

    if config is not None and quick:
        raise ValueError("give either a CONFIG file or --quick, not both")
    if config is not None and not config.exists():
        config = _embedded_config(config)
    if out is not None:
        _check_run_folder(out, config)
    settings = load_config(config if config is not None else _default_config(quick))
    run_dir = out if out is not None else Path("runs") / settings.name
    check_output_folder(run_dir, "--out")
    _check_bootstrap_fits(settings.analysis.n_bootstrap, "analysis.n_bootstrap")
    _check_run_folder(run_dir, config)
    with _progress_bar() as bar:
        tasks: dict[str, int] = {}

        def progress(stage: str, done: int, total: int) -> None:
            _JOBS[stage] = (done, total)
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        results = run_benchmark(
            settings,
            run_dir,
            workers=workers,
            scheduler=scheduler,
            report=report,
            progress=progress,
        )
    print_leaderboard(run_dir)
    print_study_summary(results)
    print_unknown_detection(results)
    typer.echo(f"results: {run_dir / 'results.parquet'}")
    if report:
        typer.echo(f"report: {run_dir / 'report.html'}")


@app.command()
def zoo(
    config: Annotated[
        Path | None,
        typer.Argument(
            help="Zoo YAML config (see docs/zoo.md): the zoo folder and settings. Without it, "
            "the embedded zoo: 24 small classifiers trained here on Fashion-MNIST (cached in "
            "<run folder>/zoo)."
        ),
    ] = None,
    quick: Annotated[
        bool,
        typer.Option(
            "--quick",
            help="Fewer bootstrap resamples and a coarser T grid; the embedded zoo trains "
            "a third of the epochs on fewer samples with 10 MC-dropout passes.",
        ),
    ] = False,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Run folder (default: runs/<config name>).")
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Evaluate members on a dask LocalCluster of N worker processes (0: in this "
            "process; default: the config's 'workers').",
        ),
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option(help="Evaluate members on the dask scheduler at this address.")
    ] = None,
    report: Annotated[bool, typer.Option(help="Write the analyses and zoo_report.html.")] = True,
) -> None:
    """Evaluate every member of a model zoo and report across the zoo (resumable per member)."""
    from fdbench.zoo import load_zoo_config, run_zoo
    from fdbench.zoo.config import quick_config

    if config is None:
        from fdbench.zoo.embedded import MC_PASSES, embedded_config

        name = "embedded_quick" if quick else "embedded"
        run_dir = out if out is not None else Path("runs") / name
        settings = embedded_config(run_dir, quick=quick)
        if quick:
            typer.echo(
                "--quick: members trained for a third of their epochs on fewer samples, "
                f"{MC_PASSES[True]} MC-dropout passes (full zoo: {MC_PASSES[False]})"
            )
    else:
        settings = load_zoo_config(config)
        if quick:
            settings = quick_config(settings)
        run_dir = out if out is not None else Path("runs") / settings.name
    with _progress_bar() as bar:
        tasks: dict[str, int] = {}

        def progress(stage: str, done: int, total: int) -> None:
            _JOBS[stage] = (done, total)
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done)

        if config is None:
            from fdbench.io import claim_run_folder
            from fdbench.zoo.embedded import build_embedded_zoo

            claim_run_folder(run_dir)  # the members are trained into run_dir/zoo
            train_workers = settings.workers if workers is None else workers
            build_embedded_zoo(
                settings.zoo, quick=quick, workers=train_workers or None, progress=progress
            )
        results = run_zoo(
            settings,
            run_dir,
            workers=workers,
            scheduler=scheduler,
            report=report,
            progress=progress,
        )
    typer.echo(f"{results['member'].nunique()} members; results: {run_dir / 'results.parquet'}")
    if report:
        typer.echo(f"report: {run_dir / 'zoo_report.html'}")


@app.command()
def report(
    run_dir: Annotated[
        Path,
        typer.Argument(
            help="Run folder holding results.parquet and any of bootstrap.parquet, "
            "curves.parquet, reliability.parquet, gallery.npz, rounding.csv, sgr.csv."
        ),
    ],
    title: Annotated[str | None, typer.Option(help="Title of the page.")] = None,
    curve_csf: Annotated[
        list[str] | None,
        typer.Option(
            "--curve-csf",
            help="CSF drawn in the curve plots (repeatable; default: the six with the lowest "
            "mean AURC).",
        ),
    ] = None,
    screenshot: Annotated[
        Path | None,
        typer.Option(
            help="Also render the page in headless Chromium and save the top of it as this PNG "
            "(1400 px wide)."
        ),
    ] = None,
    screenshot_height: Annotated[
        int, typer.Option(min=200, help="Height of the screenshot in pixels.")
    ] = 2400,
    force: Annotated[bool, typer.Option("--force", help=FORCE_HELP)] = False,
) -> None:
    """Build RUN_DIR/report.html (self-contained) and export every table as CSV and LaTeX."""
    with _forced(force):
        _report(run_dir, title, curve_csf, screenshot, screenshot_height)


def _report(
    run_dir: Path,
    title: str | None,
    curve_csf: list[str] | None,
    screenshot: Path | None,
    screenshot_height: int,
) -> None:
    from dataclasses import fields

    from fdbench.io import check_output_file, check_output_folder
    from fdbench.report import read_run_inputs, write_report
    from fdbench.report.report import MANIFEST_FILE, REPORT_FILE

    if not run_dir.is_dir():
        raise NotADirectoryError(f"run folder {run_dir} does not exist or is not a directory")
    check_output_folder(run_dir, "RUN_DIR")
    if screenshot is not None:
        check_output_file(screenshot, "--screenshot", (".png",))
    page, manifest = run_dir / REPORT_FILE, run_dir / MANIFEST_FILE
    written = {page.name, manifest.name}
    inputs = [p for p in run_dir.iterdir() if p.is_file() and p.name not in written]
    check_outputs({"RUN_DIR/report.html": page, "RUN_DIR/report_manifest.json": manifest}, inputs)
    # the screenshot is taken of the page, so the page is one of its inputs
    check_outputs({"--screenshot": screenshot}, [*inputs, page, manifest])
    if not any((run_dir / f"results{s}").is_file() for s in (".parquet", ".csv")):
        raise FileNotFoundError(
            f"RUN_DIR {run_dir} holds no results: expected results.parquet or results.csv "
            "(written by fdbench benchmark, or fdbench evaluate --out)"
        )
    inputs = read_run_inputs(run_dir)
    if inputs.results is not None:
        from fdbench.provenance import check_same_splits

        check_same_splits(inputs.results, f"the results of {run_dir}")
    unknown = None
    if inputs.results is not None and {"protocol", "n_samples"} <= set(inputs.results.columns):
        from fdbench.jobs.benchmark import report_table
        from fdbench.report import unknown_detection_summary

        unknown = unknown_detection_summary(inputs.results)
        inputs.results = report_table(inputs.results)
    given = {f.name: getattr(inputs, f.name) for f in fields(inputs)}
    path = write_report(
        run_dir,
        **given,
        curve_csfs=curve_csf,
        title=title,
        read_files=False,
        unknown_detection=unknown,
    )
    typer.echo(f"wrote {path}")
    if screenshot is not None:
        from fdbench.report.browser import screenshot_page

        typer.echo(f"wrote {screenshot_page(path, screenshot, height=screenshot_height)}")


def _check_run_folder(run_dir: Path, config: Path | None) -> None:
    """The run folder must not be, or hold, the config file the benchmark reads."""
    if config is None:
        return
    check_outputs({"--out": run_dir}, [config])
    if config.exists() and config.resolve().is_relative_to(run_dir.resolve()):
        raise ValueError(
            f"the config file {config} lies inside the run folder {run_dir}, which fdbench "
            "writes; keep the config elsewhere or choose another --out"
        )


#: The metric of the console summary after a benchmark (the AUGRC paper's, ×1000).
SUMMARY_METRIC = "augrc"


def study_summary(results: pd.DataFrame, metric: str = SUMMARY_METRIC) -> dict[str, pd.DataFrame]:
    """Per dataset, the mean over seeds of ``metric`` for every (method · CSF) row and every
    study the report shows (:func:`fdbench.jobs.benchmark.report_table`: i.i.d., ``cor`` the mean of
    the pooled corruption levels, sub-class, each new-class study), failure-detection rows only;
    the pooled corruption levels themselves are left out (``cor`` summarises them)."""
    from fdbench.jobs.benchmark import CORRUPTION_SUMMARY, report_table
    from fdbench.protocol import POOLED_CORRUPTION

    table = report_table(results)
    table = table[(table["metric"] == metric) & (table["study"] != "val")]
    table = table[~table["study"].str.match(POOLED_CORRUPTION.pattern)]
    tables = {}
    for dataset, part in table.groupby("dataset", sort=False):
        rows = part["method"] + " · " + part["csf"]
        wide = part.assign(row=rows).pivot_table(
            index="row", columns="study", values="value", aggfunc="mean", sort=False
        )
        first = [s for s in ("iid", CORRUPTION_SUMMARY, "subclass") if s in wide.columns]
        tables[str(dataset)] = wide[[*first, *(c for c in wide.columns if c not in first)]]
    return tables


def print_study_summary(results: pd.DataFrame) -> None:
    """Print, per dataset, one compact table of AUGRC ×1000 (mean over seeds) with a column per
    study the report shows (:func:`study_summary`), the best of each column in bold."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 160)
    for dataset, wide in study_summary(results).items():
        grid = Table(
            title=f"{dataset}: AUGRC ×1000 per study (mean over seeds; lower is better)",
            title_justify="left",
        )
        grid.add_column("method · CSF")
        for study in wide.columns:
            grid.add_column(str(study).removeprefix("new_class/"), justify="right")
        bests = wide.min()
        for row, values in wide.iterrows():
            cells = [str(row)]
            for study, value in values.items():
                text = "–" if value != value else f"{value * 1000:.2f}"
                cells.append(f"[bold green]{text}[/]" if value == bests[study] else text)
            grid.add_row(*cells)
        console.print(grid)


data_app = typer.Typer(
    help="Datasets: fetch with checksums, inspect corruptions.", no_args_is_help=True
)
app.add_typer(data_app, name="data")


@data_app.command("fetch")
def data_fetch(
    name: Annotated[
        str,
        typer.Argument(
            help="fashion_mnist, mnist, animal_mnist, digits, textures, noise, 'all', or "
            "'wordnet' (the WordNet 3.0 noun database of Kim et al.'s benchmarks)."
        ),
    ],
    data_dir: Annotated[
        Path | None,
        typer.Option(help="Cache folder (default: $FDBENCH_DATA or ~/.cache/fdbench)."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Fetch again even if cached.")] = False,
) -> None:
    """Download (or build) datasets into the cache, verifying SHA-256 checksums."""
    from fdbench.data import DATASETS, fetch, fetch_all, fetch_wordnet
    from fdbench.io import check_output_folder

    if name not in ("all", "wordnet") and name not in DATASETS:
        raise ValueError(
            f"NAME must be 'all', 'wordnet' or one of {', '.join(DATASETS)}; got {name!r}"
        )
    if data_dir is not None:
        check_output_folder(data_dir, "--data-dir")
    if name == "wordnet":
        folders = {name: fetch_wordnet(data_dir=data_dir, force=force)}
    elif name == "all":
        folders = fetch_all(data_dir=data_dir, force=force)
    else:
        folders = {name: fetch(name, data_dir=data_dir, force=force)}
    for dataset, folder in folders.items():
        typer.echo(f"{dataset}: {folder}")


@data_app.command("prepare-fix")
def data_prepare_fix(
    source: Annotated[Path, typer.Argument(help="Folder of original images (sub-folders kept).")],
    destination: Annotated[Path, typer.Argument(help="Folder to write the 32×32 PNGs to.")],
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace existing output files.")
    ] = False,
) -> None:
    """Build a FIX set (LSUN-FIX, Tiny ImageNet-FIX; Tack et al. 2020) from original images:
    shorter side to 256, centre crop 256, resize to 32×32 (bilinear), saved as PNG."""
    from fdbench.data.fix import prepare_fix

    n = prepare_fix(source, destination, overwrite=overwrite)
    typer.echo(f"wrote {n} images to {destination}")


@data_app.command("show-corruptions")
def data_show_corruptions(
    out: Annotated[Path, typer.Option("--out", help="PNG file to write.")],
    seed: Annotated[int, typer.Option(help="Seed of the corruptions.")] = 0,
    data_dir: Annotated[Path | None, typer.Option(help="Cache folder.")] = None,
    force: Annotated[bool, typer.Option("--force", help=FORCE_HELP)] = False,
) -> None:
    """Draw the 15 corruptions × 5 severities on Fashion-MNIST test images into a PNG grid."""
    from fdbench.data._cache import data_dir as cache_dir
    from fdbench.data.corruptions import show_corruptions
    from fdbench.io import check_output_file

    with _forced(force):
        check_output_file(out, "--out", (".png",))
        check_outputs({"--out": out}, [cache_dir(data_dir) / "fashion_mnist"])
        typer.echo(f"wrote {show_corruptions(None, out, seed=seed, data_dir=data_dir)}")


_SIGINT = threading.Event()


def _on_sigint(signum: int, frame: object) -> None:
    _SIGINT.set()
    raise KeyboardInterrupt


def _exit_interrupted() -> None:
    """Ctrl-C: one line (jobs finished, how to resume) and exit status 130; nothing else is
    printed while the workers shut down."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    sys.stdout.flush()
    print(_interrupted_message(), file=sys.stderr, flush=True)
    # no interpreter shutdown: dask's exit hooks would report the cluster closed under them
    os._exit(130)


def main() -> None:
    """Run the ``fdbench`` command line.

    User errors (:func:`fdbench.errors.is_user_error`: invalid inputs, files and settings, every
    ``OSError``; and bad options or arguments) print ``fdbench: error: <one line>`` and exit
    with status 2, also when raised inside a dask worker; anything else is a bug and keeps its
    traceback, as does every error with ``FDBENCH_DEBUG`` set. Ctrl-C prints one line, how
    many jobs finished and that the same command resumes, and exits with status 130.
    """
    try:  # typer >= 0.20 vendors click
        from typer._click import exceptions as click
    except ImportError:
        from click import exceptions as click

    from fdbench.errors import is_user_error, one_line

    signal.signal(signal.SIGINT, _on_sigint)
    # the resource tracker (a process of its own, started with these options) would warn on
    # Ctrl-C about the semaphores of worker pools that the exit leaves to it to remove
    sys.warnoptions.append("ignore::UserWarning:multiprocessing.resource_tracker")
    try:
        code = app(standalone_mode=False)
    except click.NoArgsIsHelpError as error:
        error.show()
        sys.exit(error.exit_code)
    except click.UsageError as error:
        # a bad option or argument (unknown option, value of the wrong type, missing argument)
        message = " ".join(error.format_message().split())
        print(f"fdbench: error: {message}", file=sys.stderr)
        sys.exit(2)
    except typer.Abort:
        print("Aborted!", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        _exit_interrupted()
    except SystemExit:
        # Lightning answers Ctrl-C during training with sys.exit(1)
        if _SIGINT.is_set():
            _exit_interrupted()
        raise
    except Exception as error:
        if os.environ.get("FDBENCH_DEBUG") or not is_user_error(error):
            raise
        print(f"fdbench: error: {one_line(error)}", file=sys.stderr)
        sys.exit(2)
    if _SIGINT.is_set():  # typer turns KeyboardInterrupt into exit status 130
        _exit_interrupted()
    if isinstance(code, int) and code:
        sys.exit(code)
