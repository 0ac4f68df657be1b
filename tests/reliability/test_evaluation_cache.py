"""Point 4 of issue #34 for the benchmark's evaluation caches: an evaluation job's
``scores.npz`` and ``results.parquet`` are committed as one unit, and resume recomputes a pair
that was not written together instead of reusing it."""

from __future__ import annotations

import errno
import logging
import os

import pytest

from fdbench.core.io import write_bytes
from fdbench.core.runner import run_jobs
from fdbench.jobs import benchmark
from fdbench.jobs.benchmark import _evaluation_jobs, evaluate_runs
from fdbench.outputs import write_outputs

from .conftest import digest, small_run


@pytest.fixture
def evaluated(tmp_path):
    """One evaluation job run once (its folder's digests), and a second store whose evaluation
    differs from it."""
    store = tmp_path / "runs" / "outputs.zarr"
    write_outputs(store, small_run())
    other = tmp_path / "runs" / "other.zarr"
    write_outputs(other, small_run(seed=1))
    folder = tmp_path / "evaluation"
    jobs = _evaluation_jobs("eval:tiny/ce/0", [[store]], folder)
    assert [job.key for job in run_jobs(jobs)] == ["eval:tiny/ce/0"]
    return jobs, folder, other, _digests(folder)


def _digests(folder):
    return {p.name: digest(p) for p in folder.iterdir()}


def _files_of(digests):
    """The digests of the files themselves, without the record of written files (which keeps
    the digests of earlier writes)."""
    return {name: d for name, d in digests.items() if name != ".fdbench-written.json"}


def _files(folder):
    return _files_of(_digests(folder))


def test_a_failing_second_write_commits_neither_file(evaluated, monkeypatch):
    # the results table fails to write (a full disk, a file-size limit) after the scores were
    # written: neither file is replaced, no temporary file is left
    jobs, folder, other, files = evaluated

    def full_disk(*args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(benchmark, "write_table_file", full_disk)
    with pytest.raises(OSError, match="No space left"):
        evaluate_runs([other], folder)
    assert _digests(folder) == files
    fresh = folder.parent / "fresh"
    with pytest.raises(OSError, match="No space left"):
        evaluate_runs([other], fresh)
    assert list(fresh.iterdir()) == []
    monkeypatch.undo()
    assert run_jobs(jobs) == []


def test_a_writer_killed_between_the_renames_is_recomputed_on_resume(
    evaluated, monkeypatch, caplog
):
    # the process dies after the new scores.npz is in place, before the new results.parquet:
    # each file still matches its checksum, but they come from two evaluations
    jobs, folder, other, files = evaluated
    replace = os.replace

    def killed_before_the_results(src, dst):
        if str(dst) == str(folder / "results.parquet"):
            raise KeyboardInterrupt
        replace(src, dst)

    monkeypatch.setattr(os, "replace", killed_before_the_results)
    with pytest.raises(KeyboardInterrupt):
        evaluate_runs([other], folder)
    monkeypatch.undo()
    assert digest(folder / "scores.npz") != files["scores.npz"]
    assert digest(folder / "results.parquet") == files["results.parquet"]
    with caplog.at_level(logging.WARNING, logger="fdbench"):
        assert [job.key for job in run_jobs(jobs)] == ["eval:tiny/ce/0"]
    messages = [r.getMessage() for r in caplog.records]
    assert any("not written together" in m and "scores.npz" in m for m in messages), messages
    # recomputed bit for bit
    assert _files(folder) == _files_of(files)
    assert run_jobs(jobs) == []


def test_a_pair_written_apart_is_recomputed_on_resume(evaluated, tmp_path, caplog):
    # another evaluation's scores.npz, written by fdbench on its own (checksum and record
    # intact) beside this evaluation's results: a mix that every checksum accepts
    jobs, folder, other, files = evaluated
    elsewhere = tmp_path / "elsewhere"
    evaluate_runs([other], elsewhere)
    write_bytes(folder / "scores.npz", (elsewhere / "scores.npz").read_bytes())
    with caplog.at_level(logging.WARNING, logger="fdbench"):
        assert [job.key for job in run_jobs(jobs)] == ["eval:tiny/ce/0"]
    assert any("not written together" in r.getMessage() for r in caplog.records)
    assert _files(folder) == _files_of(files)
