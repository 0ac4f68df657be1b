"""The self-contained HTML report of a run folder, with CSV/LaTeX tables and PNG figures."""

from __future__ import annotations

import html
import json
import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fdbench.io import RUN_MARKER, verify_if_recorded, write_bytes, write_text
from fdbench.report.gallery import OVERCONFIDENT_FAILURE, UNDERCONFIDENT_SUCCESS, Gallery
from fdbench.report.html import details_html, image_html, page_html, table_html
from fdbench.report.leaderboard import leaderboard_section
from fdbench.report.palette import HEAT_COLORMAP, csf_colours
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
    severity_bootstrap: pd.DataFrame | None = None
    accepted_calibration: pd.DataFrame | None = None


def _read_table(run_dir: Path, stem: str, fdbench_folder: bool) -> pd.DataFrame | None:
    for suffix in (".parquet", ".csv"):
        path = run_dir / f"{stem}{suffix}"
        if path.exists():
            verify_if_recorded(path, required=fdbench_folder)
            return pd.read_parquet(path) if suffix == ".parquet" else pd.read_csv(path)
    return None


def read_run_inputs(run_dir: str | Path) -> RunInputs:
    """Read the report inputs present in ``run_dir`` (layout in docs/report.md).

    ``results``, ``bootstrap``, ``curves``, ``reliability``, ``rounding`` and ``sgr`` are read
    from ``<name>.parquet`` or ``<name>.csv``, the gallery from ``gallery.npz``; absent files
    give None.

    Each file is verified against the SHA-256 recorded beside it when fdbench wrote it
    (:func:`fdbench.io.verify_file`): a damaged file is one ``IntegrityError`` naming it. In a
    run folder of fdbench (its marker :data:`fdbench.io.RUN_MARKER`) every file must have its
    checksum; elsewhere a file without one is taken as the user's own input.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise NotADirectoryError(f"run_dir {run_dir} is not a directory")
    ours = (run_dir / RUN_MARKER).exists()
    gallery_path = run_dir / "gallery.npz"
    gallery = None
    if gallery_path.exists():
        gallery = Gallery.load(verify_if_recorded(gallery_path, required=ours))
    return RunInputs(
        results=_read_table(run_dir, "results", ours),
        bootstrap=_read_table(run_dir, "bootstrap", ours),
        curves=_read_table(run_dir, "curves", ours),
        reliability=_read_table(run_dir, "reliability", ours),
        gallery=gallery,
        rounding=_read_table(run_dir, "rounding", ours),
        sgr=_read_table(run_dir, "sgr", ours),
        severity_bootstrap=_read_table(run_dir, "severity_bootstrap", ours),
        accepted_calibration=_read_table(run_dir, "accepted_calibration", ours),
    )


def _placeholder(name: str) -> str:
    return f"<!--fdbench-figure:{name}-->"


def _draw(job: tuple[Callable[..., bytes], tuple[Any, ...]]) -> bytes:
    draw, args = job
    return draw(*args)


def _fill(body: str, images: dict[str, str]) -> str:
    for placeholder, image in images.items():
        body = body.replace(placeholder, image)
    return body


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def group_anchor(section: str, label: str) -> str:
    """The anchor of the collapsed block ``label`` of the section ``section``."""
    return _stem(section, label)


class _Builder:
    """Collects sections, exports tables and figures, and remembers what it wrote.

    Figures are drawn at the end (:meth:`render`), in parallel processes: a section gets a
    placeholder for each figure, replaced by the embedded image once it is drawn.
    """

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.sections: list[tuple[str, str, str, list[tuple[str, str]]]] = []
        self.tables: list[str] = []
        self.figures: list[str] = []
        self.colours: dict[str, dict[str, str]] = {}
        self.section = ""
        self.subs: list[tuple[str, str]] = []
        self._pending: list[tuple[Callable[..., bytes], tuple[Any, ...], str, str]] = []

    def group(self, label: str, body: str, summary: str | None = None) -> str:
        """``body`` (the part of the current section about one dataset × method, study, …
        ``label``) as a collapsed ``<details>`` block, listed in the table of contents under
        ``label``; its summary line is ``summary`` (default ``label``)."""
        if not label:
            return body
        anchor = group_anchor(self.section, label)
        self.subs.append((anchor, label))
        return details_html(anchor, summary or label, body)

    def table(self, table: ReportTable) -> str:
        table.export(self.run_dir / TABLES_DIR)
        self.tables.append(table.name)
        return table_html(table)

    def figure(
        self,
        draw: Callable[..., bytes],
        args: tuple[Any, ...],
        name: str,
        alt: str,
        colours: dict[str, str] | None = None,
    ) -> str:
        """Queue the figure ``draw(*args)`` (PNG bytes); return its placeholder. ``colours``:
        the colour of each CSF it draws, kept in the manifest and on the ``<img>``."""
        name = _stem(name)
        self.figures.append(name)
        if colours:
            self.colours[name] = dict(colours)
        self._pending.append((draw, args, name, alt))
        return _placeholder(name)

    def render(self, processes: int) -> dict[str, str]:
        """Draw the queued figures (``processes`` > 1: in that many worker processes), write
        them as PNG files and return each placeholder's ``<img>``."""
        jobs = self._pending
        if processes > 1 and len(jobs) > 1:
            context = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(min(processes, len(jobs)), mp_context=context) as pool:
                pngs = list(pool.map(_draw, [(draw, args) for draw, args, _, _ in jobs]))
        else:
            pngs = [draw(*args) for draw, args, _, _ in jobs]
        images = {}
        for (_, _, name, alt), png in zip(jobs, pngs, strict=True):
            write_bytes(self.run_dir / FIGURES_DIR / f"{name}.png", png)
            images[_placeholder(name)] = image_html(png, name, alt, colours=self.colours.get(name))
        self._pending = []
        return images

    def csv(self, frame: pd.DataFrame, name: str) -> None:
        write_text(self.run_dir / TABLES_DIR / f"{_stem(name)}.csv", frame.to_csv(index=False))


