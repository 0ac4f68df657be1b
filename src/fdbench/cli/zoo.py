"""``fdbench zoo``: the model-zoo study."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    pass
from fdbench.cli.app import _JOBS, _progress_bar, app
from fdbench.cli.cluster import ClusterOption, ClusterSettings, cluster_scheduler


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
    cluster: ClusterOption = None,
    cluster_option: ClusterSettings = None,
    report: Annotated[bool, typer.Option(help="Write the analyses and zoo_report.html.")] = True,
) -> None:
    """Evaluate every member of a model zoo and report across the zoo (resumable per member)."""
    from fdbench.jobs.zoo import run_zoo
    from fdbench.zoo import load_zoo_config
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
    trained: dict[str, float] = {}
    with _progress_bar() as bar:
        tasks: dict[str, int] = {}

        def progress(stage: str, done: int, total: int) -> None:
            _JOBS[stage] = (done, total)
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done)

        if config is None:
            from fdbench.core.io import claim_run_folder
            from fdbench.zoo.embedded import build_embedded_zoo

            claim_run_folder(run_dir)  # the members are trained into run_dir/zoo
            train_workers = settings.workers if workers is None else workers
            start = time.perf_counter()
            build_embedded_zoo(
                settings.zoo, quick=quick, workers=train_workers or None, progress=progress
            )
            trained["training_s"] = time.perf_counter() - start
        with cluster_scheduler(cluster, cluster_option, workers, scheduler) as address:
            results = run_zoo(
                settings,
                run_dir,
                workers=workers,
                scheduler=address,
                report=report,
                progress=progress,
                earlier_times=trained,
            )
    typer.echo(f"{results['member'].nunique()} members; results: {run_dir / 'results.parquet'}")
    if report:
        typer.echo(f"report: {run_dir / 'zoo_report.html'}")
