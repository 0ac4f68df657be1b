"""Point 3 of issue #25: a reader concurrent with writers of the same outputs store sees either
the old or the new store, never one writer's metadata with another's arrays."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest

from fdbench.outputs import read_outputs, write_outputs

from .conftest import ROOT, small_run

_WRITER = """
import sys
sys.path.insert(0, sys.argv[4])
from tests.reliability.conftest import small_run
from fdbench.outputs import write_outputs

run = small_run(int(sys.argv[2]))
for _ in range(int(sys.argv[3])):
    write_outputs(sys.argv[1], run)
"""


def _same(run, expected) -> bool:
    if run.meta["seed"] != expected.meta["seed"] or list(run.splits) != list(expected.splits):
        return False
    if not np.array_equal(run.meta["fc_bias"], expected.meta["fc_bias"]):
        return False
    for name, split in expected.splits.items():
        got = run.splits[name]
        for array in ("labels", "logits", "mcd_logits", "features"):
            a, b = getattr(got, array), getattr(split, array)
            if (a is None) != (b is None) or (a is not None and not np.array_equal(a, b)):
                return False
    return True


def test_concurrent_reader_sees_whole_writes(tmp_path):
    store = tmp_path / "outputs.zarr"
    runs = {seed: small_run(seed) for seed in (1, 2)}
    write_outputs(store, runs[1])
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    writes = 25
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(store), str(seed), str(writes), str(ROOT)],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in (1, 2)
    ]
    seen = {1: 0, 2: 0}
    deadline = time.monotonic() + 120
    try:
        # read for as long as the two writers keep replacing the store
        while any(w.poll() is None for w in writers) and time.monotonic() < deadline:
            run = read_outputs(store)
            seed = run.meta["seed"]
            assert _same(run, runs[seed]), f"a read mixed two stores (meta of seed {seed})"
            seen[seed] += 1
    finally:
        errors = [w.communicate(timeout=120)[1] for w in writers]
    for writer, err in zip(writers, errors, strict=True):
        assert writer.returncode == 0, err
    assert sum(seen.values()) >= 5
    final = read_outputs(store)
    assert _same(final, runs[final.meta["seed"]])
    assert [p.name for p in tmp_path.iterdir()] == ["outputs.zarr"]


def test_lazy_array_of_a_replaced_store_raises_instead_of_mixing(tmp_path):
    store = tmp_path / "outputs.zarr"
    write_outputs(store, small_run(1))
    lazy = read_outputs(store, lazy=True)
    write_outputs(store, small_run(2))
    with pytest.raises(ValueError, match="replaced since it was opened"):
        lazy.splits["iid"].logits[...]
    assert read_outputs(store).meta["seed"] == 2
