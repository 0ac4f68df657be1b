"""What a report can show, read from a run folder: results, bootstrap resamples, curves,
reliability, gallery, SGR, ..."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from fdbench.core.io import RUN_MARKER, read_parquet, verify_if_recorded
from fdbench.core.validation import check_results_table
from fdbench.metrics.specs import metric_bounds
from fdbench.report.gallery import Gallery


@dataclass
class RunInputs:
    """Everything a report can show; each part is optional (None: its section is omitted).

    See docs/report.md for the files of a run folder each part is read from.
    """

    results: pd.DataFrame | None = None
    bootstrap: pd.DataFrame | None = None
    curves: pd.DataFrame | None = None
    reliability: pd.DataFrame | None = None
    gallery: Gallery | None = None
    rounding: pd.DataFrame | None = None
    sgr: pd.DataFrame | None = None
    severity_bootstrap: pd.DataFrame | None = None
    accepted_calibration: pd.DataFrame | None = None
    operating_points: pd.DataFrame | None = None


def _read_table(run_dir: Path, stem: str, fdbench_folder: bool) -> pd.DataFrame | None:
    for suffix in (".parquet", ".csv"):
        path = run_dir / f"{stem}{suffix}"
        if path.exists():
            verify_if_recorded(path, required=fdbench_folder)
            return read_parquet(path) if suffix == ".parquet" else pd.read_csv(path)
    return None


def _results_name(run_dir: Path) -> str:
    for suffix in (".parquet", ".csv"):
        if (run_dir / f"results{suffix}").exists():
            return str(run_dir / f"results{suffix}")
    return str(run_dir)


def _check_file_names(results: pd.DataFrame, source: str) -> None:
    """The report exports tables and figures named after studies, datasets, methods, CSFs and
    metrics: two names that become one file name (``s/1`` and ``s.1``) are refused, never
    written over each other."""
    from fdbench.core.names import check_distinct_files

    from .tables import _stem

    for column in ("study", "dataset", "method", "csf", "metric"):
        if column in results.columns:
            check_distinct_files(
                results[column].unique(), lambda v: _stem(str(v)), f"{source}: {column}s"
            )


def read_run_inputs(run_dir: str | Path) -> RunInputs:
    """Read the report inputs present in ``run_dir`` (layout in docs/report.md).

    ``results``, ``bootstrap``, ``curves``, ``reliability``, ``rounding`` and ``sgr`` are read
    from ``<name>.parquet`` or ``<name>.csv``, the gallery from ``gallery.npz``; absent files
    give None.

    Each file is verified against the SHA-256 recorded beside it when fdbench wrote it
    (:func:`fdbench.core.io.verify_file`): a damaged file is one ``IntegrityError`` naming it. In a
    run folder of fdbench (its marker :data:`fdbench.core.io.RUN_MARKER`) every file must have its
    checksum; elsewhere a file without one is taken as the user's own input.

    The results table crosses the input boundary
    (:func:`fdbench.core.validation.check_results_table`): a repeated result, a metric value
    outside its interval (:attr:`fdbench.metrics.MetricSpec.bounds`) or a cell of the wrong
    type is one error naming the file and column.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise NotADirectoryError(f"run_dir {run_dir} is not a directory")
    ours = (run_dir / RUN_MARKER).exists()
    gallery_path = run_dir / "gallery.npz"
    gallery = None
    if gallery_path.exists():
        gallery = Gallery.load(verify_if_recorded(gallery_path, required=ours))
    results = _read_table(run_dir, "results", ours)
    if results is not None:
        results = check_results_table(results, _results_name(run_dir), metric_bounds())
        _check_file_names(results, _results_name(run_dir))
    return RunInputs(
        results=results,
        bootstrap=_read_table(run_dir, "bootstrap", ours),
        curves=_read_table(run_dir, "curves", ours),
        reliability=_read_table(run_dir, "reliability", ours),
        gallery=gallery,
        rounding=_read_table(run_dir, "rounding", ours),
        sgr=_read_table(run_dir, "sgr", ours),
        severity_bootstrap=_read_table(run_dir, "severity_bootstrap", ours),
        accepted_calibration=_read_table(run_dir, "accepted_calibration", ours),
        operating_points=_read_table(run_dir, "operating_points", ours),
    )