REQUIRED_COLUMNS = {
    "results": ("csf", "study", "metric", "value"),
    "bootstrap": ("csf", "study", "metric", "resample", "value"),
    "curves": ("study", "csf", "coverage", "selective_risk", "generalized_risk"),
    "reliability": ("study", "csf", "count", "confidence", "accuracy"),
    "sgr": ("study", "target_risk", "risk", "coverage", "excess"),
    "severity_bootstrap": ("csf", "study", "metric", "resample", "value"),
    "accepted_calibration": ("study", "csf", "target_coverage", "coverage", "accuracy", "ece"),
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


def _lowest_seed(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of the lowest seed of each dataset × method (all rows without a seed column)."""
    if "seed" not in table.columns:
        return table
    keys = [c for c in ("dataset", "method") if c in table.columns]
    lowest = (
        table.groupby(keys, sort=False)["seed"].transform("min") if keys else table["seed"].min()
    )
    return table[table["seed"] == lowest]


def _seed_note(table: pd.DataFrame) -> str:
    return f" (seed {table['seed'].iloc[0]})" if "seed" in table.columns else ""


def _suffix(label: str) -> str:
    return f" — {label}" if label else ""


def _metrics_section(b: _Builder, results: pd.DataFrame) -> str:
    groups = [(label, metric_tables(part)) for label, part in _run_groups(results)]
    groups = [(label, tables) for label, tables in groups if tables]
    if not groups:
        return ""
    note = (
        '<p class="note">Means over seeds; one column per study. Accuracy belongs to the '
        "classifier, not to the CSF, so it is shown once per classifier, without colours: "
        "MCD-* and *-MCD CSFs are judged with the MC-dropout classifier (arg-max of the mean MC "
        "softmax), every other CSF with the network. On a new-class study (failure-detection "
        "protocol: misclassified inliers removed, every new-class sample a failure) the value "
        "is the share of retained inliers: correctly classified inliers / (those + new-class "
        "samples). In the CSF tables colours are normalised per column on the colour-blind-safe "
        "cividis scale, from the worst value (dark blue) to the best (light yellow), and the "
        "best value of a column is bold and outlined; a "
        "column whose values all print alike has neither. AURC and AUGRC are shown ×1000, lower "
        "is better; AUROC_f higher is better; ECE of the raw confidence, lower is better (– "
        "where a CSF's confidence is not a probability; see CSF calibration for ECE after Platt "
        "scaling).</p>"
    )
    return note + "".join(
        b.group(label, "".join(b.table(t) for t in tables)) for label, tables in groups
    )


def _unknown_detection_section(b: _Builder, summary: pd.DataFrame) -> str:
    from fdbench.report.unknown_detection import unknown_detection_display

    note = (
        '<p class="note">Kim et al.\'s Table 5 layout: mean ± standard deviation over seeds. '
        "AURC and FPR@95TPR of unknown detection on the pooled set (in-distribution test ∪ "
        "every near-OoD ∪ every far-OoD set, every OoD sample an error); misclassification "
        "detection (MD) on the in-distribution test set only; OoD detection with the "
        "in-distribution/OoD label against the pooled near-OoD and far-OoD sets; the AURC "
        "improvement is (AURC_base − AURC_m) / AURC_base over the baseline's MSR. AURC ×1000, "
        "the others in per cent.</p>"
    )
    b.csv(summary, "unknown_detection_summary")
    frame = unknown_detection_display(summary)
    return note + b.table(ReportTable("unknown_detection", "Unknown detection", frame))


def _ranking_section(b: _Builder, bootstrap: pd.DataFrame, results: pd.DataFrame | None) -> str:
    from fdbench.analysis import (
        bootstrap_ranks,
        overall_bootstrap_ranks,
        rank_then_aggregate,
        significance_matrix,
    )
    from fdbench.analysis.ranking import GROUP_COLUMNS
    from fdbench.report.plots import rank_distribution_figure, significance_figure

    parts = [
        '<p class="note">Rank-then-aggregate over bootstrap resamples of the test sets (Traub '
        "et al., NeurIPS 2024): on every resample the CSFs are ranked by the seed-mean metric "
        "(rank 1 = best; ties share the average rank) and the ranks are averaged over "
        "resamples. <i>all studies</i>: on every resample the mean rank over the studies is "
        "ranked again, then averaged; the rank-distribution plot shows how often each CSF takes "
        "each of these overall ranks. Significance maps: cell (a, b) is dark where CSF a is "
        "better than CSF b by a one-sided Wilcoxon signed-rank test over the paired resamples, "
        "Holm-corrected over all ordered pairs of a study (α = 0.05).</p>"
    ]
    analyses = {}
    for metric in RANKING_METRICS:
        if not (bootstrap["metric"] == metric).any():
            continue
        ranks = bootstrap_ranks(bootstrap, metric)
        per_study = rank_then_aggregate(bootstrap, metric)
        significance = significance_matrix(bootstrap, metric)
        b.csv(per_study, f"rank_then_aggregate_{metric}")
        b.csv(significance, f"significance_{metric}")
        analyses[metric] = ranks, overall_bootstrap_ranks(ranks), per_study, significance
    labels = dict.fromkeys(
        label for ranks, *_ in analyses.values() for label, _ in _run_groups(ranks)
    )
    all_studies = list(bootstrap["study"].unique())
    for label in labels:
        group = []
        for metric, (ranks, overall, per_study, significance) in analyses.items():
            part = dict(_run_groups(ranks)).get(label)
            if part is None:
                continue
            summary = _select(per_study, part)
            table = ranking_table(summary, metric, label)
            studies = [s for s in all_studies if s in table.frame.columns]
            mine = _select(overall, part)
            mean_rank = mine.groupby("csf", sort=False)["rank"].mean().sort_values(kind="stable")
            order = list(mean_rank.index)
            frame = table.frame[studies].assign(**{"all studies": mean_rank})
            table = ReportTable(table.name, table.title, frame.loc[order], 2, False)
            group.append(b.table(table))
            group.append(
                b.figure(
                    rank_distribution_figure,
                    (
                        mine,
                        order,
                        f"{metric.upper()}: overall rank across {len(studies)} studies"
                        + _suffix(label),
                    ),
                    f"rank_distribution_{metric}_{label}",
                    f"rank distribution by {metric}",
                )
            )
            keys = [c for c in GROUP_COLUMNS if c != "study"]
            group.append(
                b.figure(
                    significance_figure,
                    (
                        _select(significance, part, keys),
                        order,
                        studies,
                        f"{metric.upper()} significance maps" + _suffix(label),
                    ),
                    f"significance_{metric}_{label}",
                    f"significance maps by {metric}",
                )
            )
        parts.append(b.group(label, "".join(group)))
    if results is not None and {"aurc", "augrc"} <= set(results["metric"]):
        parts.append(_kendall_table(b, results))
    return "".join(parts)


def _kendall_table(b: _Builder, results: pd.DataFrame) -> str:
    from fdbench.analysis import ranking_agreement

    tau = ranking_agreement(results, "aurc", "augrc")
    b.csv(tau, "kendall_tau_aurc_augrc_long")
    keys = [c for c in ("dataset", "method") if c in tau.columns]
    runs = tau[keys].astype(str).agg("/".join, axis=1) if keys else pd.Series("τ", tau.index)
    if "study" in tau.columns:
        frame = tau.assign(run=runs).pivot_table(
            index="run", columns="study", values="tau", sort=False
        )
        frame.columns.name = None
    else:
        frame = tau.assign(run=runs).set_index("run")[["tau", "p_value", "n_csfs"]]
    frame.index.name = "run"
    table = plain_table(
        frame,
        "kendall_tau_aurc_augrc",
        "Kendall τ_b between the CSF rankings by AURC and by AUGRC (seed means; 1 = same order)",
        3,
    )
    return b.table(table)


def _select(table: pd.DataFrame, like: pd.DataFrame, keys=("dataset", "method")) -> pd.DataFrame:
    """Rows of ``table`` with the values of ``keys`` that ``like`` holds (one of each)."""
    mask = np.ones(len(table), dtype=bool)
    for key in keys:
        if key in table.columns and key in like.columns:
            mask &= (table[key] == like[key].iloc[0]).to_numpy()
    return table[mask]


BASELINE_CSFS = ("MSR", "ENS-MSR")
"""The baseline drawn in every curve figure: the softmax response (of the ensemble for an
ensemble run)."""


def _curve_csfs(curves: pd.DataFrame, results: pd.DataFrame | None, limit: int = 4) -> list[str]:
    """The ``limit`` CSFs of ``curves`` with the lowest mean AURC in ``results`` (else the
    first ones)."""
    available = list(curves["csf"].unique())
    if results is not None and (results["metric"] == "aurc").any():
        aurc = results[results["metric"] == "aurc"]
        means = aurc.groupby("csf")["value"].mean().sort_values(kind="stable")
        ranked = [c for c in means.index if c in available]
        return ranked[:limit] or available[:limit]
    return available[:limit]


def _curve_groups(
    curves: pd.DataFrame, csfs: Sequence[str] | None, results: pd.DataFrame | None
) -> list[tuple[str, pd.DataFrame, list[str], str | None]]:
    """The curve figures of the curves section: per dataset × method (its lowest seed) the
    label, the curves, the CSFs drawn (the method's own confidence, the MSR baseline and
    ``csfs`` if given, else :func:`_curve_csfs`) and the baseline; groups with none of the
    CSFs asked for are left out."""
    from fdbench.csf.registry import head_csf_names

    groups = []
    for label, part in _run_groups(_lowest_seed(curves)):
        available = list(part["csf"].unique())
        if csfs is not None:
            asked = [c for c in csfs if c in available]
        else:
            mine = None if results is None else _select(results, part)
            asked = _curve_csfs(part, mine)
        if not asked:
            continue
        baseline = next((c for c in BASELINE_CSFS if c in available), None)
        own = [c for c in head_csf_names() if c in available]
        chosen = list(dict.fromkeys([*own, *([baseline] if baseline else []), *asked]))
        groups.append((label, part, chosen, baseline))
    return groups


def _curves_section(
    b: _Builder, curves: pd.DataFrame, csfs: Sequence[str] | None, results: pd.DataFrame | None
) -> str:
    from fdbench.report.plots import curves_figure

    how = (
        "the CSFs asked for"
        if csfs is not None
        else "the CSFs with the lowest mean AURC of each dataset × method"
    )
    parts = [
        f'<p class="note">One training run (the lowest seed) per dataset × method: the '
        "method's own confidence (a learned head such as DG-Res, DeVries or ConfidNet, where "
        f"it has one), the MSR baseline (ENS-MSR for an ensemble) and {how}; every CSF has one "
        "fixed colour on the whole page. Black: the optimal CSF (every failure ranked below "
        "every success); grey, dashed: a random CSF (risk = the error rate e, generalized risk "
        "= coverage × e). Selective risk: error rate among the accepted samples; generalized "
        "risk: share of all samples that are accepted and wrong (the curve AUGRC "
        "integrates).</p>"
    ]
    for label, part, chosen, baseline in _curve_groups(curves, csfs, results):
        title = "Risk-coverage curves" + _suffix(label) + _seed_note(part)
        figure = b.figure(
            curves_figure,
            (part, chosen, title, baseline),
            _stem("curves", label),
            title,
            csf_colours(chosen),
        )
        parts.append(b.group(label, figure))
    return "".join(parts)


COLLAPSED_MARK = "*"


def _run_ece(reliability: pd.DataFrame) -> pd.DataFrame:
    """ECE per run, CSF and study from reliability bins: Σ count·|accuracy − confidence| /
    Σ count, with the run's ``treatment`` and ``platt_collapsed`` where the bins carry them."""
    keys = [c for c in ("dataset", "method", "seed") if c in reliability.columns]
    keys += ["csf", "study"]
    filled = reliability[reliability["count"] > 0]
    gap = (filled["accuracy"] - filled["confidence"]).abs() * filled["count"]
    sums = filled.assign(gap=gap).groupby(keys, sort=False)[["gap", "count"]].sum()
    ece = (sums["gap"] / sums["count"]).rename("value").reset_index()
    flags = [c for c in ("treatment", "platt_collapsed") if c in reliability.columns]
    if flags:
        first = reliability.groupby(keys, sort=False)[flags].first().reset_index()
        ece = ece.merge(first, on=keys, how="left")
    if "platt_collapsed" not in ece.columns:
        ece["platt_collapsed"] = False
    return ece


def _ece_table(reliability: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """CSF × study mean ECE over the runs (seeds) of ``reliability``, and the CSF × study
    table of where the Platt fit of any run collapsed (``fdbench.analysis.mean_calibration``)."""
    from fdbench.analysis import mean_calibration

    mean = mean_calibration(_run_ece(reliability))
    shape = {
        "index": list(dict.fromkeys(reliability["csf"])),
        "columns": list(dict.fromkeys(reliability["study"])),
    }
    tables = []
    for column in ("value", "platt_collapsed"):
        table = mean.pivot(index="csf", columns="study", values=column).reindex(**shape)
        table.index.name = "CSF"
        table.columns.name = None
        tables.append(table)
    return tables[0], tables[1].fillna(False).astype(bool)


def _marked(ece: pd.DataFrame, collapsed: pd.DataFrame, digits: int) -> pd.DataFrame:
    """``ece`` with collapsed cells as text (value + :data:`COLLAPSED_MARK`): text cells get no
    heat colour and are never the best of their column."""
    from fdbench.report.latex import format_number

    if not collapsed.to_numpy().any():
        return ece
    shown = ece.astype(object)
    for i, j in zip(*np.nonzero(collapsed.to_numpy()), strict=True):
        shown.iat[i, j] = format_number(ece.iat[i, j], digits) + COLLAPSED_MARK
    return shown


def _calibration_section(b: _Builder, reliability: pd.DataFrame) -> str:
    from fdbench.report.plots import reliability_figure

    parts = [
        '<p class="note">FD-Shifts\' CSF calibration (Table 10): CSFs whose range is not a '
        "probability are Platt-scaled on the validation split of each run, TEMP-MLS (the "
        "temperature-scaled softmax) and probabilities (MSR, MCD-MSR, the learned heads) are "
        "used as they are (docs/csf.md). ECE with equal-width bins, averaged over the runs "
        f"(seeds) of each dataset × method. {COLLAPSED_MARK}: the Platt fit collapsed in at least "
        "one run (it maps nearly every sample to one probability, or all of a study's samples "
        "fall into one bin), so the ECE says little; such a cell is never marked best. The "
        "reliability diagrams show one run (the lowest seed).</p>"
    ]
    for label, part in _run_groups(reliability):
        ece, collapsed = _ece_table(part)
        b.csv(_run_ece(part), _stem("ece_after_scaling_runs", label))
        table = ReportTable(
            _stem("ece_after_scaling", label),
            "ECE after calibration on validation, mean over runs" + _suffix(label),
            _marked(ece, collapsed, 4),
            4,
            False,
        )
        lowest = _lowest_seed(part)
        title = "Reliability after calibration on validation" + _suffix(label)
        figure = b.figure(
            reliability_figure,
            (lowest, title + _seed_note(lowest)),
            _stem("reliability", label),
            title,
        )
        parts.append(b.group(label, b.table(table) + figure))
    return "".join(parts)


def _caption(gallery: Gallery, i: int) -> str:
    """The caption of gallery image ``i``: true and predicted class if known, confidence."""
    confidence = f"conf {gallery.confidence[i]:.3g}"
    if gallery.label is None or gallery.prediction is None:
        return confidence
    return (
        f"true {html.escape(str(gallery.label[i]))}<br>"
        f"pred {html.escape(str(gallery.prediction[i]))}<br>{confidence}"
    )


def _gallery_section(b: _Builder, gallery: Gallery) -> str:
    from fdbench.report.plots import image_png

    titles = {
        OVERCONFIDENT_FAILURE: "most over-confident failures",
        UNDERCONFIDENT_SUCCESS: "most under-confident successes",
    }
    parts = [
        '<p class="note">Per study and CSF: the wrong predictions the CSF trusts most (the '
        "silent failures it lets through first) and the correct predictions it trusts least "
        "(the first it would reject). Under each image: the true class, the predicted class "
        "(where the run folder records them) and the CSF's confidence.</p>"
    ]
    study = np.asarray(gallery.study)
    csf = np.asarray(gallery.csf)
    kind = np.asarray(gallery.kind)
    for s in dict.fromkeys(study):
        rows = []
        for c in dict.fromkeys(csf[study == s]):
            cells = []
            for k, title in titles.items():
                items = []
                for i in np.flatnonzero((study == s) & (csf == c) & (kind == k)):
                    name = _stem("gallery", s, c, k, str(i))
                    img = image_html(image_png(gallery.images[i]), name, f"{title} {i}", "tile")
                    b.figures.append(name)
                    caption = _caption(gallery, i)
                    items.append(f"<figure>{img}<figcaption>{caption}</figcaption></figure>")
                cells.append(f'<div class="gallery">{"".join(items) or "–"}</div>')
            rows.append(f'<div class="gallery-csf">{html.escape(c)}</div>{"".join(cells)}')
        head = "".join(f'<div class="gallery-head">{h}</div>' for h in ("CSF", *titles.values()))
        parts.append(b.group(s, f'<div class="gallery-grid">{head}{"".join(rows)}</div>'))
    return "".join(parts)


def _is_aurc(column: str) -> bool:
    """Whether a column holds an AURC-type value (AURC, AUGRC, E-AURC, …), shown ×1000."""
    name = column.lower()
    return "aurc" in name or "augrc" in name


def _rounding_section(b: _Builder, rounding: pd.DataFrame) -> str:
    text = [c for c in rounding.columns if not pd.api.types.is_numeric_dtype(rounding[c])]
    keys = text or [rounding.columns[0]]
    frame = rounding.copy()
    frame.index = frame[keys].astype(str).agg(" / ".join, axis=1)
    frame.index.name = " / ".join(map(str, keys))
    frame = frame.drop(columns=keys)
    frame = frame.rename(columns={c: f"{c} ×1000" for c in frame.columns if _is_aurc(str(c))})
    for column in frame.columns:
        if str(column).endswith(" ×1000"):
            frame[column] = frame[column] * 1000.0
    note = (
        '<p class="note">How storing or computing the outputs at lower float precision changes '
        "the metrics of the first method's lowest seed on the i.i.d. test set (FD-Shifts stored "
        "float16 outputs; fdbench keeps float64). AURC ×1000, as everywhere on this page.</p>"
    )
    return note + b.table(
        plain_table(frame, "float_precision", "Rounding of float16/32/64 outputs", 6)
    )


def _sgr_summary(sgr: pd.DataFrame) -> pd.DataFrame:
    """Per study and target risk: how many CSFs got a threshold, the share of those whose test
    risk exceeds r*, and their median excess."""
    feasible = (
        sgr["feasible"].astype(bool)
        if "feasible" in sgr.columns
        else pd.Series(True, index=sgr.index)
    )
    studies = list(dict.fromkeys(sgr["study"]))
    frame = pd.DataFrame(index=pd.Index(studies, name="study"))
    for target in sorted(sgr["target_risk"].unique()):
        at = sgr["target_risk"] == target
        fitted = sgr[at & feasible].groupby("study", sort=False)["excess"]
        head = f"r*={target:g}"
        frame[f"{head}: CSFs with a threshold"] = (
            feasible[at].groupby(sgr.loc[at, "study"]).sum().reindex(studies).astype("int64")
        )
        frame[f"{head}: share exceeding"] = fitted.apply(lambda e: float((e > 0).mean()))
        frame[f"{head}: median excess"] = fitted.median()
        none = frame[f"{head}: CSFs with a threshold"] == 0
        for column in (f"{head}: share exceeding", f"{head}: median excess"):
            frame[column] = frame[column].astype(object).where(~none, NO_THRESHOLD)
    return frame


NO_THRESHOLD = "no CSF: r* below the risk the bound can certify on validation"
"""The SGR table's cell where no CSF has a threshold for the target risk r*."""


def _sgr_section(b: _Builder, sgr: pd.DataFrame) -> str:
    from fdbench.report.plots import sgr_figure

    delta = sgr["delta"].iloc[0] if "delta" in sgr.columns else None
    parts = [
        '<p class="note">Selection with guaranteed risk (Geifman &amp; El-Yaniv, 2017): for '
        "each CSF and target risk r*, the threshold with the largest validation coverage whose "
        "risk bound holds"
        + (f" with probability 1 − δ = {1 - delta:g}" if delta is not None else "")
        + " is applied to every test study; <i>excess</i> = realised test risk − r*. Above 0 "
        "the guarantee, valid for i.i.d. data, is broken (FD-Shifts' risk-excess analysis). "
        "Share exceeding: among the CSFs with a threshold. One training run (the lowest seed) "
        "per dataset × method; every row is in tables/sgr_thresholds.csv.</p>"
    ]
    b.csv(sgr, "sgr_thresholds")
    for label, part in _run_groups(_lowest_seed(sgr)):
        title = "SGR risk excess" + _suffix(label) + _seed_note(part)
        group = b.table(plain_table(_sgr_summary(part), _stem("sgr", label), title, 3))
        if "feasible" in part.columns and not part["feasible"].astype(bool).any():
            group += (
                '<p class="note">No CSF has a threshold whose risk bound meets any target on '
                "the validation split: nothing to plot.</p>"
            )
        else:
            group += b.figure(sgr_figure, (part, title), _stem("sgr_risk_excess", label), title)
        parts.append(b.group(label, group))
    return "".join(parts)


def _seed_boxplot_section(b: _Builder, results: pd.DataFrame) -> str:
    from fdbench.report.medical import (
        classification_performance,
        score_rows,
        seed_boxplot_figure,
    )
    from fdbench.report.tables import plain_table

    note = (
        '<p class="note">The medical testbed\'s form (Bernhardt et al., TMLR 2022): per data '
        "set, each confidence score's failure ROC-AUC, FPR@80TPR, AURC and AUGRC on the iid "
        "study as box plots over the seeds (whiskers at minimum and maximum), the softmax "
        "baseline filled with its median dashed; then the classification performance of each "
        "classifier, ROC-AUC for binary tasks (binary protocol) and accuracy otherwise, mean "
        "(std) over the seeds (Table 2).</p>"
    )
    body = [note]
    for dataset, rows in score_rows(results).groupby("dataset", sort=False):
        title = f"{dataset}: scores over seeds"
        body.append(b.figure(seed_boxplot_figure, (rows, title), f"seed_boxplots_{dataset}", title))
    table = classification_performance(results)
    if not table.empty:
        body.append(
            b.table(plain_table(table, "classification_performance", "Classification performance"))
        )
    return "".join(body)


@dataclass
class ReportContext:
    """What a section function of the report reads: the inputs and the options of
    :func:`write_report`, and the stage times of the run folder (``times.json``) if any."""

    inputs: RunInputs
    curve_csfs: Sequence[str] | None = None
    unknown_detection: pd.DataFrame | None = None
    seed_boxplots: bool = False
    times: dict[str, float] | None = None


SectionFunction = Callable[[_Builder, ReportContext], str]
"""A section of the page: its HTML body from the context ("" leaves the section out)."""


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


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{seconds:.1f} s"


def _listing(values: Sequence[str], shown: int = 12) -> str:
    """``values`` as escaped text: all of them if few, else the first ``shown`` and the rest in
    a collapsed block."""
    text = [html.escape(v) for v in values]
    if len(text) <= shown:
        return ", ".join(text) or "–"
    rest = ", ".join(text[shown:])
    return (
        f"{', '.join(text[:shown])} <details><summary>and {len(text) - shown} more</summary>"
        f"{rest}</details>"
    )


def _run_section(b: _Builder, context: ReportContext) -> str:
    """What was run: data sets, methods with their seeds, studies, CSFs, protocols, the wall
    time of each stage and the fdbench version."""
    from fdbench import __version__

    results = context.inputs.results
    rows: list[tuple[str, str]] = []
    if results is not None and not results.empty:
        for column, label in (("dataset", "data sets"), ("study", "studies")):
            if column in results.columns:
                values = [str(v) for v in dict.fromkeys(results[column]) if str(v)]
                if values:
                    rows.append((f"{label} ({len(values)})", _listing(values)))
        if "method" in results.columns and (results["method"].astype(str) != "").any():
            methods = []
            for method, part in results.groupby("method", sort=False):
                seeds = sorted(part["seed"].unique()) if "seed" in part.columns else []
                note = f" (seeds {', '.join(map(str, seeds))})" if len(seeds) else ""
                methods.append(f"{method}{note}")
            rows.insert(1, (f"methods ({len(methods)})", _listing(methods, 20)))
        elif "seed" in results.columns:
            rows.append(("seeds", ", ".join(map(str, sorted(results["seed"].unique())))))
        csfs = [str(c) for c in dict.fromkeys(results["csf"])]
        rows.append((f"CSFs ({len(csfs)})", _listing(csfs, 30)))
        if "protocol" in results.columns:
            protocols = [str(p) for p in dict.fromkeys(results["protocol"])]
            rows.append(("protocols", _listing(protocols)))
        metrics = [str(m) for m in dict.fromkeys(results["metric"])]
        rows.append((f"metrics ({len(metrics)})", _listing(metrics, 30)))
    if context.times:
        stages = ", ".join(
            f"{html.escape(k.removesuffix('_s'))} {_duration(v)}" for k, v in context.times.items()
        )
        rows.append(("wall time", f"{_duration(sum(context.times.values()))} ({stages})"))
    rows.append(("fdbench version", html.escape(__version__)))
    body = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    return f'<dl class="run">{body}</dl>'


def _metrics(b: _Builder, context: ReportContext) -> str:
    results = context.inputs.results
    return "" if results is None or results.empty else _metrics_section(b, results)


def _unknown_detection(b: _Builder, context: ReportContext) -> str:
    summary = context.unknown_detection
    return "" if summary is None or summary.empty else _unknown_detection_section(b, summary)


def _seed_boxplots(b: _Builder, context: ReportContext) -> str:
    results = context.inputs.results
    if not context.seed_boxplots or results is None or results.empty:
        return ""
    return _seed_boxplot_section(b, results)


def _rankings(b: _Builder, context: ReportContext) -> str:
    bootstrap, results = context.inputs.bootstrap, context.inputs.results
    if bootstrap is not None and not bootstrap.empty:
        return _ranking_section(b, bootstrap, results)
    if results is not None and not results.empty:
        return _value_ranking_section(b, results)
    return ""


def _value_ranking_section(b: _Builder, results: pd.DataFrame) -> str:
    """Without bootstrap resamples (e.g. the results of ``fdbench evaluate``): the CSFs ranked
    by their (seed-mean) values per study, and their mean rank over the studies."""
    from fdbench.analysis import rank_csfs

    ranked = {}
    for metric in RANKING_METRICS:
        rows = results[results["metric"] == metric]
        if not rows.empty and rows["csf"].nunique() >= 2:
            ranked[metric] = dict(_run_groups(rank_csfs(rows, metric)))
    parts = []
    for label in dict.fromkeys(label for groups in ranked.values() for label in groups):
        tables = []
        for metric, groups in ranked.items():
            if label not in groups:
                continue
            part = groups[label]
            frame = part.pivot_table(index="csf", columns="study", values="rank", sort=False)
            frame = frame.assign(**{"mean rank": frame.mean(axis=1)})
            frame = frame.sort_values("mean rank", kind="stable")
            frame.index.name = "CSF"
            frame.columns.name = None
            title = f"Rank by {metric.upper()} (1 = best)" + _suffix(label)
            table = ReportTable(_stem("rank", metric, label), title, frame, 2, False)
            tables.append(b.table(table))
        parts.append(b.group(label, "".join(tables)))
    if not parts:
        return ""
    note = (
        '<p class="note">The CSFs ranked by their values per study (rank 1 = best; ties share '
        "the average rank) and their mean rank over the studies. This folder has no bootstrap "
        "resamples (bootstrap.parquet), so there is no rank-then-aggregate and no significance "
        "test.</p>"
    )
    return note + "".join(parts)


def _curves(b: _Builder, context: ReportContext) -> str:
    curves = context.inputs.curves
    if curves is None or curves.empty:
        return ""
    return _curves_section(b, curves, context.curve_csfs, context.inputs.results)


def _calibration(b: _Builder, context: ReportContext) -> str:
    reliability = context.inputs.reliability
    return "" if reliability is None or reliability.empty else _calibration_section(b, reliability)


def _gallery(b: _Builder, context: ReportContext) -> str:
    gallery = context.inputs.gallery
    return "" if gallery is None or not len(gallery) else _gallery_section(b, gallery)


def _precision(b: _Builder, context: ReportContext) -> str:
    rounding = context.inputs.rounding
    return "" if rounding is None or rounding.empty else _rounding_section(b, rounding)


def _sgr(b: _Builder, context: ReportContext) -> str:
    sgr = context.inputs.sgr
    return "" if sgr is None or sgr.empty else _sgr_section(b, sgr)


RUN_SECTION: tuple[str, str, SectionFunction] = ("run", "What was run", _run_section)
"""The head of every report, before :data:`SECTIONS`."""


def _leaderboard(b: _Builder, context: ReportContext) -> str:
    return leaderboard_section(b, b.run_dir)


def _studies(b: _Builder, context: ReportContext) -> str:
    from fdbench.report.studies import STUDIES_FILE, read_study_summary, studies_section

    summary = read_study_summary(b.run_dir, context.inputs.results)
    if summary is None:
        return ""
    from_file = (b.run_dir / STUDIES_FILE).exists()
    return studies_section(b, summary, from_file, _curve_links(context))


def _curve_links(context: ReportContext) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """For every (dataset, study) the blocks of the curves section whose figure draws it:
    (anchor, label); the section itself where it has no blocks (no dataset or method)."""
    curves = context.inputs.curves
    if curves is None or curves.empty:
        return {}
    links: dict[tuple[str, str], list[tuple[str, str]]] = {}
    groups = _curve_groups(curves, context.curve_csfs, context.inputs.results)
    for label, part, _, _ in groups:
        dataset = ""
        if "dataset" in part.columns:
            dataset = str(part["dataset"].astype(object).fillna("").iloc[0])
        anchor = group_anchor("curves", label) if label else "curves"
        for study in dict.fromkeys(part["study"].astype(str)):
            links.setdefault((dataset, study), []).append((anchor, label or "all studies"))
    return links


def _friedman(b: _Builder, context: ReportContext) -> str:
    results = context.inputs.results
    if results is None or results.empty:
        return ""
    from fdbench.report.friedman import friedman_section

    return friedman_section(b, results)


def _severity(b: _Builder, context: ReportContext) -> str:
    results = context.inputs.results
    if results is None or results.empty:
        return ""
    from fdbench.report.severity import severity_section

    return severity_section(b, results, context.inputs.severity_bootstrap)


def _accepted(b: _Builder, context: ReportContext) -> str:
    accepted = context.inputs.accepted_calibration
    if accepted is None or accepted.empty:
        return ""
    from fdbench.report.accepted_calibration import accepted_calibration_section

    return accepted_calibration_section(b, accepted)


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
    one block per study (its scoring methods best first, :mod:`fdbench.report.studies`) from
    the leaderboard files (else from ``results``); accuracy once per classifier and
    heat-mapped metric tables (AURC and AUGRC ×1000, AUROC_f, ECE; CSF × study, colour per column
    where the shown values differ, best outlined) from ``results``;
    bootstrap rankings, rank distributions, Wilcoxon significance maps and Kendall τ (AURC vs
    AUGRC) from ``bootstrap``; risk-coverage and generalized-risk curves from ``curves``; ECE
    and reliability diagrams after scaling from ``reliability``; the failure gallery; the
    float-precision table ``rounding``; the SGR risk-excess table and plot from ``sgr``; Kim
    et al.'s Table 5 from ``unknown_detection`` (the summary of
    :func:`fdbench.report.unknown_detection_summary`); with ``seed_boxplots`` the medical
    testbed's box plots over seeds and classification performance (:mod:`fdbench.report.medical`)
    from ``results``. Every
    dataset × method gets its own tables and figures; curves, reliability, ECE after scaling
    and SGR show its lowest seed. A section whose input is absent is left
    out; an input lacking a required column (``REQUIRED_COLUMNS``) raises ValueError naming
    it. Images are base64 PNG inside the
    page (no network, no JavaScript). Every table is also written as CSV and booktabs LaTeX to
    ``run_dir/tables``, every figure as PNG to ``run_dir/figures``; ``report_manifest.json``
    lists them. Figures are drawn by ``processes`` worker processes (default: the usable CPUs;
    1 draws them in this process); the page is the same either way.

    Returns the path of the HTML file.
    """
    if processes is None:
        processes = _usable_cpus()
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
    path = write_text(run_dir / REPORT_FILE, page)
    manifest = {
        "sections": [a for a, _, _, _ in b.sections],
        "subsections": [a for _, _, _, subs in b.sections for a, _ in subs],
        "tables": b.tables,
        "figures": b.figures,
        "figure_colours": b.colours,
        "colormaps": {"heat": HEAT_COLORMAP, "tables": f"{HEAT_COLORMAP} (lightened)"},
    }
    write_text(run_dir / MANIFEST_FILE, json.dumps(manifest, indent=1))
    return path
