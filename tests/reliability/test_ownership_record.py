"""Point 1 of issue #34, the edges of the ownership record: a folder written before the record
existed, and an outputs store (recognised by its own checksum file)."""

from __future__ import annotations

import pandas as pd
import pytest

from fdbench.core.io import ForeignFileError, check_replaceable, overwrite_foreign, write_table
from fdbench.core.written import RECORD_NAME
from fdbench.outputs import write_outputs

from .conftest import small_run


def test_a_folder_without_the_record_needs_force_once(tmp_path):
    # a results table of an earlier version: its checksum file is there, the record is not
    path = write_table(pd.DataFrame({"value": [1.0]}), tmp_path / "results.csv")
    (tmp_path / RECORD_NAME).unlink()
    with pytest.raises(ForeignFileError, match="--force"):
        check_replaceable(path)
    with overwrite_foreign():
        write_table(pd.DataFrame({"value": [2.0]}), path)
    check_replaceable(path)  # written (and recorded) by fdbench now: no --force needed again


def test_an_outputs_store_is_recognised_by_its_checksums(tmp_path):
    store = tmp_path / "outputs.zarr"
    write_outputs(store, small_run())
    check_replaceable(store)
    (store / "checksums.sha256").unlink()
    with pytest.raises(ForeignFileError):
        check_replaceable(store)
