"""Section: what was run (data sets, methods and seeds, studies, CSFs, wall time)."""

from __future__ import annotations

import html
from collections.abc import Sequence

from fdbench.report.builder import ReportContext, SectionFunction, _Builder


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
        protocols = (
            [str(p) for p in dict.fromkeys(results["protocol"])]
            if "protocol" in results.columns
            else []
        )
        if context.unknown_detection is not None and not context.unknown_detection.empty:
            protocols = [p for p in protocols if p != "unknown_detection"]
            protocols.append(
                "unknown_detection (Kim et al., 2023: the pooled study 'unknown', in-distribution "
                "test ∪ near-OoD ∪ far-OoD; their Table 5 in Unknown detection)"
            )
        if protocols:
            rows.append(("protocols", _listing(protocols)))
        metrics = [str(m) for m in dict.fromkeys(results["metric"])]
        rows.append((f"metrics ({len(metrics)})", _listing(metrics, 30)))
    if context.times:
        # times.json: the stage times, and "total_s" over every invocation of a resumed run
        times = {k: v for k, v in context.times.items() if k != "total_s"}
        stages = ", ".join(
            f"{html.escape(k.removesuffix('_s'))} {_duration(v)}" for k, v in times.items()
        )
        total = context.times.get("total_s", sum(times.values()))
        rows.append(("wall time", f"{_duration(total)} (stages when they last ran: {stages})"))
    rows.append(("fdbench version", html.escape(__version__)))
    body = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    return f'<dl class="run">{body}</dl>'


RUN_SECTION: tuple[str, str, SectionFunction] = ("run", "What was run", _run_section)
