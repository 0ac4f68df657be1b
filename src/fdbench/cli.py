"""The ``fdbench`` command: parses arguments, calls the stages, prints results."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="fdbench",
    help="Benchmark failure detection of classifiers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Benchmark failure detection of classifiers."""


def main() -> None:
    """Run the ``fdbench`` command line."""
    app()
