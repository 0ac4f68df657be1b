"""CONTRIBUTING.md's recipes, followed literally.

Each recipe shows the new module and its test as code blocks whose first line names the file.
A test per recipe copies fdbench's sources, writes those two files into the copy (and nothing
else), runs the recipe's test there and checks that the new thing shows up where the recipe
says: in ``fdbench evaluate``'s tables and results, a configuration, the scoring-method names.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "CONTRIBUTING.md"


def recipe_files() -> dict[str, str]:
    """Every code block of CONTRIBUTING.md whose first line is ``# <path>``: path → text."""
    blocks = re.findall(r"```python\n# (\S+)\n(.*?)```", GUIDE.read_text(), flags=re.S)
    return {path: text for path, text in blocks}


def docs_rows() -> dict[str, str]:
    """Every docs row the recipes show: the docs file it belongs in → the row."""
    rows = re.findall(r"of `(docs/[\w.]+)`:\n\n```\n(\|.*?\|)\n```", GUIDE.read_text())
    return {path: row for path, row in rows}


@pytest.fixture
def checkout(tmp_path):
    """A copy of fdbench's sources (no tests, no docs) to add a recipe's files to."""
    shutil.copytree(ROOT / "src", tmp_path / "src", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "tests").mkdir()
    return tmp_path


def follow(checkout: Path, module: str, test: str) -> None:
    """Write the recipe's module and its test into ``checkout``, as the recipe shows them."""
    files = recipe_files()
    for path in (module, test):
        target = checkout / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(files[path])


def run(checkout: Path, *args: str) -> subprocess.CompletedProcess:
    """``python ARGS`` with ``checkout``'s sources first on the path."""
    env = {**os.environ, "PYTHONPATH": str(checkout / "src"), "COLUMNS": "200"}
    env.pop("FDBENCH_DEBUG", None)
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, cwd=checkout, timeout=900
    )


def run_recipe_test(checkout: Path, test: str) -> None:
    result = run(checkout, "-m", "pytest", "-q", "-p", "no:cacheprovider", test)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert " passed" in result.stdout


def outputs(tmp_path: Path) -> tuple[Path, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 3, 150)
    logits = rng.normal(size=(150, 3)) + 2 * np.eye(3)[labels]
    path = tmp_path / "outputs.npz"
    np.savez(path, logits=logits, labels=labels)
    return path, logits, labels


def test_every_recipe_has_a_module_a_test_and_a_docs_row():
    files = recipe_files()
    modules = [p for p in files if p.startswith("src/")]
    tests = [p for p in files if p.startswith("tests/")]
    assert len(modules) == 4 and len(tests) == 4
    rows = docs_rows()
    assert sorted(rows) == [
        "docs/bring_your_own.md", "docs/csf.md", "docs/metrics.md", "docs/training.md"
    ]  # fmt: skip
    for path in rows:
        assert (ROOT / path).exists(), path
    for path in modules + tests:
        assert not (ROOT / path).exists(), f"{path} is an example and must not be in the tree"


def test_csf_recipe(checkout, tmp_path):
    follow(checkout, "src/fdbench/csf/margin.py", "tests/csf/test_margin.py")
    run_recipe_test(checkout, "tests/csf/test_margin.py")
    path, logits, labels = outputs(tmp_path)
    out = tmp_path / "results.csv"
    result = run(checkout, "-m", "fdbench", "evaluate", str(path), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "Margin" in result.stdout
    table = pd.read_csv(out)
    z = np.sort(logits, axis=1)
    residuals = (logits.argmax(1) != labels).astype(float)
    import fdbench.metrics as M

    expected = M.aurc(residuals, z[:, -1] - z[:, -2])
    row = table[(table["csf"] == "Margin") & (table["metric"] == "aurc")]
    assert row["value"].item() == pytest.approx(expected, abs=1e-12)
    facts = run(checkout, "-c", (
        "from fdbench.analysis import calibration_treatment, scoring_method_name\n"
        "from fdbench.training.methods import method_names\n"
        "method_names()\n"
        "from fdbench.report.palette import csf_colour\n"
        "print(calibration_treatment('Margin'), csf_colour('Margin'),"
        " scoring_method_name('deepgamblers', 'Margin'))"
    ))  # fmt: skip
    assert facts.returncode == 0, facts.stderr
    assert facts.stdout.split() == ["platt", "#999933", "DG-Margin"]


def test_metric_recipe(checkout, tmp_path):
    follow(checkout, "src/fdbench/metrics/risk_at_half.py", "tests/metrics/test_risk_at_half.py")
    run_recipe_test(checkout, "tests/metrics/test_risk_at_half.py")
    path, _, _ = outputs(tmp_path)
    out = tmp_path / "results.csv"
    result = run(checkout, "-m", "fdbench", "evaluate", str(path), "--out", str(out))
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(out)
    assert set(table.loc[table["metric"] == "risk@50cov", "csf"]) >= {"MSR", "MLS", "PE"}
    facts = run(checkout, "-c", (
        "from fdbench.analysis import higher_is_better\n"
        "print(higher_is_better('risk@50cov'))"
    ))  # fmt: skip
    assert facts.stdout.split() == ["False"], facts.stderr


def test_training_method_recipe(checkout):
    pytest.importorskip("torch")
    follow(
        checkout,
        "src/fdbench/training/methods/label_smoothing.py",
        "tests/training/test_label_smoothing.py",
    )
    run_recipe_test(checkout, "tests/training/test_label_smoothing.py")


def test_data_set_recipe(checkout):
    follow(checkout, "src/fdbench/data/suites/toy_blobs.py", "tests/data/test_toy_blobs.py")
    run_recipe_test(checkout, "tests/data/test_toy_blobs.py")
