"""Run the ``fdbench`` command as a user does, with this checkout's sources."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_cli(*args: str, cwd: Path | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    """``python -m fdbench ARGS`` in a subprocess (``FDBENCH_DEBUG`` unset, wide console)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "200"}
    env.pop("FDBENCH_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "fdbench", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
    )
