"""Files and folders fdbench writes get the mode of the user's umask, not tempfile's 0600/0700."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fdbench.core.io import atomic_path, default_mode, write_table, write_text
from fdbench.data.sources.cache import atomic_write_bytes
from fdbench.outputs import RunOutputs, SplitOutputs, write_outputs


@pytest.fixture(params=[0o022, 0o077, 0o002])
def umask(request):
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _run() -> RunOutputs:
    rng = np.random.default_rng(0)
    split = SplitOutputs(labels=rng.integers(0, 3, 20), logits=rng.normal(size=(20, 3)), kind="iid")
    return RunOutputs(splits={"iid": split}, meta={"method": "ce"})


def test_default_mode_follows_the_umask(umask):
    assert default_mode() == 0o666 & ~umask
    assert default_mode(directory=True) == 0o777 & ~umask
    assert os.umask(umask) == umask  # reading the umask left it as it was


def test_tables_text_and_atomic_files_get_the_umask_mode(tmp_path, umask):
    table = pd.DataFrame({"a": [1.0, 2.0]})
    paths = [
        write_table(table, tmp_path / "results.csv"),
        write_table(table, tmp_path / "results.parquet"),
        write_text(tmp_path / "report.html", "<html></html>"),
    ]
    with atomic_path(tmp_path / "times.json") as tmp:
        tmp.write_text("{}")
    paths.append(tmp_path / "times.json")
    atomic_write_bytes(tmp_path / "cache" / "data.npy", b"\x00" * 8)
    paths.append(tmp_path / "cache" / "data.npy")
    plain = tmp_path / "plain.txt"
    plain.write_text("written by open()")
    for path in paths:
        assert _mode(path) == _mode(plain) == 0o666 & ~umask, path.name


def test_outputs_store_folders_get_the_umask_mode(tmp_path, umask):
    store = tmp_path / "outputs.zarr"
    write_outputs(store, _run())
    mkdir = tmp_path / "made_by_mkdir"
    mkdir.mkdir()
    assert _mode(store) == _mode(mkdir) == 0o777 & ~umask
    files = [p for p in store.rglob("*") if p.is_file()]
    assert files and all(_mode(p) == 0o666 & ~umask for p in files)


def test_checkpoints_get_the_umask_mode(tmp_path, umask):
    torch = pytest.importorskip("torch")
    from fdbench.training.jobs import _save_atomic

    path = tmp_path / "runs" / "model.pt"
    _save_atomic({"state_dict": {"w": torch.zeros(2)}}, path)
    assert _mode(path) == 0o666 & ~umask
