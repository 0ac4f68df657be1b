"""The self-contained HTML report of a run folder, with CSV/LaTeX tables and PNG figures."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fdbench.io import write_bytes, write_text
from fdbench.report.gallery import OVERCONFIDENT_FAILURE, UNDERCONFIDENT_SUCCESS, Gallery
from fdbench.report.html import image_html, page_html, table_html
from fdbench.report.tables import (
    ReportTable,
    _run_groups,
    _stem,
    metric_tables,
    plain_table,
    ranking_table,
)

REPORT_FILE = "report.html"
TABLES_DIR = "tables"
FIGURES_DIR = "figures"
MANIFEST_FILE = "report_manifest.json"
RANKING_METRICS = ("aurc", "augrc")


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


def _read_table(run_dir: Path, stem: str) -> pd.DataFrame | None:
    for suffix in (".parquet", ".csv"):
        path = run_dir / f"{stem}{suffix}"
        if path.exists():
            return pd.read_parquet(path) if suffix == ".parquet" else pd.read_csv(path)
    return None


def read_run_inputs(run_dir: str | Path) -> RunInputs:
    """Read the report inputs present in ``run_dir`` (layout in docs/report.md).

    ``results``, ``bootstrap``, ``curves``, ``reliability``, ``rounding`` and ``sgr`` are read
    from ``<name>.parquet`` or ``<name>.csv``, the gallery from ``gallery.npz``; absent files
    give None.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise NotADirectoryError(f"run_dir {run_dir} is not a directory")
    gallery_path = run_dir / "gallery.npz"
    return RunInputs(
        results=_read_table(run_dir, "results"),
        bootstrap=_read_table(run_dir, "bootstrap"),
        curves=_read_table(run_dir, "curves"),
        reliability=_read_table(run_dir, "reliability"),
        gallery=Gallery.load(gallery_path) if gallery_path.exists() else None,
        rounding=_read_table(run_dir, "rounding"),
        sgr=_read_table(run_dir, "sgr"),
    )


