"""Tests of the Zarr outputs store: round trip, validation, atomic writes, corruption."""

from __future__ import annotations

import os

import numpy as np
import pytest
import zarr

from fdbench.outputs import (
    RunOutputs,
    SplitOutputs,
    iter_sample_chunks,
    read_outputs,
    write_outputs,
)
from fdbench.outputs.schema import validate_split


def _split(rng: np.random.Generator, n: int, k: int = 4, kind: str = "iid") -> SplitOutputs:
    return SplitOutputs(
        labels=rng.integers(-1, k, n).astype(np.int64),
        logits=rng.normal(size=(n, k)) * 1e3,
        mcd_logits=rng.normal(size=(n, 3, k)),
        features=rng.normal(size=(n, 6)),
        heads={"devries": rng.random(n), "dg_reservation": rng.random(n)},
        kind=kind,
    )


def _run(seed: int = 0) -> RunOutputs:
    rng = np.random.default_rng(seed)
    return RunOutputs(
        splits={
            "train": _split(rng, 50, kind="train"),
            "val": SplitOutputs(labels=np.arange(5) % 4, logits=rng.normal(size=(5, 4))),
            "corruption/gaussian_noise/3": _split(rng, 37, kind="corruption"),
            "new_class/svhn": _split(rng, 0, kind="new_class_semantic"),
        },
        meta={
            "classes": ["a", "b", "c", "d"],
            "seed": seed,
            "method": "ce",
            "fc_weight": rng.normal(size=(4, 6)),
            "fc_bias": rng.normal(size=4),
        },
    )


def _assert_same(a: RunOutputs, b: RunOutputs) -> None:
    assert list(a.splits) == list(b.splits)
    for name in a.splits:
        sa, sb = a.splits[name], b.splits[name]
        assert sa.kind == sb.kind
        for key in ("labels", "logits", "mcd_logits", "features"):
            va, vb = getattr(sa, key), getattr(sb, key)
            if va is None:
                assert vb is None
                continue
            assert va.dtype == vb.dtype and va.shape == vb.shape
            assert va.tobytes() == vb.tobytes()
        assert list(sa.heads) == list(sb.heads)
        for head in sa.heads:
            assert sa.heads[head].tobytes() == sb.heads[head].tobytes()
    assert a.meta.keys() == b.meta.keys()
    for key, value in a.meta.items():
        if isinstance(value, np.ndarray):
            assert value.tobytes() == b.meta[key].tobytes()
        else:
            assert value == b.meta[key]


def test_round_trip_is_bit_identical(tmp_path):
    run = _run()
    run.splits["train"].logits[0, 0] = np.nextafter(1.0, 2.0)
    run.splits["train"].logits[1, 1] = 5e-324
    write_outputs(tmp_path / "run", run)
    _assert_same(run, read_outputs(tmp_path / "run"))


def test_arrays_equal_to_the_fill_value_round_trip(tmp_path):
    # a chunk of zeros (all labels 0, all-zero features) is written like any other, so reading
    # it back is not mistaken for a missing chunk of a damaged store
    run = RunOutputs(
        splits={
            "iid": SplitOutputs(
                labels=np.zeros(2, dtype=np.int64),
                logits=np.zeros((2, 3)),
                features=np.zeros((2, 4)),
                heads={"devries": np.zeros(2)},
            )
        }
    )
    write_outputs(tmp_path / "run", run)
    _assert_same(run, read_outputs(tmp_path / "run"))
    lazy = read_outputs(tmp_path / "run", lazy=True).splits["iid"]
    assert lazy.labels[...].tobytes() == run.splits["iid"].labels.tobytes()


def test_store_is_zarr_v3_chunked_along_samples(tmp_path, monkeypatch):
    monkeypatch.setattr("fdbench.outputs.store._TARGET_CHUNK_BYTES", 3 * 4 * 8 * 10)
    write_outputs(tmp_path / "run", _run())
    root = zarr.open_group(str(tmp_path / "run"), mode="r")
    assert root.metadata.zarr_format == 3
    mcd = root["splits/0002/mcd_logits"]
    assert mcd.shape == (37, 3, 4)
    assert mcd.chunks == (10, 3, 4)


