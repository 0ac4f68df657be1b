"""The ``fdbench`` command: one thin module per command (:mod:`.evaluate`, :mod:`.benchmark`,
:mod:`.zoo`, :mod:`.report`, :mod:`.data`) on the typer application of :mod:`.app`; :func:`main`
runs it."""

from fdbench.cli.app import app
from fdbench.cli.command import main

__all__ = ["app", "main"]
