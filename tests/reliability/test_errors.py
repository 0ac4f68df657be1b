"""Every user error is one line and exit status 2, before the work starts (issue #25, point 4)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np
import pytest

from fdbench.core.errors import UserError, is_user_error, one_line
from fdbench.jobs.plan import load_config

from ._cli import assert_one_line_error, digests, outputs_npz, run_cli

ROOT_USER = hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture
def npz(tmp_path):
    return outputs_npz(tmp_path / "outputs.npz")


def test_out_whose_parent_is_a_file_is_refused_before_any_work(tmp_path, npz):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("the user's notes\n")
    before = digests(blocker, npz)
    result = run_cli("evaluate", str(npz), "--out", str(blocker / "results.csv"))
    assert_one_line_error(result, "--out", "notes.txt", "is a file")
    assert result.stdout == ""  # nothing was evaluated (the tables print before writing)
    assert digests(blocker, npz) == before


@pytest.mark.parametrize("name", ["results.xlsx", "results", "results.csv.gz"])
def test_out_with_an_unknown_format_is_refused_before_any_work(tmp_path, npz, name):
    result = run_cli("evaluate", str(npz), "--out", str(tmp_path / name))
    assert_one_line_error(result, "--out", name, ".csv")
    assert result.stdout == ""
    assert not (tmp_path / name).exists()


def test_out_that_is_a_folder_is_refused(tmp_path, npz):
    folder = tmp_path / "results.csv"
    folder.mkdir()
    (folder / "keep.txt").write_text("keep")
    before = digests(folder)
    result = run_cli("evaluate", str(npz), "--out", str(folder))
    assert_one_line_error(result, "--out", "is a folder")
    assert digests(folder) == before


@pytest.mark.skipif(ROOT_USER, reason="root writes into read-only folders")
def test_out_in_a_read_only_folder_is_refused(tmp_path, npz):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        result = run_cli("evaluate", str(npz), "--out", str(folder / "results.csv"))
    finally:
        folder.chmod(0o755)
    assert_one_line_error(result, "--out", "locked", "not writable")


@pytest.mark.skipif(ROOT_USER, reason="root reads unreadable files")
def test_an_unreadable_input_is_one_line(tmp_path, npz):
    npz.chmod(0o000)
    try:
        result = run_cli("evaluate", str(npz))
    finally:
        npz.chmod(0o644)
    assert_one_line_error(result, "outputs.npz")


def test_an_input_that_is_a_folder_is_one_line(tmp_path):
    folder = tmp_path / "table.csv"
    folder.mkdir()
    result = run_cli("evaluate", str(folder))
    assert_one_line_error(result, "table.csv")


def test_a_full_disk_is_one_line(npz):
    # /dev/full fails every write with ENOSPC, as a full disk does
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    with open("/dev/full", "w") as full:
        env_result = _run_to(full, npz)
    assert env_result.returncode == 2
    assert "Traceback" not in env_result.stderr
    lines = [line for line in env_result.stderr.splitlines() if line.strip()]
    assert lines == ["fdbench: error: No space left on device"]


def _run_to(stdout, npz):
    import subprocess
    import sys

    from ._cli import ROOT

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("FDBENCH_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "fdbench", "evaluate", str(npz)],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        timeout=300,
    )


def test_benchmark_out_that_is_a_file_is_refused_before_training(tmp_path):
    target = tmp_path / "run"
    target.write_text("not a folder")
    before = digests(target)
    result = run_cli("benchmark", "--quick", "--out", str(target), "--no-report")
    assert_one_line_error(result, "--out", "is a file")
    assert digests(target) == before


@pytest.mark.parametrize(
    ("name", "good", "array"),
    [
        ("mcd_logits", (120, 3, 4), (119, 3, 4)),
        ("mcd_logits", (120, 3, 4), (120, 3, 5)),
        ("features", (120, 8), (60, 8)),
        ("head_devries", (120,), (121,)),
        ("head_devries", (120,), (120, 2)),
    ],
)
def test_optional_arrays_of_the_wrong_shape_are_one_line(tmp_path, name, good, array):
    path = outputs_npz(tmp_path / "outputs.npz", **{name: np.zeros(array)})
    before = digests(path)
    result = run_cli("evaluate", str(path))
    assert_one_line_error(result, "outputs.npz", name, str(array))
    assert digests(path) == before


TINY = """\
name: tiny
data: {builder: fashion_mnist_experiments, args: {seed: 0, tiny: true}}
architecture: {name: convnet, dropout: 0.3, options: {width: 8, feature_dim: 16}}
training: {epochs: 1, batch_size: 128, threads: 1, augment: false}
inference: {mc_samples: 2, batch_size: 256, max_train_samples: 300}
methods:
  - {name: ce, kind: ce, seeds: [0]}
