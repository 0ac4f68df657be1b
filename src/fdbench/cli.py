"""The ``fdbench`` command: parses arguments, calls the stages, prints results."""

from __future__ import annotations

import os
import sys
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

USER_ERRORS = (ValueError, TypeError, FileNotFoundError, NotADirectoryError, PermissionError)
PER_MILLE = {"aurc", "augrc", "eaurc", "eaugrc"}
DISPLAY = (
    ("aurc", "AURC‰", min),
    ("augrc", "AUGRC‰", min),
    ("eaurc", "e-AURC‰", min),
    ("auroc_f", "AUROC_f", max),
    ("fpr@95tpr", "FPR@95", min),
    ("ece", "ECE", min),
)


@app.callback()
def _root() -> None:
    """Benchmark failure detection of classifiers."""


def _write_table(table: pd.DataFrame, out: Path) -> None:
    from fdbench.io import write_table

    write_table(table, out)


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
            help="Saved outputs: .npz (logits, labels[, study]), .csv/.parquet table (label, "
            "prediction, confidence columns[, study]), an fdbench outputs store or an "
            "FD-Shifts run directory."
        ),
    ],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the tidy results (.csv/.parquet).")
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
) -> None:
    """Evaluate every CSF on every study of saved outputs and print the metric tables."""
    from fdbench.evaluation import evaluate_run, evaluate_table, read_confidence_table

    if path.suffix.lower() in {".csv", ".parquet", ".pq"}:
        if precision_report:
            raise ValueError("--precision-report needs logits; a confidence table has none")
        if binary_fpr is not None:
            raise ValueError("--binary-fpr needs logits; a confidence table has none")
        table = read_confidence_table(path, columns=confidence)
        results = evaluate_table(
            table, protocol=protocol, iid_split=iid_study, n_bootstrap=bootstrap, seed=seed
        )
    else:
        from fdbench.outputs import load_outputs

        run = load_outputs(path)
        results = evaluate_run(
            run,
            protocol=protocol,
            iid_split=iid_study,
            n_bootstrap=bootstrap,
            seed=seed,
            binary_fpr=binary_fpr,
        )
        if precision_report:
            _print_precision_report(run)
    print_results(results)
    if out is not None:
        _write_table(results, out)
        typer.echo(f"wrote {out}")


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


@app.command()
def benchmark(
    config: Annotated[
        Path | None,
        typer.Argument(help="Benchmark YAML config (default: the embedded Fashion-MNIST one)."),
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
) -> None:
    """Train, infer, evaluate every CSF on every study, and report (resumable)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from fdbench.benchmark import run_benchmark
    from fdbench.config import load_config

    if config is not None and quick:
        raise ValueError("give either a CONFIG file or --quick, not both")
    settings = load_config(config if config is not None else _default_config(quick))
    run_dir = out if out is not None else Path("runs") / settings.name
    columns = ("{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns) as bar:
        tasks: dict[str, int] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done)

        results = run_benchmark(
            settings,
            run_dir,
            workers=workers,
            scheduler=scheduler,
            report=report,
            progress=progress,
        )
    summary = results[(results["protocol"] == "failure_detection")]
    print_results(_seed_means(summary[summary["study"] == "iid"]))
    typer.echo(f"results: {run_dir / 'results.parquet'}")
    if report:
        typer.echo(f"report: {run_dir / 'report.html'}")


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
) -> None:
    """Build RUN_DIR/report.html (self-contained) and export every table as CSV and LaTeX."""
    from dataclasses import fields

    from fdbench.report import read_run_inputs, write_report

    if not run_dir.is_dir():
        raise NotADirectoryError(f"run folder {run_dir} does not exist or is not a directory")
    inputs = read_run_inputs(run_dir)
    if inputs.results is not None and {"protocol", "n_samples"} <= set(inputs.results.columns):
        from fdbench.benchmark import report_table

        inputs.results = report_table(inputs.results)
    given = {f.name: getattr(inputs, f.name) for f in fields(inputs)}
    path = write_report(run_dir, **given, curve_csfs=curve_csf, title=title, read_files=False)
    typer.echo(f"wrote {path}")
    if screenshot is not None:
        from fdbench.report.browser import screenshot_page

        typer.echo(f"wrote {screenshot_page(path, screenshot, height=screenshot_height)}")


def _seed_means(table: pd.DataFrame) -> pd.DataFrame:
    keys = ["dataset", "method", "csf", "study", "metric"]
    means = table.groupby(keys, sort=False, as_index=False).agg(
        value=("value", "mean"), n_samples=("n_samples", "first")
    )
    means["study"] = means["dataset"] + " " + means["study"]
    means["csf"] = means["method"] + " · " + means["csf"]
    return means


data_app = typer.Typer(
    help="Datasets: fetch with checksums, inspect corruptions.", no_args_is_help=True
)
app.add_typer(data_app, name="data")


@data_app.command("fetch")
def data_fetch(
    name: Annotated[
        str,
        typer.Argument(
            help="fashion_mnist, mnist, animal_mnist, digits, textures, noise, or 'all'."
        ),
    ],
    data_dir: Annotated[
        Path | None,
        typer.Option(help="Cache folder (default: $FDBENCH_DATA or ~/.cache/fdbench)."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Fetch again even if cached.")] = False,
) -> None:
    """Download (or build) datasets into the cache, verifying SHA-256 checksums."""
    from fdbench.data import DATASETS, fetch, fetch_all

    if name != "all" and name not in DATASETS:
        raise ValueError(f"NAME must be 'all' or one of {', '.join(DATASETS)}; got {name!r}")
    if name == "all":
        folders = fetch_all(data_dir=data_dir, force=force)
    else:
        folders = {name: fetch(name, data_dir=data_dir, force=force)}
    for dataset, folder in folders.items():
        typer.echo(f"{dataset}: {folder}")


@data_app.command("show-corruptions")
def data_show_corruptions(
    out: Annotated[Path, typer.Option("--out", help="PNG file to write.")],
    seed: Annotated[int, typer.Option(help="Seed of the corruptions.")] = 0,
    data_dir: Annotated[Path | None, typer.Option(help="Cache folder.")] = None,
) -> None:
    """Draw the 15 corruptions × 5 severities on Fashion-MNIST test images into a PNG grid."""
    from fdbench.data.corruptions import show_corruptions

    typer.echo(f"wrote {show_corruptions(None, out, seed=seed, data_dir=data_dir)}")


def _is_user_error(error: BaseException) -> bool:
    if isinstance(error, USER_ERRORS):
        return True
    from fdbench.data import FetchError
    from fdbench.data._cache import CorruptedCacheError

    return isinstance(error, FetchError | CorruptedCacheError)


def main() -> None:
    """Run the ``fdbench`` command line; user errors print one line and exit with status 2."""
    try:
        app()
    except Exception as error:
        if os.environ.get("FDBENCH_DEBUG") or not _is_user_error(error):
            raise
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"fdbench: error: {message}", file=sys.stderr)
        sys.exit(2)
