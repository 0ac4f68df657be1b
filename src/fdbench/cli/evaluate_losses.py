"""``fdbench evaluate`` on a table of confidences and per-sample losses (docs/any_model.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from fdbench.cli.app import TABLE_SUFFIXES, _check_bootstrap_fits, check_outputs

#: The leaderboard files ``fdbench evaluate --out FILE --bootstrap N`` writes beside FILE for a
#: table of several estimators or models (the names ``fdbench report`` reads).
LEADERBOARD_OUTPUTS = {
    "summary": "leaderboard.csv",
    "ranks": "leaderboard_ranks.csv",
    "significance": "leaderboard_significance.csv",
    "deltas": "paired_deltas.csv",
    "bootstrap": "leaderboard_bootstrap.parquet",
}


def split_names(values: list[str] | None) -> list[str] | None:
    """``--confidence a,b --confidence c`` -> ``[a, b, c]`` (``None`` when none is given)."""
    if not values:
        return None
    names = [n.strip() for v in values for n in v.split(",")]
    if any(not n for n in names):
        raise ValueError(f"--confidence: empty column name in {','.join(values)!r}")
    return names


def evaluate_losses(
    path: Path,
    out: Path | None,
    *,
    confidence: list[str] | None,
    correct: str | None,
    residual: str | None,
    quality: str | None,
    bootstrap: int,
    seed: int,
    name: str | None,
    operating_point: str | None,
    refused: dict[str, bool],
) -> None:
    """Read the table of losses at ``path`` (:func:`fdbench.evaluation.loss_tables.
    read_loss_table`), print its metrics per model and study, and with ``--out`` write the
    results, the curves, the operating points and, with ``--bootstrap`` and several
    (model, confidence) pairs, the paired leaderboard beside it. ``refused``: the options
    that need labels or logits, and whether each was given."""
    import pandas as pd

    from fdbench.core.io import check_output_file, verify_if_recorded
    from fdbench.evaluation.loss_comparisons import (
        loss_table_leaderboard,
        loss_table_operating_points,
    )
    from fdbench.evaluation.loss_tables import (
        LOSS_TABLE_META,
        evaluate_loss_table,
        loss_table_curves,
        read_loss_table,
    )
    from fdbench.evaluation.operating_points import parse_operating_point
    from fdbench.report.console import print_results

    for option, given in refused.items():
        if given:
            raise ValueError(f"{option} needs labels or logits; a table of losses has neither")
    if bootstrap < 0:
        raise ValueError(f"--bootstrap must be >= 0; got {bootstrap}")
    if name is not None and not name.strip():
        raise ValueError("--name must not be empty")
    _check_bootstrap_fits(bootstrap, "--bootstrap")
    request = parse_operating_point(operating_point, seed=seed) if operating_point else None
    outputs: dict[str, Path | None] = {"--out": out}
    if out is not None:
        check_output_file(out, "--out", TABLE_SUFFIXES)
        written = {"curves.parquet", "operating_points.csv", *LEADERBOARD_OUTPUTS.values()}
        if out.name in written or out.stem in {Path(w).stem for w in written}:
            raise ValueError(f"--out {out.name}: that name beside --out holds another output")
        outputs["--out (curves)"] = out.with_name("curves.parquet")
        if request is not None:
            outputs["--out (operating points)"] = out.with_name("operating_points.csv")
        if bootstrap:
            for key, file in LEADERBOARD_OUTPUTS.items():
                outputs[f"--out ({key})"] = out.with_name(file)
    check_outputs(outputs, [path])
    verify_if_recorded(path)
    table = read_loss_table(
        path,
        confidence=split_names(confidence),
        correct=correct,
        residual=residual,
        quality=quality,
    )
    dataset = name if name is not None else path.stem
    results = evaluate_loss_table(table, n_bootstrap=bootstrap, seed=seed, dataset=dataset)
    for model, part in results.groupby("method", sort=False):
        if model:
            typer.echo(f"model {model}")
        print_results(part)
    points = board = None
    if request is not None:
        points = loss_table_operating_points(table, request, dataset=dataset)
        typer.echo(f"\nOperating points (alpha = {request.alpha:g}, delta = {request.delta:g})")
        shown = ["method", "csf", "study", "procedure", "group", "threshold", "coverage", "risk"]
        with pd.option_context("display.width", 200, "display.max_rows", None):
            typer.echo(points[[*shown, "held"]].to_string(index=False, float_format="%.4f"))
    pairs = table.groupby("model").ngroups * (len(table.columns) - len(LOSS_TABLE_META))
    weighted = bool((table["weight"] != 1.0).any())
    if bootstrap and pairs > 1 and weighted:
        typer.echo("\npaired comparisons left out: their resamples take unweighted samples")
    elif bootstrap and pairs > 1:
        board = loss_table_leaderboard(
            table, results, n_bootstrap=bootstrap, seed=seed, dataset=dataset
        )
        _print_deltas(board["deltas"], board["ranks"])
    if out is None:
        return
    from fdbench.core.io import write_tables

    # one unit (fdbench.core.io.atomic_paths): a reader refuses one evaluation's results beside
    # another's curves, operating points or leaderboard
    unit = {
        out: results,
        out.with_name("curves.parquet"): loss_table_curves(table, dataset=dataset),
    }
    if points is not None:
        unit[out.with_name("operating_points.csv")] = points
    if board is not None:
        for key, file in LEADERBOARD_OUTPUTS.items():
            unit[out.with_name(file)] = board[key]
    write_tables(unit)
    typer.echo(f"wrote {out} and {out.with_name('curves.parquet')}")
    if points is not None:
        typer.echo(f"wrote {out.with_name('operating_points.csv')}")
    if board is not None:
        typer.echo(
            f"wrote the leaderboard beside {out} ({', '.join(LEADERBOARD_OUTPUTS.values())})"
        )


def _print_deltas(deltas, ranks) -> None:
    """Print the paired Δ of every scoring method against the best by mean rank (AUGRC, all
    studies), with the 95 % percentile interval."""
    from fdbench.analysis.leaderboard import ALL_STUDIES

    overall = ranks[(ranks["study"] == ALL_STUDIES) & (ranks["metric"] == "augrc")]
    best = overall.sort_values("mean_rank", kind="stable")["scoring_method"].iloc[0]
    rows = deltas[(deltas["study"] == ALL_STUDIES) & (deltas["reference"] == best)]
    typer.echo(
        f"\nPaired differences to {best} (all studies; Δ ×1000 for AURC/AUGRC, 95 % interval)"
    )
    width = max(len(str(n)) for n in rows["scoring_method"]) if len(rows) else 0
    for row in rows.itertuples(index=False):
        scale = 100.0 if row.metric == "auroc_f" else 1000.0
        typer.echo(
            f"  {row.scoring_method:<{width}}  {row.metric:<8} Δ = {row.delta * scale:+8.2f} "
            f"[{row.lower * scale:+.2f}, {row.upper * scale:+.2f}]"
        )
