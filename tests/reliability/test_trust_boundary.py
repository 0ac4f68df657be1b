"""Every surface as trustworthy as ``evaluate`` (issue #34): each test builds the hostile input
or the fault itself (a hand-made sidecar, a config naming ``os:system``, a name ``..``, a second
write failing under a file-size limit, a writer killed between its renames, data edited between
runs, patterns matching nothing, a broken plug-in, the core install without PyTorch, a flipped
byte in a Parquet page) and checks the exit status, the one line naming the culprit, and that
the user's files are left byte-identical."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fdbench.config.schema import AnalysisConfig, TrainingConfig
from fdbench.core.callables import import_callable
from fdbench.core.io import (
    ForeignFileError,
    IntegrityError,
    read_parquet,
    read_table,
    write_table,
    write_text,
)
from fdbench.core.names import check_path_name, printable
from fdbench.core.provenance import PROVENANCE_FILE, provenance_record
from fdbench.core.written import RECORD_NAME
from fdbench.data.fingerprints import experiment_fingerprints
from fdbench.jobs.report_inputs import check_analysis_selection
from fdbench.jobs.run_folder import check_inputs_unchanged
from fdbench.report.console import write_study_tables

from ._cli import ROOT, assert_one_line_error, digests, outputs_npz, run_cli

QUICK = Path(__file__).resolve().parents[2] / "src" / "fdbench" / "configs"


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "200", **extra}
    env.pop("FDBENCH_DEBUG", None)
    env.pop("FDBENCH_TRUST_CONFIG_CODE", None)
    env.update(extra)
    return env


def _fdbench(*args: str, env: dict[str, str], cwd: Path | None = None, **kwargs):
    return subprocess.run(
        [sys.executable, "-m", "fdbench", *args],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=600, **kwargs,
    )  # fmt: skip


# --- 1. ownership is a mark only fdbench makes ------------------------------------------------


def test_a_hand_made_sidecar_does_not_make_a_users_file_fdbenchs(tmp_path):
    """``sha256sum results.csv > results.csv.sha256`` beside the user's own table: ``--out``
    still refuses to replace it without ``--force``."""
    outputs = outputs_npz(tmp_path / "o.npz")
    mine = tmp_path / "results.csv"
    mine.write_text("my,own\n1,2\n")
    digest = hashlib.sha256(mine.read_bytes()).hexdigest()
    (tmp_path / "results.csv.sha256").write_text(f"{digest}  results.csv\n")
    before = digests(tmp_path)
    done = run_cli("evaluate", str(outputs), "--out", str(mine))
    assert_one_line_error(done, str(mine), "--force")
    assert digests(tmp_path) == before
    with pytest.raises(ForeignFileError):
        write_table(pd.DataFrame({"a": [1]}), mine)
    assert digests(tmp_path) == before


def test_a_hand_made_run_marker_does_not_make_a_users_folder_a_run_folder(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "thesis.tex").write_text("chapter 1")
    marker = folder / "fdbench-run.json"
    marker.write_text('{"written_by": "fdbench"}\n')
    digest = hashlib.sha256(marker.read_bytes()).hexdigest()
    (folder / "fdbench-run.json.sha256").write_text(f"{digest}  fdbench-run.json\n")
    before = digests(folder)
    done = run_cli("benchmark", "--quick", "--out", str(folder))
    assert_one_line_error(done, str(folder), "--force")
    assert digests(folder) == before


def test_fdbench_replaces_what_it_wrote_and_records_it(tmp_path):
    path = tmp_path / "t.parquet"
    write_table(pd.DataFrame({"a": [1.0]}), path)
    write_table(pd.DataFrame({"a": [2.0]}), path)
    assert read_table(path)["a"].tolist() == [2.0]
    record = json.loads((tmp_path / RECORD_NAME).read_text())
    assert hashlib.sha256(path.read_bytes()).hexdigest() in record["files"]["t.parquet"]


# --- 2. a config is data unless the user says otherwise --------------------------------------


def _config_with(tmp_path: Path, **replace: str) -> Path:
    text = (QUICK / "fashion_mnist_quick.yaml").read_text()
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new)
    config = tmp_path / "hostile.yaml"
    config.write_text(text)
    return config


BUILDER = "  builder: fashion_mnist_experiments\n  args: {seed: 0, quick: true}\n"
ARCHITECTURE = "  name: convnet\n"


OS_SYSTEM = {
    "data.builder": {BUILDER: '  builder: "os:system"\n  args: {command: "touch PWNED"}\n'},
    "architecture.factory": {
        ARCHITECTURE: '  factory: "subprocess:getoutput"\n',
        "  dropout_placement: fc\n": "",
    },
}


@pytest.mark.parametrize("trusted", [False, True])
@pytest.mark.parametrize("key", list(OS_SYSTEM))
def test_a_config_naming_os_system_runs_nothing(tmp_path, key, trusted):
    """Neither without nor with ``--trust-config-code``: the standard library's process
    functions are never run from a config."""
    config = _config_with(tmp_path, **OS_SYSTEM[key])
    trust = ("--trust-config-code",) if trusted else ()
    done = _fdbench("benchmark", str(config), "--out", "run", *trust, env=_env(), cwd=tmp_path)
    assert_one_line_error(done, key, "standard library")
    assert not (tmp_path / "PWNED").exists()
    assert not (tmp_path / "run").exists()


def test_user_code_in_a_config_needs_the_opt_in(tmp_path):
    """A module of the user's runs only with the opt-in; without it, it is not even imported
    (its import side effect does not happen)."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "r34data.py").write_text(
        "import os\nimport pathlib\npathlib.Path('IMPORTED').touch()\n"
        "def experiments(**kwargs):\n    return 7\n"
    )
    config = _config_with(tmp_path, **{BUILDER: '  builder: "r34data:experiments"\n  args: {}\n'})
    env = _env(PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(site)]))
    done = _fdbench("benchmark", str(config), "--out", "run", env=env, cwd=tmp_path)
    assert_one_line_error(done, "data.builder", "--trust-config-code")
    assert not (tmp_path / "IMPORTED").exists()
    # with the opt-in the module is imported, but reaching os.system through it is refused
    config = _config_with(tmp_path, **{BUILDER: '  builder: "r34data:os.system"\n  args: {}\n'})
    trusted = {**env, "FDBENCH_TRUST_CONFIG_CODE": "1"}
    done = _fdbench("benchmark", str(config), "--out", "run", env=trusted, cwd=tmp_path)
    assert_one_line_error(done, "data.builder", "posix.system", "standard library")


