"""``fdbench benchmark``: train, infer, evaluate and report a configuration."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    pass
from fdbench.cli.app import _JOBS, _check_bootstrap_fits, _forced, _progress_bar, app, check_outputs
from fdbench.cli.cluster import ClusterOption, ClusterSettings, cluster_scheduler


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
    cluster: ClusterOption = None,
    cluster_option: ClusterSettings = None,
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
    with _forced(force), cluster_scheduler(cluster, cluster_option, workers, scheduler) as address:
        _benchmark(config, quick, out, workers, address, report)


def _benchmark(
    config: Path | None,
    quick: bool,
    out: Path | None,
    workers: int | None,
    scheduler: str | None,
    report: bool,
) -> None:
    from fdbench.core.io import check_output_folder
    from fdbench.jobs.benchmark import run_benchmark
    from fdbench.jobs.plan import load_config
    from fdbench.report.console import (
        print_leaderboard,
        print_study_summary,
        print_unknown_detection,
    )

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
