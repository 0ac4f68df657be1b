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


def embedded_configs() -> dict[str, str]:
    """The embedded configs: name (without ``.yaml``) → the first line of its leading comment."""
    from importlib.resources import files

    found = {}
    for entry in sorted(files("fdbench").joinpath("configs").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            first = entry.read_text(encoding="utf-8").splitlines()[:1]
            about = first[0].lstrip("# ").strip() if first and first[0].startswith("#") else ""
            found[entry.name.removesuffix(".yaml")] = about
    return found


def _embedded_config(config: Path) -> Path:
    """The embedded config named ``config`` (with or without ``.yaml``) when there is one,
    else ``config`` itself; a bare name that is neither a file nor an embedded config is a
    FileNotFoundError offering the closest embedded names."""
    import difflib
    from importlib.resources import files

    if config.parent != Path("."):
        return config
    name = config.name if config.suffix in {".yaml", ".yml"} else f"{config.name}.yaml"
    embedded = Path(str(files("fdbench") / "configs" / name))
    if embedded.exists():
        return embedded
    names = list(embedded_configs())
    close = difflib.get_close_matches(name.removesuffix(".yaml"), names, n=3, cutoff=0.5)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    raise FileNotFoundError(
        f"CONFIG {config} is no file and no embedded config{hint} "
        "(fdbench benchmark --list shows the embedded ones)"
    )


def _list_configs(value: bool) -> None:
    if value:
        for name, about in embedded_configs().items():
            typer.echo(f"{name:32s} {about}")
        raise typer.Exit()


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
    list_configs: Annotated[
        bool,
        typer.Option(
            "--list",
            callback=_list_configs,
            is_eager=True,
            help="List the embedded configs (a name runs one: fdbench benchmark NAME) and exit.",
        ),
    ] = False,
    full_ranking: Annotated[
        bool,
        typer.Option(
            "--full-ranking",
            help="Print every scoring method's leaderboard row and per-study AUGRC after the "
            "headline (default: the headline only: the best, the references, the ties).",
        ),
    ] = False,
    trust_config_code: Annotated[
        bool,
        typer.Option(
            "--trust-config-code",
            help="Let the config import and run your code ('module:callable' in data.builder "
            "or architecture.factory; also FDBENCH_TRUST_CONFIG_CODE=1). Never the standard "
            "library's.",
        ),
    ] = False,
) -> None:
    """Train, infer, evaluate every CSF on every study, and report (resumable)."""
    if trust_config_code:
        from fdbench.core.callables import trust_config_code as trust

        trust()
    with _forced(force), cluster_scheduler(cluster, cluster_option, workers, scheduler) as address:
        _benchmark(config, quick, out, workers, address, report, full_ranking)


def _benchmark(
    config: Path | None,
    quick: bool,
    out: Path | None,
    workers: int | None,
    scheduler: str | None,
    report: bool,
    full_ranking: bool = False,
) -> None:
    from fdbench.core.io import check_output_folder
    from fdbench.jobs.benchmark import run_benchmark
    from fdbench.jobs.plan import load_config
    from fdbench.report.console import (
        print_headline,
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
    _check_config_code(settings)
    if ":" not in settings.data.builder:  # a mistyped builder costs nothing: refused before --out
        from fdbench.data.suites import get_builder

        get_builder(settings.data.builder)
    _check_gallery_csfs(settings.analysis)
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
    print_headline(run_dir, full=full_ranking)
    if full_ranking:
        print_study_summary(results)
    print_unknown_detection(results)
    typer.echo(f"results: {run_dir / 'results.parquet'}")
    if report:
        typer.echo(f"report: {run_dir / 'report.html'}")


def _check_gallery_csfs(analysis) -> None:
    """Before ``--out`` is written: every CSF ``analysis.gallery_csfs`` names must be a CSF
    fdbench knows (built-in or plug-in), else ``ValueError`` with the closest name. Whether the
    run computes it is checked after the evaluation; ``analysis.report_studies``'s patterns,
    which need the studies, are checked once the data are built, still before ``--out`` is
    written (:func:`fdbench.jobs.benchmark.run_benchmark`)."""
    from fdbench.core.names import did_you_mean, printable
    from fdbench.csf.specs import csf_specs, find_csf

    for csf in analysis.gallery_csfs:
        if find_csf(csf) is None:
            hint = did_you_mean(csf, csf_specs())
            raise ValueError(
                f"analysis.gallery_csfs: {printable(repr(csf))} is no CSF fdbench knows{hint}"
            )


def _check_config_code(settings) -> None:
    """Before any work: code a config names (``module:callable``) runs only with the user's
    opt-in (:func:`fdbench.core.callables.check_named_code`)."""
    from fdbench.core.callables import check_named_code

    named = {"data.builder": settings.data.builder}
    if settings.architecture.factory is not None:
        named["architecture.factory"] = settings.architecture.factory
    for what, path in named.items():
        if ":" in path:
            check_named_code(path, what)


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
