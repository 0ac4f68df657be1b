"""The command line around the stages: --version, argument checks before any work, an empty
report folder, Ctrl-C, and the compact output of ``fdbench evaluate`` on many studies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fdbench import __version__
from tests._cli import ROOT, run_cli

from .test_evaluate import synthetic_npz


def _one_error_line(done: subprocess.CompletedProcess, *needles: str) -> None:
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("fdbench: error: ") and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr
    for needle in needles:
        assert needle in done.stderr


def test_version_prints_version_and_commit():
    done = run_cli("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"fdbench {__version__} (")
    commit = done.stdout.strip().split("(")[1].rstrip(")")
    assert commit  # the git describe of this checkout, or "unknown" outside one
    if (ROOT / ".git").exists():
        assert commit != "unknown"


def test_report_on_a_folder_without_results_is_one_error(tmp_path):
    (tmp_path / "notes.txt").write_text("not results")
    done = run_cli("report", str(tmp_path))
    _one_error_line(done, "holds no results", "results.parquet")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_out_with_a_wrong_suffix_is_refused_before_any_table(tmp_path):
    path = synthetic_npz(tmp_path / "outputs.npz")
    done = run_cli("evaluate", str(path), "--out", str(tmp_path / "results.xlsx"))
    _one_error_line(done, "--out", "results.xlsx")
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--protocol", "kim"), "--protocol must be failure_detection or unknown_detection"),
        (("--binary-fpr", "1.5"), "--binary-fpr must be in [0, 1]"),
        (("--confidence", "MSR"), "--confidence selects columns of a table"),
    ],
)
def test_evaluate_arguments_are_checked_before_any_work(tmp_path, args, needle):
    path = synthetic_npz(tmp_path / "outputs.npz")
    done = run_cli("evaluate", str(path), *args)
    _one_error_line(done, needle)
    assert done.stdout == ""


def test_benchmark_out_that_is_a_file_is_refused_at_once(tmp_path):
    out = tmp_path / "results.xlsx"
    out.write_text("a spreadsheet")
    start = time.perf_counter()
    done = run_cli("benchmark", "--quick", "--out", str(out))
    _one_error_line(done, "--out", "is a file, expected a folder")
    assert time.perf_counter() - start < 60 and out.read_text() == "a spreadsheet"


INTERRUPTED = """
import multiprocessing
import sys
import time
from pathlib import Path

from fdbench import cli
from fdbench.jobs import benchmark
from fdbench.core.runner import Job, run_jobs

WORKERS = []
HELD = []


def sleeping_benchmark(config, run_dir, *, progress=None, **kwargs):
    progress("training", 1, 3)
    # a semaphore of the spawn context, as worker pools hold: left behind by the exit, the
    # resource tracker would warn about it
    HELD.append(multiprocessing.get_context("spawn").Semaphore())
    jobs = [Job(f"sleep{i}", time.sleep, (120,), Path(run_dir) / f"never{i}") for i in (0, 1)]
    print("running", flush=True)
    run_jobs(jobs, workers=WORKERS[0], on_done=lambda job: None)


if __name__ == "__main__":
    WORKERS.append(int(sys.argv[2]) or None)
    benchmark.run_benchmark = sleeping_benchmark
    sys.argv = ["fdbench", "benchmark", "--quick", "--no-report", "--out", sys.argv[1]]
    cli.main()
"""


@pytest.mark.parametrize("workers", [0, 2])
def test_ctrl_c_prints_one_line_and_exits_130(tmp_path, workers):
    """Ctrl-C at a terminal sends SIGINT to the whole process group, dask workers included."""
    script = tmp_path / "interrupted.py"
    script.write_text(INTERRUPTED)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "200"}
    env.pop("FDBENCH_DEBUG", None)
    process = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path / "run"), str(workers)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        # where stdout is no terminal, progress lines ("training: 1 of 3 done, ...") come first
        lines = iter(process.stdout.readline, "")
        assert any(line.strip() == "running" for line in lines)
        time.sleep(20 if workers else 1)  # the cluster starts and runs the jobs
        os.killpg(process.pid, signal.SIGINT)
        _, stderr = process.communicate(timeout=90)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130
    assert stderr == (
        "fdbench: interrupted: 1 of 3 training jobs finished; run the same command again "
        "to resume\n"
    )


def _many_studies(path: Path, n_studies: int) -> Path:
    rng = np.random.default_rng(3)
    k, n = 4, 40
    names = ["iid", *(f"new_class/set{i}" for i in range(n_studies - 1))]
    study = np.repeat(names, n)
    labels = rng.integers(0, k, study.size)
    labels[study != "iid"] = -1
    logits = rng.normal(size=(study.size, k)) + 2.0 * np.eye(k)[np.maximum(labels, 0)]
    np.savez(path, logits=logits, labels=labels, study=study)
    return path


def test_evaluate_many_studies_prints_one_table_and_writes_the_rest(tmp_path):
    path = _many_studies(tmp_path / "outputs.npz", 20)
    out = tmp_path / "results.csv"
    done = run_cli("evaluate", str(path), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("(n = ") == 0  # no per-study table on the console
    assert "20 studies: iid and the mean over the 19 others" in done.stdout
    folder = tmp_path / "results_tables"
    files = sorted(p.name for p in folder.glob("*.csv"))
    assert len(files) == 20 and "iid.csv" in files and "new_class__set7.csv" in files
    results = pd.read_csv(out)
    wide = pd.read_csv(folder / "new_class__set7.csv", index_col="csf")
    row = results[(results.study == "new_class/set7") & (results.metric == "augrc")]
    expected = row.set_index("csf")["value"]
    pd.testing.assert_series_equal(wide.loc[expected.index, "augrc"], expected, check_names=False)


def test_evaluate_few_studies_still_prints_every_table(tmp_path):
    path = _many_studies(tmp_path / "outputs.npz", 3)
    done = run_cli("evaluate", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("(n = ") == 3
    assert not (tmp_path / "outputs_tables").exists()


def test_evaluate_on_a_plain_folder_says_what_it_expected(tmp_path):
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "notes.txt").write_text("no outputs here")
    done = run_cli("evaluate", str(folder))
    _one_error_line(done, "neither an fdbench outputs store", "zarr.json", "raw_logits.npz")
    assert "notes.txt" in done.stderr and "corrupted" not in done.stderr
