"""Entry point for ``python -m fdbench``."""

from fdbench.cli import main

main()