class _Builder:
    """Collects sections, exports tables and figures, and remembers what it wrote."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.sections: list[tuple[str, str, str]] = []
        self.tables: list[str] = []
        self.figures: list[str] = []

    def table(self, table: ReportTable) -> str:
        table.export(self.run_dir / TABLES_DIR)
        self.tables.append(table.name)
        return table_html(table)

    def figure(self, png: bytes, name: str, alt: str) -> str:
        name = _stem(name)
        write_bytes(self.run_dir / FIGURES_DIR / f"{name}.png", png)
        self.figures.append(name)
        return image_html(png, name, alt)

    def csv(self, frame: pd.DataFrame, name: str) -> None:
        write_text(self.run_dir / TABLES_DIR / f"{_stem(name)}.csv", frame.to_csv(index=False))


def _metrics_section(b: _Builder, results: pd.DataFrame) -> str:
    return "".join(b.table(t) for t in metric_tables(results))


def _ranking_section(b: _Builder, bootstrap: pd.DataFrame, results: pd.DataFrame | None) -> str:
    from fdbench.analysis import (
        bootstrap_ranks,
        overall_ranks,
        rank_distribution,
        ranking_agreement,
        significance_matrix,
    )
    from fdbench.report.plots import rank_distribution_figure, significance_figure

    parts = [
        '<p class="note">Rank-then-aggregate over bootstrap resamples (Traub et al., NeurIPS '
        "2024): per resample the CSFs are ranked on the seed-mean metric, ranks are averaged "
        "over resamples; ties share average ranks. Significance maps: a filled cell (row a, "
        "column b) means a is better than b by a one-sided Wilcoxon signed-rank test over "
        "paired resamples, Holm-corrected per study (α = 0.05).</p>"
    ]
    for metric in RANKING_METRICS:
        if not (bootstrap["metric"] == metric).any():
            continue
        ranks = bootstrap_ranks(bootstrap, metric)
        overall = overall_ranks(ranks)
        significance = significance_matrix(bootstrap, metric)
        b.csv(significance, f"significance_{metric}")
        for label, part in _run_groups(ranks):
            summary = (
                part.groupby(["study", "csf"], sort=False)["rank"].mean().reset_index()
            ).rename(columns={"rank": "mean_rank"})
            table = ranking_table(summary, metric, label)
            studies = [s for s in dict.fromkeys(bootstrap["study"]) if s in table.frame.columns]
            mine = _select(overall, part)
            order = list(mine.sort_values("mean_rank", kind="stable")["csf"])
            frame = table.frame[studies].assign(
                **{"all studies": mine.set_index("csf")["mean_rank"]}
            )
            table = ReportTable(table.name, table.title, frame.loc[order], 2, False)
            parts.append(b.table(table))
            pooled = rank_distribution(part, by=("dataset", "method"))
            suffix = f" — {label}" if label else ""
            parts.append(
                b.figure(
                    rank_distribution_figure(
                        pooled, order, f"{metric.upper()} rank distribution{suffix}"
                    ),
                    f"rank_distribution_{metric}_{label}",
                    f"rank distribution by {metric}",
                )
            )
            studies = list(dict.fromkeys(part["study"]))
            orders = {}
            for study in studies:
                means = part[part["study"] == study].groupby("csf")["rank"].mean()
                orders[study] = list(means.sort_values(kind="stable").index)
            sig = _select(significance, part)
            parts.append(
                b.figure(
                    significance_figure(sig, orders, f"{metric.upper()} significance{suffix}"),
                    f"significance_{metric}_{label}",
                    f"significance maps by {metric}",
                )
            )
    if results is not None and {"aurc", "augrc"} <= set(results["metric"]):
        tau = ranking_agreement(results, "aurc", "augrc")
        keys = [c for c in ("dataset", "method", "study") if c in tau.columns]
        frame = tau.set_index(keys) if keys else tau
        if len(keys) > 1:
            frame.index = ["/".join(map(str, k)) for k in frame.index]
        frame.index.name = "study"
        parts.append(
            b.table(
                plain_table(frame, "kendall_tau_aurc_augrc", "Kendall τ: AURC vs AUGRC ranking", 3)
            )
        )
    return "".join(parts)


def _select(table: pd.DataFrame, like: pd.DataFrame) -> pd.DataFrame:
    """Rows of ``table`` with the dataset/method of ``like`` (which holds one of each)."""
    mask = np.ones(len(table), dtype=bool)
    for key in ("dataset", "method"):
        if key in table.columns and key in like.columns:
            mask &= (table[key] == like[key].iloc[0]).to_numpy()
    return table[mask]


def _curve_csfs(curves: pd.DataFrame, results: pd.DataFrame | None, limit: int = 6) -> list[str]:
    available = list(dict.fromkeys(curves["csf"]))
    if results is not None and (results["metric"] == "aurc").any():
        means = results[results["metric"] == "aurc"].groupby("csf")["value"].mean().sort_values()
        ranked = [c for c in means.index if c in available]
        return ranked[:limit] or available[:limit]
    return available[:limit]


def _curves_section(
    b: _Builder, curves: pd.DataFrame, csfs: Sequence[str] | None, results: pd.DataFrame | None
) -> str:
    from fdbench.report.plots import curves_figure

    chosen = list(csfs) if csfs is not None else _curve_csfs(curves, results)
    if "seed" in curves.columns:
        curves = curves[curves["seed"] == curves["seed"].min()]
    parts = [f'<p class="note">CSFs shown: {html.escape(", ".join(chosen))}.</p>']
    for study in dict.fromkeys(curves["study"]):
        parts.append(
            b.figure(curves_figure(curves, study, chosen), f"curves_{study}", f"curves {study}")
        )
    return "".join(parts)


def _calibration_section(b: _Builder, reliability: pd.DataFrame) -> str:
    from fdbench.report.plots import reliability_figure

    filled = reliability[reliability["count"] > 0]
    gap = (filled["accuracy"] - filled["confidence"]).abs() * filled["count"]
    ece = (
        filled.assign(gap=gap)
        .groupby(["csf", "study"], sort=False)
        .apply(lambda g: g["gap"].sum() / g["count"].sum(), include_groups=False)
        .unstack("study")
    )
    ece.index.name = "CSF"
    ece.columns.name = None
    table = ReportTable("ece_after_scaling", "ECE after scaling on validation", ece, 4, False)
    parts = [b.table(table)]
    for study in dict.fromkeys(reliability["study"]):
        parts.append(
            b.figure(reliability_figure(reliability, study), f"reliability_{study}", study)
        )
    return "".join(parts)


def _gallery_section(b: _Builder, gallery: Gallery) -> str:
    from fdbench.report.plots import image_png

    parts = []
    titles = {
        OVERCONFIDENT_FAILURE: "most over-confident failures",
        UNDERCONFIDENT_SUCCESS: "most under-confident successes",
    }
    study = np.asarray(gallery.study)
    csf = np.asarray(gallery.csf)
    kind = np.asarray(gallery.kind)
    for s in dict.fromkeys(study):
        for c in dict.fromkeys(csf[study == s]):
            for k, title in titles.items():
                index = np.flatnonzero((study == s) & (csf == c) & (kind == k))
                if index.size == 0:
                    continue
                items = []
                for i in index:
                    name = _stem("gallery", s, c, k, str(i))
                    img = image_html(image_png(gallery.images[i]), name, f"{title} {i}", "tile")
                    b.figures.append(name)
                    items.append(
                        f"<figure>{img}<figcaption>{gallery.confidence[i]:.3g}</figcaption></figure>"
                    )
                parts.append(
                    f"<h3>{html.escape(s)} — {html.escape(c)}: {title}</h3>"
                    f'<div class="gallery">{"".join(items)}</div>'
                )
    return "".join(parts)


def _sgr_section(b: _Builder, sgr: pd.DataFrame) -> str:
    from fdbench.report.plots import sgr_figure

    keys = [c for c in ("study", "csf") if c in sgr.columns]
    shown = [c for c in ("target_risk", "risk", "coverage", "excess", "bound") if c in sgr.columns]
    frame = sgr[shown].copy()
    frame.index = [
        " / ".join(str(row[k]) for k in keys) + f" @ r*={row['target_risk']:g}"
        for _, row in sgr.iterrows()
    ]
    frame.index.name = "study"
    return b.table(plain_table(frame, "sgr_risk_excess", "SGR thresholds on the test studies")) + (
        b.figure(sgr_figure(sgr), "sgr_risk_excess", "SGR risk excess")
    )


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
    curve_csfs: Sequence[str] | None = None,
    title: str | None = None,
    read_files: bool = True,
) -> Path:
    """Build ``run_dir/report.html``, one self-contained page, and export its tables and figures.

    Inputs given as arguments win; with ``read_files`` the missing ones are read from the run
    folder (:func:`read_run_inputs`, layout in docs/report.md). Sections: heat-mapped metric
    tables (AURC and AUGRC ×1000, accuracy, AUROC_f, ECE; CSF × study, colour per column, best
    outlined) from ``results``; bootstrap rankings, rank distributions, Wilcoxon significance
    maps and Kendall τ (AURC vs AUGRC) from ``bootstrap``; risk-coverage and generalized-risk
    curves from ``curves``; ECE and reliability diagrams after scaling from ``reliability``; the
    failure gallery; the float-precision table ``rounding``; the SGR risk-excess table and plot
    from ``sgr``. A section whose input is absent is left out. Images are base64 PNG inside the
    page (no network, no JavaScript). Every table is also written as CSV and booktabs LaTeX to
    ``run_dir/tables``, every figure as PNG to ``run_dir/figures``; ``report_manifest.json``
    lists them.

    Returns the path of the HTML file.
    """
    run_dir = Path(run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise NotADirectoryError(f"run_dir {run_dir} exists and is not a directory")
    run_dir.mkdir(parents=True, exist_ok=True)
    found = read_run_inputs(run_dir) if read_files else RunInputs()
    given = RunInputs(results, bootstrap, curves, reliability, gallery, rounding, sgr)
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
            )
        }
    )
    b = _Builder(run_dir)
    if inputs.results is not None and not inputs.results.empty:
        body = _metrics_section(b, inputs.results)
        if body:
            b.sections.append(("metrics", "Metrics per study and CSF (seed means)", body))
    if inputs.bootstrap is not None and not inputs.bootstrap.empty:
        body = _ranking_section(b, inputs.bootstrap, inputs.results)
        b.sections.append(("rankings", "Bootstrap rankings and significance", body))
    if inputs.curves is not None and not inputs.curves.empty:
        body = _curves_section(b, inputs.curves, curve_csfs, inputs.results)
        b.sections.append(("curves", "Risk-coverage and generalized-risk curves", body))
    if inputs.reliability is not None and not inputs.reliability.empty:
        b.sections.append(
            ("calibration", "CSF calibration", _calibration_section(b, inputs.reliability))
        )
    if inputs.gallery is not None and len(inputs.gallery):
        b.sections.append(("gallery", "Failure gallery", _gallery_section(b, inputs.gallery)))
    if inputs.rounding is not None and not inputs.rounding.empty:
        frame = inputs.rounding.set_index(inputs.rounding.columns[0])
        table = plain_table(frame, "float_precision", "Rounding of float16/32/64 outputs", 6)
        b.sections.append(("precision", "Float precision", b.table(table)))
    if inputs.sgr is not None and not inputs.sgr.empty:
        b.sections.append(
            ("sgr", "Selective classification with guaranteed risk", _sgr_section(b, inputs.sgr))
        )
    note = f"Run folder {run_dir.resolve().name}. AURC-type metrics are shown ×1000."
    if not b.sections:
        note += " No report inputs were found."
    page = page_html(title or f"fdbench report — {run_dir.resolve().name}", b.sections, note)
    path = write_text(run_dir / REPORT_FILE, page)
    manifest = {
        "sections": [a for a, _, _ in b.sections],
        "tables": b.tables,
        "figures": b.figures,
    }
    write_text(run_dir / MANIFEST_FILE, json.dumps(manifest, indent=1))
    return path
