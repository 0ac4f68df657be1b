"""``fdbench report``: the HTML report of a run folder."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    pass
from fdbench.cli.app import FORCE_HELP, _forced, app, check_outputs


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
            help="CSF drawn in the curve plots beside the method's own confidence and the MSR "
            "baseline (repeatable; default: the 4 best by mean AUGRC rank over the studies).",
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

    from fdbench.core.io import check_output_file, check_output_folder
    from fdbench.report import read_run_inputs, write_report
    from fdbench.report.page import MANIFEST_FILE, REPORT_FILE

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
        from fdbench.core.provenance import check_same_splits

        check_same_splits(inputs.results, f"the results of {run_dir}")
    unknown = None
    if inputs.results is not None and {"protocol", "n_samples"} <= set(inputs.results.columns):
        from fdbench.report import unknown_detection_summary
        from fdbench.report.tables import report_table

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
