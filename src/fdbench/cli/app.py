"""The ``fdbench`` command's typer application and what its commands share: output checks,
``--force``, the progress display."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    name="fdbench",
    help="Benchmark failure detection of classifiers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


TABLE_SUFFIXES = (".csv", ".parquet", ".pq")
FORCE_HELP = "Overwrite files at the output path that fdbench did not write (never an input)."


def _show_version(value: bool) -> None:
    if value:
        from fdbench.core.provenance import source_version

        found = source_version()
        typer.echo(f"fdbench {found['version']} ({found['commit']})")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_show_version,
            is_eager=True,
            help="Print fdbench's version and commit and exit.",
        ),
    ] = False,
) -> None:
    """Benchmark failure detection of classifiers."""


#: Jobs finished and planned per stage of the running command, for the Ctrl-C message.
_JOBS: dict[str, tuple[int, int]] = {}


def _progress_bar() -> contextlib.AbstractContextManager:
    """The progress display of every stage: description, bar, done/total, elapsed time and
    the estimated time remaining; where standard output is no terminal, a line per finished job
    and analysis step instead (:class:`fdbench.cli.progress.LogProgress`)."""
    from rich.console import Console

    if not Console().is_terminal:
        from fdbench.cli.progress import LogProgress

        return LogProgress()
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        "{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        "eta",
        TimeRemainingColumn(),
    )


def _interrupted_message() -> str:
    """The one line printed on Ctrl-C: jobs finished per stage and how to resume."""
    jobs = [(s, d, t) for s, (d, t) in _JOBS.items() if s != "analysis"]
    if not jobs:
        return "fdbench: interrupted"
    done = ", ".join(f"{int(d)} of {t} {s} jobs" for s, d, t in jobs)
    return f"fdbench: interrupted: {done} finished; run the same command again to resume"


def _is_input(out: Path, source: Path) -> bool:
    """Whether writing ``out`` would write ``source`` or a file inside it (same path, symlink,
    hard link, or a path inside an input folder)."""
    if not source.exists():
        return False
    if out.exists() and os.path.samefile(out, source):
        return True
    resolved, origin = out.resolve(), source.resolve()
    return resolved == origin or (source.is_dir() and resolved.is_relative_to(origin))


def check_outputs(outputs: dict[str, Path | None], inputs: list[Path]) -> None:
    """Before any work: no output (``--option`` → path) may be an input of the same command,
    and none may be a file fdbench did not write unless ``--force`` is given
    (:func:`fdbench.core.io.check_replaceable`)."""
    from fdbench.core.io import check_replaceable

    for option, out in outputs.items():
        if out is None:
            continue
        for source in inputs:
            if _is_input(out, source):
                raise ValueError(
                    f"{option} {out} is the input {source} of this command (or inside it); "
                    "refusing to overwrite an input: choose another output path"
                )
        if out.exists() and not out.is_dir():
            check_replaceable(out)


def _forced(force: bool) -> contextlib.AbstractContextManager:
    from fdbench.core.io import overwrite_foreign

    return overwrite_foreign() if force else contextlib.nullcontext()


def _check_bootstrap_fits(n_resamples: int, option: str) -> None:
    """Refuse up front a number of resamples whose seeds alone cannot fit in memory (the
    bootstrap checks its full need again when it starts). No resamples: nothing to check."""
    if n_resamples == 0:
        return
    from fdbench.metrics.bootstrap import SEED_BYTES, check_memory

    check_memory(n_resamples * SEED_BYTES, f"{option}: {n_resamples} resamples")