def test_lazy_read_and_chunk_iterator(tmp_path):
    run = _run()
    write_outputs(tmp_path / "run", run)
    lazy = read_outputs(tmp_path / "run", lazy=True)
    split = lazy.splits["corruption/gaussian_noise/3"]
    assert isinstance(split.mcd_logits, zarr.Array)
    expected = run.splits["corruption/gaussian_noise/3"]
    np.testing.assert_array_equal(split.mcd_logits[5:9], expected.mcd_logits[5:9])
    blocks = list(
        iter_sample_chunks(
            tmp_path / "run",
            "corruption/gaussian_noise/3",
            arrays=("logits", "labels", "heads/devries"),
            chunk_size=10,
        )
    )
    assert [b["logits"].shape[0] for b in blocks] == [10, 10, 10, 7]
    np.testing.assert_array_equal(np.concatenate([b["logits"] for b in blocks]), expected.logits)
    np.testing.assert_array_equal(
        np.concatenate([b["heads/devries"] for b in blocks]), expected.heads["devries"]
    )
    with pytest.raises(ValueError, match="no head 'confidnet'"):
        next(iter_sample_chunks(tmp_path / "run", "train", arrays=("heads/confidnet",)))


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda s: setattr(s, "logits", s.logits.astype(np.float32)), "logits must have dtype"),
        (lambda s: setattr(s, "labels", s.labels[:-1]), "labels has 36 samples"),
        (lambda s: s.logits.__setitem__((3, 1), np.nan), "logits holds 1 non-finite"),
        (lambda s: s.labels.__setitem__(2, 4), r"labels must lie in \[-1, 4\)"),
        (lambda s: setattr(s, "mcd_logits", s.mcd_logits[:, :, :3]), "mcd_logits must have"),
        (lambda s: s.heads.__setitem__("devries", s.heads["devries"][:3]), "heads\\['devries'\\]"),
    ],
)
def test_write_validates_and_names_split_and_array(tmp_path, mutate, message):
    run = _run()
    mutate(run.splits["corruption/gaussian_noise/3"])
    with pytest.raises((TypeError, ValueError), match=message) as info:
        write_outputs(tmp_path / "run", run)
    assert "corruption/gaussian_noise/3" in str(info.value)
    assert not (tmp_path / "run").exists()
    assert os.listdir(tmp_path) == []


def test_meta_must_be_serialisable(tmp_path):
    run = _run()
    run.meta["bad"] = object()
    with pytest.raises(TypeError, match=r"meta\['bad'\]"):
        write_outputs(tmp_path / "run", run)


def test_interrupted_write_keeps_previous_store(tmp_path, monkeypatch):
    old = _run(seed=1)
    write_outputs(tmp_path / "run", old)
    calls = {"n": 0}
    original = zarr.Array.__setitem__

    def failing_setitem(self, key, value):
        calls["n"] += 1
        if calls["n"] == 4:
            raise RuntimeError("disk full")
        return original(self, key, value)

    monkeypatch.setattr(zarr.Array, "__setitem__", failing_setitem)
    with pytest.raises(RuntimeError, match="disk full"):
        write_outputs(tmp_path / "run", _run(seed=2))
    monkeypatch.undo()
    assert calls["n"] == 4
    assert sorted(os.listdir(tmp_path)) == ["run"]
    _assert_same(old, read_outputs(tmp_path / "run"))


def test_interrupted_first_write_leaves_nothing(tmp_path, monkeypatch):
    def failing_setitem(self, key, value):
        raise KeyboardInterrupt

    monkeypatch.setattr(zarr.Array, "__setitem__", failing_setitem)
    with pytest.raises(KeyboardInterrupt):
        write_outputs(tmp_path / "run", _run())
    assert os.listdir(tmp_path) == []


def test_overwrite_replaces_complete_store(tmp_path):
    write_outputs(tmp_path / "run", _run(seed=1))
    new = _run(seed=2)
    write_outputs(tmp_path / "run", new)
    _assert_same(new, read_outputs(tmp_path / "run"))
    assert sorted(os.listdir(tmp_path)) == ["run"]


def _chunk_file(root):
    return root / "splits" / "0002" / "logits" / "c" / "0" / "0"


def test_truncated_chunk_gives_clear_error(tmp_path):
    write_outputs(tmp_path / "run", _run())
    chunk = _chunk_file(tmp_path / "run")
    chunk.write_bytes(chunk.read_bytes()[:50])
    with pytest.raises(ValueError, match=r"corrupted: split 'corruption/gaussian_noise/3', array"):
        read_outputs(tmp_path / "run")


def test_flipped_byte_is_detected_by_checksum(tmp_path):
    write_outputs(tmp_path / "run", _run())
    chunk = _chunk_file(tmp_path / "run")
    data = bytearray(chunk.read_bytes())
    data[len(data) // 2] ^= 0xFF
    chunk.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="corrupted"):
        read_outputs(tmp_path / "run")


