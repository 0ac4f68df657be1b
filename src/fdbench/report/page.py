"""The report page: every section in order, the tables and figures exported beside it, and its
manifest."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from fdbench.core.io import RUN_MARKER, verify_if_recorded, write_text
from fdbench.core.threads import usable_cpus
from fdbench.report.builder import ReportContext, SectionFunction, _Builder, _fill
from fdbench.report.gallery import Gallery
from fdbench.report.html import details_html, page_html
from fdbench.report.inputs import RunInputs, read_run_inputs
from fdbench.report.palette import HEAT_COLORMAP
from fdbench.report.ranking_filter import with_ranking_script
from fdbench.report.sections.accepted_calibration import _accepted
from fdbench.report.sections.calibration import _calibration
from fdbench.report.sections.curves import _curves
from fdbench.report.sections.friedman import _friedman
from fdbench.report.sections.gallery import _gallery
from fdbench.report.sections.leaderboard import _leaderboard
from fdbench.report.sections.metrics import _metrics
from fdbench.report.sections.operating_points import _operating_points
from fdbench.report.sections.precision import _precision
from fdbench.report.sections.rankings import _rankings
from fdbench.report.sections.run import RUN_SECTION
from fdbench.report.sections.seeds import _seed_boxplots
from fdbench.report.sections.severity import _severity
from fdbench.report.sections.sgr import _sgr
from fdbench.report.sections.studies import _studies
from fdbench.report.sections.unknown_detection import _unknown_detection

REPORT_FILE = "report.html"
MANIFEST_FILE = "report_manifest.json"


REQUIRED_COLUMNS = {
    "results": ("csf", "study", "metric", "value"),
    "bootstrap": ("csf", "study", "metric", "resample", "value"),
    "curves": ("study", "csf", "coverage", "selective_risk", "generalized_risk"),
    "reliability": ("study", "csf", "count", "confidence", "accuracy"),
    "sgr": ("study", "target_risk", "risk", "coverage", "excess"),
    "severity_bootstrap": ("csf", "study", "metric", "resample", "value"),
    "accepted_calibration": ("study", "csf", "target_coverage", "coverage", "accuracy", "ece"),
    "operating_points": (
        "study",
        "csf",
        "procedure",
        "alpha",
        "delta",
        "calibration",
        "group",
        "threshold",
        "feasible",
        "calibration_coverage",
        "bound",
        "risk",
        "coverage",
        "held",
        "aurc",
        "worst_group",
    ),
}


def _check_inputs(inputs: RunInputs) -> None:
    from fdbench.analysis._validation import require_columns

    for name, columns in REQUIRED_COLUMNS.items():
        table = getattr(inputs, name)
        if table is not None:
            require_columns(table, columns, name)
    if inputs.rounding is not None and not isinstance(inputs.rounding, pd.DataFrame):
        raise TypeError(f"rounding must be a pandas DataFrame; got {type(inputs.rounding)}")
    if inputs.gallery is not None and not isinstance(inputs.gallery, Gallery):
        raise TypeError(f"gallery must be a Gallery; got {type(inputs.gallery).__name__}")


"""The baseline drawn in every curve figure: the softmax response (of the ensemble for an
ensemble run)."""


"""The SGR table's cell where no CSF has a threshold for the target risk r*."""


"""A section of the page: its HTML body from the context ("" leaves the section out)."""


#: The sections shown open: what was run, the headline with the leaderboard, the studies.
#: Every other section whose body shows a table or figure outside a collapsed block is itself
#: one collapsed block, so that the page with every block closed stays short.
OPEN_SECTIONS = ("run", "leaderboard", "studies")
_COLLAPSED = re.compile(r"<details>.*?</details>", re.S)


def has_open_content(body: str) -> bool:
    """Whether ``body`` shows a table or a (queued) figure outside its collapsed blocks."""
    rest = _COLLAPSED.sub("", body)
    return "<table" in rest or "<!--fdbench-figure:" in rest or "<img" in rest


