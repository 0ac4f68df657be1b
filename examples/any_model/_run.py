"""Run ``fdbench`` as a user does, from the examples of this folder."""

from __future__ import annotations

import subprocess
import sys


def fdbench(*args: str) -> None:
    """``python -m fdbench ARGS``, echoing the command; a failure stops the example."""
    print("$ fdbench " + " ".join(args), flush=True)
    subprocess.run([sys.executable, "-m", "fdbench", *args], check=True)