analysis: {n_bootstrap: 5}
"""


def test_duplicate_yaml_keys_are_refused_naming_key_and_lines(tmp_path):
    config = tmp_path / "dup.yaml"
    config.write_text(TINY.replace("analysis:", "name: other\nanalysis:"))
    result = run_cli("benchmark", str(config), "--out", str(tmp_path / "run"))
    assert_one_line_error(result, "dup.yaml", "duplicate key 'name'", "first on line 1", "line 8")
    assert not (tmp_path / "run").exists()


def test_nested_duplicate_keys_are_refused(tmp_path):
    config = tmp_path / "dup.yaml"
    config.write_text(TINY.replace("training: {epochs: 1,", "training: {epochs: 1, epochs: 2,"))
    with pytest.raises(ValueError, match="duplicate key 'epochs'"):
        load_config(config)


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ("batch_size: 128,", "batch_size: 128, lr: .inf,", "training.lr"),
        ("batch_size: 128,", "batch_size: 128, lr: .nan,", "training.lr"),
        ("batch_size: 128,", "batch_size: 128, lr: -0.1,", "training.lr"),
        ("seeds: [0]}", "seeds: [0], params: {lr: -.inf}}", "methods.0.params.lr"),
        ("args: {seed: 0,", "args: {seed: 0, scale: .nan,", "data.args.scale"),
    ],
)
def test_config_values_that_cannot_work_are_refused_naming_the_key(tmp_path, old, new, key):
    config = tmp_path / "bad.yaml"
    config.write_text(TINY.replace(old, new))
    result = run_cli("benchmark", str(config), "--out", str(tmp_path / "run"))
    assert_one_line_error(result, "bad.yaml", key)
    assert not (tmp_path / "run").exists()


def test_corrupt_checkpoint_in_a_dask_worker_is_one_line(tmp_path):
    """A job on a dask worker resumes from a checkpoint that is not a PyTorch file although
    its recorded checksum matches (written so by another program through fdbench's writer):
    its ValueError crosses the process boundary and is printed as one line naming the file (no
    worker log, no traceback); the file is left as it was."""
    pytest.importorskip("torch")
    pytest.importorskip("distributed")
    from fdbench.core.io import atomic_path, claim_run_folder

    config = tmp_path / "tiny.yaml"
    config.write_text(TINY)
    claim_run_folder(tmp_path / "run")
    checkpoint = tmp_path / "run" / "runs" / "fashion_mnist" / "ce" / "seed0" / "model.pt"
    checkpoint.parent.mkdir(parents=True)
    with atomic_path(checkpoint) as tmp:
        tmp.write_bytes(b"PK\x03\x04 a truncated zip")
    before = digests(checkpoint)
    result = run_cli(
        "benchmark", str(config), "--out", str(tmp_path / "run"), "--workers", "1", "--no-report"
    )
    assert_one_line_error(result, "model.pt", "cannot be read")
    assert digests(checkpoint) == before


def test_which_errors_are_the_users():
    assert is_user_error(UserError("x")) and isinstance(UserError("x"), ValueError)
    for error in (
        ValueError("x"),
        TypeError("x"),
        OSError(errno.ENOSPC, "No space left on device"),
        OSError(errno.EROFS, "Read-only file system", "a.csv"),
        IsADirectoryError(errno.EISDIR, "Is a directory", "out"),
        PermissionError(errno.EACCES, "Permission denied", "x"),
    ):
        assert is_user_error(error), error
    for bug in (IndexError("x"), KeyError("x"), AttributeError("x"), RuntimeError("x")):
        assert not is_user_error(bug), bug


def test_one_line_names_the_file_of_an_os_error():
    assert one_line(OSError(errno.EROFS, "Read-only file system", "/mnt/r/a.csv")) == (
        "Read-only file system: '/mnt/r/a.csv'"
    )
    assert one_line(OSError(errno.EXDEV, "Invalid cross-device link", "a", None, "b")) == (
        "Invalid cross-device link: 'a' -> 'b'"
    )
    assert one_line(ValueError("first\nsecond")) == "first"
    assert one_line(ValueError()) == "ValueError"


def test_a_bug_keeps_its_traceback(tmp_path):
    # an error that is not the user's (here an IndexError raised inside fdbench) is not hidden
    import subprocess
    import sys

    from ._cli import ROOT

    code = (
        "import sys\n"
        "import fdbench.cli as c, fdbench.report.console as console\n"
        "def boom(*a, **k):\n    raise IndexError('a bug')\n"
        "console.print_results = boom\n"
        f"sys.argv = ['fdbench', 'evaluate', {str(outputs_npz(tmp_path / 'o.npz'))!r}]\n"
        "c.main()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("FDBENCH_DEBUG", None)
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 1
    assert "Traceback" in result.stderr and "IndexError: a bug" in result.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--bootstrap", "many"], "'--bootstrap'"),
        (["--no-such-option"], "--no-such-option"),
        (["--protocol"], "--protocol"),
    ],
)
def test_bad_options_are_one_line(npz, args, needle):
    result = run_cli("evaluate", str(npz), *args)
    assert_one_line_error(result, needle)
    assert result.stdout == ""


def test_a_missing_argument_is_one_line():
    assert_one_line_error(run_cli("evaluate"), "Missing argument")