def _read_times(run_dir: Path) -> dict[str, float] | None:
    path = run_dir / "times.json"
    if not path.exists():
        return None
    verify_if_recorded(path, required=(run_dir / RUN_MARKER).exists())
    times = json.loads(path.read_text(encoding="utf-8"))
    return {str(k): float(v) for k, v in times.items() if isinstance(v, int | float)}


def _default_title(run_dir: Path, results: pd.DataFrame | None) -> str:
    """ "fdbench report — <data sets>" from the results, else the run folder's name."""
    if results is not None and "dataset" in results.columns:
        names = [str(d) for d in dict.fromkeys(results["dataset"]) if str(d)]
        if names:
            return "fdbench report — " + ", ".join(names)
    return f"fdbench report — {run_dir.resolve().name}"


"""The head of every report, before :data:`SECTIONS`."""


# SECTIONS in page order: what was run, the cross-method leaderboard, the per-study blocks,
# then the detail.
SECTIONS: list[tuple[str, str, SectionFunction]] = [
    ("leaderboard", "Leaderboard of scoring methods", _leaderboard),
    ("studies", "Studies: which scoring method is best where", _studies),
    ("metrics", "Metrics per study and CSF (seed means)", _metrics),
    ("unknown-detection", "Unknown detection (Kim et al.)", _unknown_detection),
    ("seeds", "Scores over seeds (medical testbed)", _seed_boxplots),
    ("rankings", "Rankings and significance", _rankings),
    ("friedman", "Across studies: Friedman test and Nemenyi", _friedman),
    ("severity", "Severity curves", _severity),
    ("curves", "Risk-coverage and generalized-risk curves", _curves),
    ("calibration", "CSF calibration", _calibration),
    ("accepted", "Calibration of the accepted samples", _accepted),
    ("gallery", "Failure gallery", _gallery),
    ("precision", "Float precision", _precision),
    ("sgr", "Selective classification with guaranteed risk", _sgr),
    ("operating-points", "Operating points", _operating_points),
]


"""The sections after :data:`RUN_SECTION`: (anchor, heading, section function)."""


