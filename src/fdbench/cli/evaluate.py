"""``fdbench evaluate``: every CSF on every study of saved outputs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    import pyarrow as pa
from fdbench.cli.app import (
    FORCE_HELP,
    TABLE_SUFFIXES,
    _check_bootstrap_fits,
    _forced,
    app,
    check_outputs,
)

#: ``fdbench evaluate`` prints one table per study up to this many studies; beyond, one compact
#: table, the per-study tables going to files.
MAX_PRINTED_STUDIES = 12
#: ``fdbench evaluate --out FILE`` also writes the risk-coverage curves as ``curves.parquet``
#: beside FILE, the name under which ``fdbench report`` reads them.
CURVES_STEM = "curves"


@app.command()
def evaluate(
    path: Annotated[
        Path,
        typer.Argument(
            help="Saved outputs: .npz (logits, labels[, study]; or probs instead of logits, "
            "used as given), a torch.save .pt file of tensors, .csv/.parquet table (label, "
            "prediction, confidence columns or prob_0..prob_K-1[, study]), a .csv/.parquet/"
            ".jsonl table of per-sample correct or residual and confidences (docs/any_model.md), "
            "OpenOOD score dumps (.npz with pred, conf, label, or their scores/ folder), an "
            "fdbench outputs store or an FD-Shifts run directory (docs/outputs.md)."
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Write the tidy results (.csv/.parquet), and the risk-coverage curves as "
            "curves.parquet in the same folder, for `fdbench report FOLDER`.",
        ),
    ] = None,
    protocol: Annotated[
        str, typer.Option(help="failure_detection (FD-Shifts) or unknown_detection (Kim et al.).")
    ] = "failure_detection",
    bootstrap: Annotated[
        int, typer.Option("--bootstrap", help="Bootstrap resamples for 95 % intervals (0 = off).")
    ] = 0,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap resamples.")] = 0,
    iid_study: Annotated[
        str, typer.Option(help="The in-distribution study new-class studies are paired with.")
    ] = "iid",
    confidence: Annotated[
        list[str] | None,
        typer.Option(
            "--confidence",
            "-c",
            help="Confidence column(s) of a table (default: all; a,b or repeated for a table "
            "of losses).",
        ),
    ] = None,
    correct: Annotated[
        str | None,
        typer.Option(
            "--correct",
            help="Column of per-sample correctness (0/1) of a table of losses (default: a "
            "column named correct).",
        ),
    ] = None,
    residual: Annotated[
        str | None,
        typer.Option(
            "--residual",
            help="Column of per-sample non-negative loss of a table of losses (default: a "
            "column named residual).",
        ),
    ] = None,
    quality: Annotated[
        str | None,
        typer.Option(
            "--quality",
            help="Column of a per-sample quality in [0, 1] (e.g. ROUGE-L, a judge's score); "
            "the loss is 1 - quality.",
        ),
    ] = None,
    binary_fpr: Annotated[
        float | None,
        typer.Option(
            "--binary-fpr",
            help="Binary protocol (two-class outputs with a val split): predict class 1 at the "
            "threshold with this validation FPR, e.g. 0.2 (Bernhardt et al.).",
        ),
    ] = None,
    threshold_rule: Annotated[
        str,
        typer.Option(
            "--threshold-rule",
            help="With --binary-fpr: exact (default, the FPR nearest the target) or roc_curve "
            "(Bernhardt et al.'s code: scikit-learn's roc_curve points, predict p_1 > t).",
        ),
    ] = "exact",
    convention: Annotated[
        list[str] | None,
        typer.Option(
            "--convention",
            help="Also report an authors'-code quantity under its own name (repeatable): "
            "aurc_per_sample, auroc_f_ordered, coverage@acc99_first_drop (Galil/Kim et al.'s "
            "code), fpr@95tpr_ood_positive (OpenOOD's FPR@95; always on for OpenOOD dumps).",
        ),
    ] = None,
    precision_report: Annotated[
        bool,
        typer.Option(
            "--precision-report",
            help="Also print how float16/32/64 softmax rounding changes AURC and AUROC_f.",
        ),
    ] = False,
    openmax: Annotated[
        bool,
        typer.Option(
            "--openmax",
            help="Also compute the OpenMax CSF (Kim et al.'s defaults) from the stored train "
            "logits.",
        ),
    ] = False,
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            help="Name of the outputs (e.g. the data set): the dataset column of the results, "
            "and the title of their report.",
        ),
    ] = None,
    tables: Annotated[
        Path | None,
        typer.Option(
            "--tables",
            help=f"Folder for one CSV table per study when there are more than "
            f"{MAX_PRINTED_STUDIES} studies (default: beside --out, else ./<PATH name>_tables).",
        ),
    ] = None,
    operating_point: Annotated[
        str | None,
        typer.Option(
            "--operating-point",
            help="Certify thresholds: alpha=A,delta=D[,calibration=FRACTION|SPLIT] (default "
            "calibration: a random 0.3 of each study, seeded by --seed; or a split such as "
            "val); prints them with conformal sets and writes operating_points.csv beside "
            "--out (docs/operating_points.md).",
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help=FORCE_HELP)] = False,
) -> None:
    """Evaluate every CSF on every study of saved outputs and print the metric tables.

    With more than a few studies the console shows one compact table (per CSF: the i.i.d.
    study and the mean over the others) and every per-study table goes to a CSV file under
    ``--tables``. Under ``--protocol unknown_detection`` the pooled studies of Kim et al. are
    added and their Table 5 layout is printed after the per-study tables."""
    with _forced(force):
        _evaluate(
            path,
            out,
            protocol,
            bootstrap,
            seed,
            iid_study,
            confidence,
            precision_report,
            openmax,
            binary_fpr,
            name,
            tables,
            threshold_rule,
            tuple(convention or ()),
            operating_point,
            (correct, residual, quality),
        )


def _evaluate(
    path: Path,
    out: Path | None,
    protocol: str,
    bootstrap: int,
    seed: int,
    iid_study: str,
    confidence: list[str] | None,
    precision_report: bool,
    openmax: bool,
    binary_fpr: float | None = None,
    name: str | None = None,
    tables: Path | None = None,
    threshold_rule: str = "exact",
    conventions: tuple[str, ...] = (),
    operating_point: str | None = None,
    losses: tuple[str | None, str | None, str | None] = (None, None, None),
) -> None:
    from fdbench.core.io import check_output_file, check_output_folder, verify_if_recorded
    from fdbench.evaluation.runs import evaluate_run
    from fdbench.evaluation.tables import evaluate_table, read_confidence_table
    from fdbench.metrics.conventions import OOD_CONVENTION_KEYS, check_convention_keys
    from fdbench.protocol import UNKNOWN_STUDY, Protocol
    from fdbench.protocol.binary import THRESHOLD_RULES
    from fdbench.report.console import (
        print_compact,
        print_results,
        print_unknown_detection,
        write_study_tables,
    )

    if not path.exists():
        raise FileNotFoundError(f"PATH {path} not found: it does not exist")
    from fdbench.evaluation.loss_tables import is_loss_table

    if is_loss_table(path, correct=losses[0], residual=losses[1], quality=losses[2]):
        from fdbench.cli.evaluate_losses import evaluate_losses

        refused = {
            "--protocol unknown_detection": protocol != "failure_detection",
            "--precision-report": precision_report,
            "--openmax": openmax,
            "--binary-fpr": binary_fpr is not None,
            "--threshold-rule": threshold_rule != "exact",
            "--convention": bool(conventions),
            "--tables": tables is not None,
        }
        return evaluate_losses(
            path, out, confidence=confidence, correct=losses[0], residual=losses[1],
            quality=losses[2], bootstrap=bootstrap, seed=seed, name=name,
            operating_point=operating_point, refused=refused,
        )  # fmt: skip
    request = None
    if operating_point:
        from fdbench.evaluation.operating_points import parse_operating_point

        request = parse_operating_point(operating_point, seed=seed)
    curves_out = points_out = sets_out = None
    if out is not None:
        check_output_file(out, "--out", TABLE_SUFFIXES)
        if out.stem == CURVES_STEM:
            raise ValueError(
                f"--out {out.name}: {CURVES_STEM}.parquet beside --out holds the curves; "
                "choose another name for the results"
            )
        curves_out = out.with_name(f"{CURVES_STEM}.parquet")
        if request is not None:
            points_out = out.with_name(f"{OPERATING_POINTS_STEM}.csv")
            sets_out = out.with_name(f"{CONFORMAL_SETS_STEM}.csv")
            if out.stem in (OPERATING_POINTS_STEM, CONFORMAL_SETS_STEM):
                raise ValueError(
                    f"--out {out.name}: that name beside --out holds the operating points; "
                    "choose another name for the results"
                )
    if protocol not in {p.value for p in Protocol}:
        choices = " or ".join(p.value for p in Protocol)
        raise ValueError(f"--protocol must be {choices}; got {protocol!r}")
    if bootstrap < 0:
        raise ValueError(f"--bootstrap must be >= 0; got {bootstrap}")
    if name is not None and not name.strip():
        raise ValueError("--name must not be empty")
    if binary_fpr is not None and not 0.0 <= binary_fpr <= 1.0:
        raise ValueError(f"--binary-fpr must be in [0, 1]; got {binary_fpr}")
    if threshold_rule not in THRESHOLD_RULES:
        choices = " or ".join(THRESHOLD_RULES)
        raise ValueError(f"--threshold-rule must be {choices}; got {threshold_rule!r}")
    if threshold_rule != "exact" and binary_fpr is None:
        raise ValueError("--threshold-rule applies to the binary protocol: give --binary-fpr")
    try:
        conventions = check_convention_keys(conventions)
    except ValueError as err:
        raise ValueError(f"--convention: {str(err).removeprefix('conventions: ')}") from None
    from fdbench.evaluation.probabilities import (
        is_probs_file,
        read_probs_file,
        table_from_probability_columns,
    )
    from fdbench.outputs import is_score_dump, read_score_dump

    score_dump = is_score_dump(path)
    if score_dump:
        conventions = tuple(dict.fromkeys([*conventions, *OOD_CONVENTION_KEYS]))
    probs_file = is_probs_file(path)
    is_table = path.suffix.lower() in {".csv", ".parquet", ".pq"}
    if is_table or score_dump or probs_file:
        what = "an OpenOOD score dump" if score_dump else "a confidence table"
        what = "a probabilities file" if probs_file else what
        for given, option in (
            (precision_report, "--precision-report"),
            (openmax, "--openmax"),
            (binary_fpr is not None, "--binary-fpr"),
        ):
            if given:
                raise ValueError(f"{option} needs logits; {what} has none")
    if confidence and not is_table:
        raise ValueError("--confidence selects columns of a table; PATH is not a .csv/.parquet")
    _check_bootstrap_fits(bootstrap, "--bootstrap")
    tables = tables if tables is not None else _default_tables(path, out)
    check_output_folder(tables, "--tables")
    check_outputs(
        {
            "--out": out,
            "--out (curves)": curves_out,
            "--out (operating points)": points_out,
            "--out (conformal sets)": sets_out,
            "--tables": tables,
        },
        [path],
    )
    if path.is_file():
        verify_if_recorded(path)
    if is_table or score_dump or probs_file:
        if score_dump:
            table = read_score_dump(path, iid_study=iid_study)
        elif probs_file:
            table = read_probs_file(path)
        else:
            table = table_from_probability_columns(read_confidence_table(path, columns=confidence))
        _check_calibration_split(request, set(table["study"]))
        import pyarrow as pa

        results, curves = (
            pa.Table.from_pandas(frame, preserve_index=False)
            for frame in evaluate_table(
                table,
                protocol=protocol,
                iid_split=iid_study,
                n_bootstrap=bootstrap,
                seed=seed,
                return_curves=True,
                conventions=conventions,
            )
        )
    else:
        from fdbench.csf import OpenMaxParams
        from fdbench.outputs import load_outputs

        run = load_outputs(path)
        _check_calibration_split(request, set(run.splits))
        results, curves = evaluate_run(
            run,
            protocol=protocol,
            iid_split=iid_study,
            n_bootstrap=bootstrap,
            seed=seed,
            openmax=OpenMaxParams() if openmax else None,
            binary_fpr=binary_fpr,
            return_curves=True,
            threshold_rule=threshold_rule,
            conventions=conventions,
            output="arrow",
        )
        if precision_report:
            _print_precision_report(run)
    if name is not None:
        results, curves = (_with_dataset(t, name) for t in (results, curves))
    studies = dict.fromkeys(results.column("study").to_pylist())
    if len(studies) > MAX_PRINTED_STUDIES:
        frame = results.to_pandas()
        print_compact(frame, iid_study=iid_study)
        written = write_study_tables(frame, tables)
        typer.echo(f"wrote {len(written)} per-study tables to {tables}")
    else:
        print_results(results)
    if UNKNOWN_STUDY in studies:
        print_unknown_detection(results.to_pandas(), iid_study=iid_study)
    if request is not None:
        points, sets = _operating_points(
            request, table if is_table or score_dump or probs_file else None,
            None if is_table or score_dump or probs_file else run, protocol, iid_study, name,
        )  # fmt: skip
    if out is not None:
        from fdbench.core.io import write_tables

        unit = {out: results, curves_out: curves}
        if request is not None:
            unit.update({points_out: points, sets_out: sets})
        write_tables(
            unit
        )  # one unit: a reader refuses one evaluation's results beside another's curves
        typer.echo(f"wrote {out} and {curves_out}")
        if request is not None:
            typer.echo(f"wrote {points_out} and {sets_out}")


#: ``fdbench evaluate --operating-point --out FILE`` writes the operating points and the
#: conformal sets beside FILE under these names (``fdbench report`` reads the first).
OPERATING_POINTS_STEM = "operating_points"
CONFORMAL_SETS_STEM = "conformal_sets"
#: The columns of the operating points the console shows.
SHOWN_POINT_COLUMNS = [
    "csf", "study", "procedure", "group", "threshold", "calibration_coverage", "bound",
    "coverage", "risk", "held",
]  # fmt: skip


def _with_dataset(table: pa.Table, name: str) -> pa.Table:
    """``table`` with every row's ``dataset`` set to ``name`` (``--name``; a ``large_string``
    column built without pandas: :func:`fdbench.evaluation.result_tables.arrow_column`)."""
    from fdbench.evaluation.result_tables import arrow_column

    column = arrow_column([name] * table.num_rows)
    return table.set_column(table.schema.get_field_index("dataset"), "dataset", column)


def _check_calibration_split(request, splits: set[str]) -> None:
    """A named calibration split must be among the outputs' splits (checked before any work)."""
    if request is not None and isinstance(request.calibration, str):
        if request.calibration not in splits:
            raise ValueError(
                f"--operating-point: calibration split {request.calibration!r} is not in the "
                f"outputs (splits: {', '.join(sorted(splits))})"
            )