def test_import_callable_refuses_without_opt_in_and_the_standard_library(monkeypatch):
    monkeypatch.delenv("FDBENCH_TRUST_CONFIG_CODE", raising=False)
    with pytest.raises(ValueError, match="--trust-config-code"):
        import_callable("numpy:zeros", "architecture.factory")
    monkeypatch.setenv("FDBENCH_TRUST_CONFIG_CODE", "1")
    assert import_callable("numpy:zeros", "architecture.factory") is np.zeros
    for path in ("os:system", "subprocess:getoutput", "builtins:eval", f"{__name__}:os.system"):
        with pytest.raises(ValueError, match="standard library"):
            import_callable(path, "architecture.factory")


# --- 3. names are data ------------------------------------------------------------------------


def test_a_zoo_named_dot_dot_never_writes_into_the_working_folder(tmp_path):
    work = tmp_path / "work"
    (work / "runs").mkdir(parents=True)
    (work / "notes.txt").write_text("mine")
    (work / "zoo.yaml").write_text("name: ..\nzoo: somewhere\n")
    before = digests(work)
    done = run_cli("zoo", "zoo.yaml", cwd=work)
    assert_one_line_error(done, "name", "'..'")
    assert digests(work) == before
    assert sorted(p.name for p in work.iterdir()) == ["notes.txt", "runs", "zoo.yaml"]


@pytest.mark.parametrize("name", ["..", ".", "a/b", "a\\b", "x\x1b[2J", "", " a", "a" * 300])
def test_names_that_cannot_be_one_path_component_are_refused(name):
    with pytest.raises(ValueError, match="run name"):
        check_path_name(name, "run name")


def test_an_experiment_a_builder_names_dot_dot_is_refused():
    """A user's data builder returning an experiment named ``..`` (its runs would be written to
    ``runs/../<method>``) is refused when the experiment is made."""
    from fdbench.data.types import Experiment, ImageDataset

    data = ImageDataset("d", np.zeros((2, 4, 4, 1), np.uint8), np.array([0, 1]), ("a", "b"))
    with pytest.raises(ValueError, match=r"experiment name '\.\.'"):
        Experiment("..", ("a", "b"), data, data, ())


def test_names_that_become_one_file_are_refused(tmp_path):
    """Studies ``s/1`` and ``s.1`` would both be exported as ``s-1.csv`` by the report."""
    rows = [
        {"dataset": "d", "method": "m", "seed": 0, "csf": csf, "study": study,
         "metric": "aurc", "value": 0.1, "n_samples": 100}
        for study in ("s/1", "s.1") for csf in ("MSR", "MLS")
    ]  # fmt: skip
    folder = tmp_path / "f"
    folder.mkdir()
    pd.DataFrame(rows).to_csv(folder / "results.csv", index=False)
    before = digests(folder)
    assert_one_line_error(run_cli("report", str(folder)), "'s/1'", "'s.1'")
    assert digests(folder) == before
    table = pd.DataFrame(rows).assign(study=lambda t: t["study"].replace({"s.1": "s__1"}))
    with pytest.raises(ValueError, match="same file"):
        write_study_tables(table, tmp_path / "tables")
    assert not (tmp_path / "tables").exists()