def write_report(
    run_dir: str | Path,
    results: pd.DataFrame | None = None,
    *,
    bootstrap: pd.DataFrame | None = None,
    curves: pd.DataFrame | None = None,
    reliability: pd.DataFrame | None = None,
    gallery: Gallery | None = None,
    rounding: pd.DataFrame | None = None,
    sgr: pd.DataFrame | None = None,
    severity_bootstrap: pd.DataFrame | None = None,
    accepted_calibration: pd.DataFrame | None = None,
    operating_points: pd.DataFrame | None = None,
    curve_csfs: Sequence[str] | None = None,
    title: str | None = None,
    read_files: bool = True,
    processes: int | None = None,
    unknown_detection: pd.DataFrame | None = None,
    seed_boxplots: bool = False,
) -> Path:
    """Build ``run_dir/report.html``, one self-contained page, and export its tables and figures.

    Inputs given as arguments win; with ``read_files`` the missing ones are read from the run
    folder (:func:`read_run_inputs`, layout in docs/report.md). Sections: the leaderboard and
    one block per study (its scoring methods best first, :mod:`fdbench.report.sections.studies`)
    from the leaderboard files (else from ``results``); accuracy once per classifier and
    heat-mapped metric tables (AURC and AUGRC ×1000, AUROC_f, ECE; CSF × study, colour per column
    where the shown values differ, best outlined) from ``results``;
    bootstrap rankings, rank distributions, Wilcoxon significance maps and Kendall τ (AURC vs
    AUGRC) from ``bootstrap``; risk-coverage and generalized-risk curves from ``curves``; ECE
    and reliability diagrams after scaling from ``reliability``; the failure gallery; the
    float-precision table ``rounding``; the SGR risk-excess table and plot from ``sgr``; the
    certified operating points from ``operating_points`` (:mod:`.sections.operating_points`); Kim
    et al.'s Table 5 from ``unknown_detection`` (the summary of
    :func:`fdbench.report.unknown_detection_summary`); with ``seed_boxplots`` the medical
    testbed's box plots over seeds and classification performance
    (:mod:`fdbench.report.sections.seeds`) from ``results``. Every
    dataset × method gets its own tables and figures; curves, reliability, ECE after scaling
    and SGR show its lowest seed. A section whose input is absent is left
    out; an input lacking a required column (``REQUIRED_COLUMNS``) raises ValueError naming
    it. Images are base64 PNG inside the page (no network); the one inline script sorts and
    filters the full leaderboard tables (:mod:`fdbench.report.ranking_filter`; the page works
    without it). Every table is also written as CSV and booktabs LaTeX to
    ``run_dir/tables``, every figure as PNG to ``run_dir/figures``; ``report_manifest.json``
    lists them. Figures are drawn by ``processes`` worker processes (default: the usable CPUs;
    1 draws them in this process); the page is the same either way.

    Returns the path of the HTML file.
    """
    # the training methods (built-in and plug-in) name the scoring methods of every section
    # with their display prefixes, which registering them hands to the analysis
    from fdbench.training.methods import method_names

    method_names()
    if processes is None:
        processes = usable_cpus()
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise ValueError(f"processes: expected a positive integer, got {processes!r}")
    run_dir = Path(run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise NotADirectoryError(f"run_dir {run_dir} exists and is not a directory")
    run_dir.mkdir(parents=True, exist_ok=True)
    found = read_run_inputs(run_dir) if read_files else RunInputs()
    given = RunInputs(
        results,
        bootstrap,
        curves,
        reliability,
        gallery,
        rounding,
        sgr,
        severity_bootstrap,
        accepted_calibration,
        operating_points,
    )
    inputs = RunInputs(
        **{
            name: getattr(given, name) if getattr(given, name) is not None else getattr(found, name)
            for name in (
                "results",
                "bootstrap",
                "curves",
                "reliability",
                "gallery",
                "rounding",
                "sgr",
                "severity_bootstrap",
                "accepted_calibration",
                "operating_points",
            )
        }
    )
    _check_inputs(inputs)
    context = ReportContext(
        inputs, curve_csfs, unknown_detection, seed_boxplots, _read_times(run_dir)
    )
    b = _Builder(run_dir)
    for anchor, heading, section in [RUN_SECTION, *SECTIONS]:
        b.section, b.subs = anchor, []
        body = section(b, context)
        if anchor not in OPEN_SECTIONS and has_open_content(body):
            body = details_html(f"{anchor}-all", f"Show: {heading}", body)
        if body:
            b.sections.append((anchor, heading, body, b.subs))
    images = b.render(processes)
    b.sections = [(a, h, _fill(body, images), subs) for a, h, body, subs in b.sections]
    note = (
        f"Run folder {run_dir.resolve().name}. AURC-type metrics are shown ×1000 everywhere. "
        "Each study (Studies) and each dataset × method (the sections after it) is a collapsed "
        "block: click its name or its entry in the contents to open it."
    )
    if len(b.sections) <= 1:
        note += " No report inputs were found."
    page = page_html(title or _default_title(run_dir, inputs.results), b.sections, note)
    page = with_ranking_script(page)
    path = write_text(run_dir / REPORT_FILE, page)
    manifest = {
        "sections": [a for a, _, _, _ in b.sections],
        "subsections": [a for _, _, _, subs in b.sections for a, _ in subs],
        "tables": b.tables,
        "figures": b.figures,
        "figure_colours": b.colours,
        "figure_min_text_px": b.text_px,
        "colormaps": {"heat": HEAT_COLORMAP, "tables": f"{HEAT_COLORMAP} (lightened)"},
    }
    write_text(run_dir / MANIFEST_FILE, json.dumps(manifest, indent=1))
    return path
