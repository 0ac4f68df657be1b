"""The ``fdbench`` command: parses arguments, calls the stages, prints results."""

from __future__ import annotations

import contextlib
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

TABLE_SUFFIXES = (".csv", ".parquet", ".pq")
FORCE_HELP = "Overwrite files at the output path that fdbench did not write (never an input)."
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
    openmax: Annotated[
        bool,
        typer.Option(
            "--openmax",
            help="Also compute the OpenMax CSF (Kim et al.'s defaults) from the stored train "
            "logits.",
        ),
    ] = False,
    force: Annotated[bool, typer.Option("--force", help=FORCE_HELP)] = False,
) -> None:
    """Evaluate every CSF on every study of saved outputs and print the metric tables.

    Under ``--protocol unknown_detection`` the pooled studies of Kim et al. are added and their
    Table 5 layout is printed after the per-study tables."""
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
) -> None:
    from fdbench.io import check_output_file, verify_if_recorded
    from fdbench.jobs.evaluate import evaluate_run, evaluate_table, read_confidence_table

    if out is not None:
        check_output_file(out, "--out", TABLE_SUFFIXES)
    if bootstrap < 0:
        raise ValueError(f"--bootstrap must be >= 0; got {bootstrap}")
    _check_bootstrap_fits(bootstrap, "--bootstrap")
    check_outputs({"--out": out}, [path])
    if path.is_file():
        verify_if_recorded(path)
    if path.suffix.lower() in {".csv", ".parquet", ".pq"}:
        if precision_report:
            raise ValueError("--precision-report needs logits; a confidence table has none")
        if openmax:
            raise ValueError("--openmax needs logits; a confidence table has none")
        if binary_fpr is not None:
            raise ValueError("--binary-fpr needs logits; a confidence table has none")
        table = read_confidence_table(path, columns=confidence)
        results = evaluate_table(
            table, protocol=protocol, iid_split=iid_study, n_bootstrap=bootstrap, seed=seed
        )
    else:
        from fdbench.csf import OpenMaxParams
        from fdbench.outputs import load_outputs

        run = load_outputs(path)
        results = evaluate_run(
            run,
            protocol=protocol,
            iid_split=iid_study,
            n_bootstrap=bootstrap,
            seed=seed,
            openmax=OpenMaxParams() if openmax else None,
            binary_fpr=binary_fpr,
        )
        if precision_report:
            _print_precision_report(run)
    print_results(results)
    print_unknown_detection(results, iid_study=iid_study)
    if out is not None:
        _write_table(results, out)
        typer.echo(f"wrote {out}")


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
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

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
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

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
    columns = ("{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns) as bar:
        tasks: dict[str, int] = {}

        def progress(stage: str, done: int, total: int) -> None:
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
            settings, run_dir, workers=workers, scheduler=scheduler, report=report,
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
    inputs = read_run_inputs(run_dir)
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


def main() -> None:
    """Run the ``fdbench`` command line.

    User errors (:func:`fdbench.errors.is_user_error`: invalid inputs, files and settings, every
    ``OSError``; and bad options or arguments) print ``fdbench: error: <one line>`` and exit
    with status 2, also when raised inside a dask worker; anything else is a bug and keeps its
    traceback, as does every error with ``FDBENCH_DEBUG`` set.
    """
    try:  # typer >= 0.20 vendors click
        from typer._click import exceptions as click
    except ImportError:
        from click import exceptions as click

    from fdbench.errors import is_user_error, one_line

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
    except (typer.Abort, KeyboardInterrupt):
        print("Aborted!", file=sys.stderr)
        sys.exit(1)
    except Exception as error:
        if os.environ.get("FDBENCH_DEBUG") or not is_user_error(error):
            raise
        print(f"fdbench: error: {one_line(error)}", file=sys.stderr)
        sys.exit(2)
    if isinstance(code, int) and code:
        sys.exit(code)
