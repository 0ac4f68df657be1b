"""Helpers of the reliability tests: the command line in a subprocess, file digests, faults."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import numpy as np

from fdbench.outputs import RunOutputs, SplitOutputs
from tests._cli import run_cli  # noqa: F401 (re-exported)

ROOT = Path(__file__).resolve().parents[2]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def flip_byte(path: Path, position: float = 0.5) -> None:
    """Invert one byte of the file at ``path`` (at the given fraction of its length)."""
    data = bytearray(path.read_bytes())
    data[int(len(data) * position)] ^= 0xFF
    path.write_bytes(bytes(data))


def assert_user_error(done: subprocess.CompletedProcess, *names: str) -> str:
    """Exit status 2, one line on stderr naming every ``names``, no traceback."""
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert lines[0].startswith("fdbench: error: ")
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]


def small_run(seed: int = 0, n: int = 60) -> RunOutputs:
    """An outputs run of three splits, one with MC-dropout logits and features."""
    rng = np.random.default_rng(seed)
    splits = {}
    for name, kind in (("val", "val"), ("iid", "iid"), ("corruption/noise/3", "corruption")):
        labels = rng.integers(0, 4, n)
        splits[name] = SplitOutputs(
            labels=labels,
            logits=rng.normal(size=(n, 4)) + 2.0 * np.eye(4)[labels],
            mcd_logits=rng.normal(size=(n, 3, 4)) if name == "iid" else None,
            features=rng.normal(size=(n, 5)),
            kind=kind,
        )
    meta = {"method": "ce", "dataset": "tiny", "seed": seed, "fc_bias": rng.normal(size=4)}
    return RunOutputs(splits=splits, meta=meta)
