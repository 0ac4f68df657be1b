"""Running ``fdbench`` as a user does and checking that an error is one clear line."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import numpy as np

from tests._cli import ROOT, run_cli  # noqa: F401 (re-exported)


def assert_one_line_error(result: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit status 2, no traceback, exactly one line on stderr, naming every needle."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("fdbench: error: "), lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def digests(*paths: Path) -> dict[Path, str]:
    """SHA-256 of every file under ``paths`` (files or folders), to compare before and after."""
    out = {}
    for path in paths:
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for file in files:
            out[file] = hashlib.sha256(file.read_bytes()).hexdigest()
    return out


def outputs_npz(path: Path, *, n: int = 120, k: int = 4, **overrides: np.ndarray) -> Path:
    """A small ``.npz`` of logits and labels, with ``overrides`` replacing or adding arrays."""
    rng = np.random.default_rng(0)
    labels = rng.integers(0, k, n)
    arrays = {"logits": rng.normal(size=(n, k)) + 2.0 * np.eye(k)[labels], "labels": labels}
    arrays.update(overrides)
    np.savez(path, **arrays)
    return path