def test_missing_chunk_gives_clear_error(tmp_path):
    write_outputs(tmp_path / "run", _run())
    _chunk_file(tmp_path / "run").unlink()
    with pytest.raises(ValueError, match="chunk\\(s\\) missing"):
        read_outputs(tmp_path / "run")


def test_corrupted_metadata_gives_clear_error(tmp_path):
    write_outputs(tmp_path / "run", _run())
    (tmp_path / "run" / "zarr.json").write_text("{not json")
    with pytest.raises(ValueError, match="unreadable or corrupted"):
        read_outputs(tmp_path / "run")


def test_not_a_store(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_outputs(tmp_path / "missing")
    zarr.open_group(str(tmp_path / "other"), mode="w", zarr_format=3)
    with pytest.raises(ValueError, match="not an fdbench outputs store"):
        read_outputs(tmp_path / "other")


@pytest.mark.parametrize(
    "relative",
    [
        "splits/0002/mcd_logits/zarr.json",
        "splits/0002/features/zarr.json",
        "meta_arrays/fc_weight/zarr.json",
    ],
)
def test_deleted_array_metadata_is_an_error_not_a_missing_array(tmp_path, relative):
    # Without the array's metadata zarr no longer lists the array; the store must not read back
    # as if the optional array (MC logits, features, fc weights) had never been written.
    write_outputs(tmp_path / "run", _run())
    (tmp_path / "run" / relative).unlink()
    with pytest.raises(ValueError, match="is corrupted"):
        read_outputs(tmp_path / "run")


def test_lazy_read_detects_missing_chunk_at_open(tmp_path):
    # A deleted chunk would read back as the fill value (zeros) when sliced.
    write_outputs(tmp_path / "run", _run())
    _chunk_file(tmp_path / "run").unlink()
    with pytest.raises(ValueError, match="chunk\\(s\\) missing"):
        read_outputs(tmp_path / "run", lazy=True)


_KILLED_WRITER = """
import os, sys
import numpy as np
import zarr
from fdbench.outputs import RunOutputs, SplitOutputs, write_outputs

calls = {"n": 0}
original = zarr.Array.__setitem__

def dying_setitem(self, key, value):
    calls["n"] += 1
    if calls["n"] == 3:
        os._exit(9)  # the process dies: no exception handler, no cleanup
    return original(self, key, value)

zarr.Array.__setitem__ = dying_setitem
rng = np.random.default_rng(0)
split = SplitOutputs(labels=np.zeros(50, np.int64), logits=rng.normal(size=(50, 3)),
                     mcd_logits=rng.normal(size=(50, 4, 3)), features=rng.normal(size=(50, 2)))
write_outputs(sys.argv[1], RunOutputs(splits={"iid": split}, meta={}))
"""


@pytest.mark.parametrize("existing", [False, True])
def test_killed_writer_leaves_previous_store_or_nothing(tmp_path, existing):
    import subprocess
    import sys
    from pathlib import Path

    target = tmp_path / "run"
    if existing:
        old = _run(seed=1)
        write_outputs(target, old)
    src = Path(__file__).resolve().parents[2] / "src"
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", _KILLED_WRITER, str(target)], env=env, capture_output=True
    )
    assert done.returncode == 9, done.stderr
    if existing:
        _assert_same(old, read_outputs(target))
    else:
        assert not target.exists()
    # only the abandoned temporary directory is left beside the target
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "run"]
    assert len(leftovers) == 1 and leftovers[0].startswith(".run.tmp-")


def test_per_class_heads_round_trip_and_must_match_the_classes(tmp_path):
    rng = np.random.default_rng(0)
    alpha = 1.0 + rng.random((6, 3))
    split = SplitOutputs(labels=np.arange(6, dtype=np.int64) % 3, logits=rng.normal(size=(6, 3)),
                         heads={"edl_alpha": alpha, "devries": rng.random(6)})  # fmt: skip
    write_outputs(tmp_path / "run", RunOutputs(splits={"iid": split}))
    back = read_outputs(tmp_path / "run").splits["iid"]
    assert back.heads["edl_alpha"].tobytes() == alpha.tobytes()
    split.heads["edl_alpha"] = alpha[:, :2]
    with pytest.raises(ValueError, match=r"must have shape \(6,\) or \(6, 3\)"):
        validate_split("iid", split)
