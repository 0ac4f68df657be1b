"""Point 8 of issue #34 under a real memory limit: sizes a file header, a store's metadata or a
config states are refused before allocation, with the memory they would need, by a command
running under ``ulimit -v`` (``RLIMIT_AS``).

The limit, :data:`LIMIT`, is 2 GiB of address space: measured on Linux x86-64, a plain
``fdbench evaluate`` of a small ``.npz`` and a plain ``fdbench zoo`` of a one-member zoo finish
under 1.25 GiB (OpenBLAS cannot start its threads under 1 GiB), so the refusals below are the
checks', not a failing start. Commands that import PyTorch (``benchmark``) need more address
space than this and are not run here.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fdbench.core.io import record_directory_checksums
from fdbench.outputs import write_outputs

from ._cli import ROOT, outputs_npz
from .conftest import assert_user_error, small_run
from .test_input_boundary import _lying_npy, _with_entry, _zoo

#: The address-space limit (bytes) every command of this module runs under.
LIMIT = 2 * 2**30


def _limited(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python -m fdbench ARGS`` under ``ulimit -v`` of :data:`LIMIT`."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "200"}
    env.pop("FDBENCH_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "fdbench", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
        preexec_fn=limit,
    )


@pytest.mark.slow
def test_the_commands_start_under_the_limit(tmp_path):
    good = outputs_npz(tmp_path / "good.npz", k=7)
    assert _limited("evaluate", str(good), cwd=tmp_path).returncode == 0
    _, config = _zoo(tmp_path)
    done = _limited("zoo", str(config), "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_an_npy_header_claiming_10_to_the_11_by_7_states_the_memory(tmp_path):
    path = outputs_npz(tmp_path / "o.npz", k=7)
    _with_entry(path, "logits", _lying_npy((10**11, 7), np.zeros((3, 7))))
    done = _limited("evaluate", str(path), cwd=tmp_path)
    assert_user_error(done, "'logits'", "(100000000000, 7)", "5.1 TiB")


def test_a_store_whose_metadata_claims_10_to_the_12_rows_states_the_memory(tmp_path):
    store = tmp_path / "outputs.zarr"
    write_outputs(store, small_run())
    meta = store / "splits" / "0001" / "logits" / "zarr.json"
    spec = json.loads(meta.read_text())
    spec["shape"] = [10**12, spec["shape"][1]]
    meta.write_text(json.dumps(spec))
    record_directory_checksums(store)
    done = _limited("evaluate", str(store), cwd=tmp_path)
    assert_user_error(done, "outputs.zarr", "'logits'", "would need 29.1 TiB", "2.0 GiB available")


def test_a_zoo_asking_for_10_to_the_12_resamples_states_the_memory(tmp_path):
    _zoo(tmp_path)
    config = tmp_path / "big.yaml"
    # (YAML reads ``1e12`` as text, refused as text: the number is written out)
    config.write_text("name: t\nzoo: zoo\nn_bootstrap: 1000000000000\n")
    done = _limited("zoo", str(config), "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert_user_error(done, "n_bootstrap", "would need at least 109.1 TiB")
    assert not (tmp_path / "run").exists()


def test_the_member_bootstrap_checks_its_resamples_before_drawing_them(monkeypatch):
    import pandas as pd

    from fdbench.core import validation
    from fdbench.zoo.analyses import spearman_table

    members = pd.DataFrame({"aurc": np.arange(5.0), "augrc": np.arange(5.0) ** 2})
    monkeypatch.setattr(validation, "memory_limit", lambda: 2**20)
    with pytest.raises(ValueError, match=r"n_bootstrap: 10000 resamples of 5 members would need"):
        spearman_table(members, ("aurc", "augrc"), n_bootstrap=10_000)
    assert len(spearman_table(members, ("aurc", "augrc"), n_bootstrap=100)) == 1
