"""Tests of the atomic file and table writers."""

import pandas as pd
import pytest

from fdbench.core.io import atomic_path, verify_file, write_table, write_text


def test_failed_write_keeps_previous_file(tmp_path):
    target = write_text(tmp_path / "results.csv", "old")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("interrupted")
    assert verify_file(target).read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".fdbench-written.json",
        "results.csv",
        "results.csv.sha256",
    ]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_table_round_trip(tmp_path, suffix):
    table = pd.DataFrame({"csf": ["MSR", "PE"], "value": [0.125, 0.5]})
    path = write_table(table, tmp_path / f"r{suffix}")
    back = pd.read_csv(path) if suffix == ".csv" else pd.read_parquet(path)
    pd.testing.assert_frame_equal(back, table)


def test_unknown_suffix_is_rejected(tmp_path):
    with pytest.raises(ValueError, match=r"\.csv or \.parquet"):
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "r.txt")