def test_control_characters_in_names_are_escaped_on_the_terminal(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("label,prediction,M\x1b[2JSR\n0,0,0.9\n1,0,0.2\n0,1,0.3\n1,1,0.8\n")
    done = run_cli("evaluate", str(table))
    assert done.returncode == 0, done.stderr
    assert "\x1b[2J" not in done.stdout and "\\x1b[2J" in done.stdout
    assert printable("a\x1b]0;t\x07\u202eb") == "a\\x1b]0;t\\x07\\u202eb"


# --- 4. writes that belong together commit together ------------------------------------------


def _limit_file_size(limit: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_a_failing_second_write_leaves_the_previous_pair(tmp_path):
    """``ulimit -f``: the curves (larger than the results) cannot be written; the results of
    the new evaluation are not put beside the old curves, and the report reads the old pair."""
    folder = tmp_path / "f"
    first = outputs_npz(tmp_path / "a.npz")
    assert run_cli("evaluate", str(first), "--out", str(folder / "results.parquet")).returncode == 0
    sizes = {p.name: p.stat().st_size for p in folder.glob("*.parquet")}
    assert sizes["results.parquet"] < sizes["curves.parquet"]
    before = digests(folder)
    second = tmp_path / "b.npz"
    rng = np.random.default_rng(5)
    np.savez(second, logits=rng.normal(size=(120, 4)), labels=rng.integers(0, 4, 120))
    limit = (sizes["results.parquet"] + sizes["curves.parquet"]) // 2
    done = _fdbench(
        "evaluate", str(second), "--out", str(folder / "results.parquet"),
        env=_env(PYTHONDONTWRITEBYTECODE="1"), preexec_fn=_limit_file_size(limit),
    )  # fmt: skip
    assert_one_line_error(done, "File too large")
    assert digests(folder) == before
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]
    assert run_cli("report", str(folder)).returncode == 0


KILL_BETWEEN_RENAMES = """
import os, runpy, sys
replace = os.replace
def dying_replace(src, dst, *args, **kwargs):
    replace(src, dst, *args, **kwargs)
    if str(dst).endswith("results.parquet"):
        os._exit(9)
os.replace = dying_replace
sys.argv = ["fdbench", *sys.argv[1:]]
runpy.run_module("fdbench", run_name="__main__")
"""


def test_a_writer_killed_between_its_renames_leaves_no_readable_mix(tmp_path):
    """Killed after renaming the new results and before the new curves: ``report`` refuses
    the pair (one evaluation's results beside another's curves), exit status 2."""
    folder = tmp_path / "f"
    first = outputs_npz(tmp_path / "a.npz")
    assert run_cli("evaluate", str(first), "--out", str(folder / "results.parquet")).returncode == 0
    rng = np.random.default_rng(7)
    second = tmp_path / "b.npz"
    np.savez(second, logits=rng.normal(size=(120, 4)), labels=rng.integers(0, 4, 120))
    killed = subprocess.run(
        [sys.executable, "-c", KILL_BETWEEN_RENAMES, "evaluate", str(second),
         "--out", str(folder / "results.parquet")],
        capture_output=True, text=True, env=_env(), timeout=600,
    )  # fmt: skip
    assert killed.returncode == 9, killed.stderr
    assert not (folder / "report.html").exists()
    done = run_cli("report", str(folder))
    assert_one_line_error(done, "results.parquet", "curves.parquet", "not from the same write")
    assert not (folder / "report.html").exists()
    with pytest.raises(IntegrityError, match="not from the same write"):
        read_table(folder / "curves.parquet")


# --- 5. resume describes the data on disk -----------------------------------------------------


def test_resume_refuses_a_folder_dataset_edited_between_runs(tmp_path):
    """Half of a folder dataset's shift images deleted between two runs: the fingerprints
    of the data on disk differ from those the run folder recorded, and the run refuses to
    resume (instead of returning the old numbers)."""
    from PIL import Image

    from fdbench.data.suites.custom import folder_experiments

    root = tmp_path / "pets"
    rng = np.random.default_rng(0)
    for split, n in (("train", 6), ("val", 2), ("test", 2), ("blurred", 6)):
        for label in ("cat", "dog"):
            (root / split / label).mkdir(parents=True)
            for i in range(n):
                pixels = rng.integers(0, 255, (8, 8), dtype=np.uint8)
                Image.fromarray(pixels, mode="L").save(root / split / label / f"{i}.png")
    studies = {"corruption/blur": {"kind": "corruption", "path": "blurred"}}

    def prints() -> dict[str, dict[str, str]]:
        (experiment,) = folder_experiments(root=str(root), studies=studies)
        return {experiment.name: experiment_fingerprints(experiment)}

    run = tmp_path / "run"
    run.mkdir()
    write_text(run / PROVENANCE_FILE, json.dumps(provenance_record({}, {}, prints())))
    check_inputs_unchanged(run, prints())  # the same data resumes
    for image in sorted((root / "blurred" / "cat").iterdir())[:3]:
        image.unlink()
    with pytest.raises(ValueError, match=r"changed since.*'corruption/blur'"):
        check_inputs_unchanged(run, prints())


# --- 6. what the user asked for happens, or it is an error ------------------------------------


def test_lax_coercions_are_refused_naming_the_key(tmp_path):
    config = _config_with(tmp_path, **{"  epochs: 2\n": "  epochs: true\n"})
    assert_one_line_error(run_cli("benchmark", str(config), "--out", str(tmp_path / "r")), "epochs")
    assert not (tmp_path / "r").exists()
    for values in ({"epochs": True}, {"lr": "0.1"}, {"nesterov": "no"}, {"nesterov": 1}):
        with pytest.raises(ValueError, match=next(iter(values))):
            TrainingConfig(**values)
    assert TrainingConfig(epochs=10.0, lr=1).lr == 1.0


def test_patterns_and_names_that_match_nothing_are_refused_naming_the_key():
    results = pd.DataFrame(
        {"study": ["iid", "corruption/1"], "csf": ["MSR", "MLS"], "metric": "aurc", "value": 0.1}
    )
    check_analysis_selection(AnalysisConfig(report_studies=["iid", "corruption/*"]), results)
    with pytest.raises(ValueError, match=r"analysis.report_studies: 'corupton/\*'"):
        check_analysis_selection(AnalysisConfig(report_studies=["corupton/*"]), results)
    with pytest.raises(ValueError, match=r"analysis\.gallery_csfs: 'MRS'"):
        check_analysis_selection(AnalysisConfig(gallery_csfs=["MRS"]), results)


# --- 9. plug-ins and extras -------------------------------------------------------------------


def test_a_broken_plugin_is_a_warning_naming_it(tmp_path):
    """One plug-in whose import fails and one malformed entry point: ``evaluate`` still runs
    (exit 0), with one warning naming each."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "r34broken.py").write_text("raise ImportError('needs a library that is gone')\n")
    info = site / "r34broken-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: r34broken\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[fdbench.csfs]\nBrokenCSF = r34broken:score\n\n"
        "[fdbench.metrics]\nmalformed = not a valid entry point\n"
    )
    outputs = outputs_npz(tmp_path / "o.npz")
    env = _env(PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(site)]))
    done = _fdbench("evaluate", str(outputs), env=env)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "'BrokenCSF'" in done.stderr and "needs a library that is gone" in done.stderr
    assert "'malformed'" in done.stderr


BLOCK_TORCH = """
import sys


class _Block:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {"torch", "lightning", "torchvision", "torchmetrics"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _Block())
"""


def test_the_core_install_names_the_extra_a_command_needs(tmp_path):
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(BLOCK_TORCH)
    env = _env(PYTHONPATH=os.pathsep.join([str(shim), str(ROOT / "src")]))
    done = _fdbench("benchmark", "--quick", "--out", str(tmp_path / "run"), env=env)
    assert_one_line_error(done, "PyTorch", "pip install 'fdbench[train]'")
    assert not (tmp_path / "run").exists()
    outputs = outputs_npz(tmp_path / "o.npz")
    assert _fdbench("evaluate", str(outputs), env=env).returncode == 0


# --- 10. read integrity where the format offers it --------------------------------------------


def test_a_flipped_byte_in_a_parquet_page_is_refused(tmp_path):
    """A results table without a checksum file (a folder the user assembled): the CRC32 of its
    Parquet pages, which fdbench writes, catches a flipped byte pyarrow would read silently."""
    table = pd.DataFrame({"a": np.arange(500.0) * 0.37, "b": ["x"] * 500})
    path = tmp_path / "t.parquet"
    write_table(table, path)
    raw = path.read_bytes()
    for offset in range(8, len(raw) - 8):
        damaged = bytearray(raw)
        damaged[offset] ^= 1
        path.write_bytes(damaged)
        try:
            silently = pd.read_parquet(path)
        except Exception:
            continue
        if not silently.equals(table):
            break
    else:
        pytest.fail("no byte of the file is read silently without page checksums")
    with pytest.raises(IntegrityError, match=r"t\.parquet"):
        read_parquet(path)