def _operating_points(request, table, run, protocol: str, iid_study: str, name: str | None):
    """Print and return the operating points (and, for stored outputs, the conformal sets)."""
    import pandas as pd

    from fdbench.evaluation.operating_points import (
        CONFORMAL_COLUMNS,
        run_conformal_sets,
        run_operating_points,
        table_operating_points,
    )

    common = {"protocol": protocol, "iid_split": iid_study}
    if run is None:
        points = table_operating_points(table, request, **common)
        sets = pd.DataFrame(columns=list(CONFORMAL_COLUMNS))
    else:
        points = run_operating_points(run, request, **common)
        sets = run_conformal_sets(run, request)
    if name is not None:
        points["dataset"] = name
    delta = f"{request.delta:g}"
    typer.echo(
        f"\nOperating points (alpha = {request.alpha:g}, delta = {delta}; calibration: "
        f"{points['calibration'].iloc[0] if len(points) else request.calibration})"
    )
    with pd.option_context("display.width", 200, "display.max_rows", None):
        typer.echo(points[SHOWN_POINT_COLUMNS].to_string(index=False, float_format="%.4f"))
        if len(sets):
            typer.echo(f"\nConformal sets (coverage >= {1 - request.alpha:g})")
            typer.echo(sets.to_string(index=False, float_format="%.4f"))
    return points, sets


def _default_tables(path: Path, out: Path | None) -> Path:
    """Where the per-study tables of ``fdbench evaluate`` go without ``--tables``: beside
    ``--out`` (``<out name>_tables``), else ``./<PATH name>_tables``."""
    if out is not None:
        return out.with_name(f"{out.stem}_tables")
    return Path(f"{path.resolve().stem}_tables")


def _print_precision_report(run: object) -> None:
    from fdbench.core.names import terminal_console
    from fdbench.csf.precision import precision_diagnostics

    console = terminal_console()
    for name, split in run.splits.items():
        if name in {"train", "val"} or (split.labels < 0).all():
            continue
        report = precision_diagnostics(split.logits, split.labels)
        console.print(f"[bold]float precision of the softmax on {name}[/]")
        console.print(report.to_string(index=False))
