"""The jobs sub-package has no import circle: every module imports first in a fresh interpreter."""

from __future__ import annotations

import ast
import functools
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

import fdbench

PACKAGE = Path(fdbench.__file__).parent


def _modules() -> list[str]:
    """Every module of fdbench but ``__main__`` (importing it runs the command line)."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] != "__main__":
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def _imports(name: str) -> set[str]:
    """Every fdbench module ``name`` imports anywhere (top level, in functions, under
    ``TYPE_CHECKING``), resolved to module names."""
    path = PACKAGE.parent.joinpath(*name.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    known = set(_modules())
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        else:
            continue
        found |= {t for t in targets if t in known and t != name}
    return found


def _cycle_through(start: str, graph: dict[str, set[str]]) -> list[str] | None:
    """A path of imports from ``start`` back to ``start``, or ``None``."""
    stack, seen = [(start, [start])], set()
    while stack:
        node, path = stack.pop()
        for nxt in sorted(graph.get(node, ())):
            if nxt == start:
                return [*path, start]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, [*path, nxt]))
    return None


@functools.cache
def _graph() -> dict[str, set[str]]:
    return {m: _imports(m) for m in _modules()}


JOBS = [m for m in _modules() if m.startswith("fdbench.jobs")]


def test_the_jobs_modules_are_the_orchestration_of_the_package_root():
    assert set(JOBS) == {
        "fdbench.jobs",
        "fdbench.jobs.benchmark",
        "fdbench.jobs.plan",
        "fdbench.jobs.report_inputs",
        "fdbench.jobs.run_folder",
        "fdbench.jobs.posthoc_comparison",
        "fdbench.jobs.zoo",
    }
    for old in ("benchmark", "report_inputs", "evaluation", "runner"):
        assert not (PACKAGE / f"{old}.py").exists()


@pytest.mark.parametrize("name", JOBS)
def test_no_jobs_module_is_on_an_import_circle(name):
    """Counting lazy and type-checking imports too: the circle benchmark -> report_inputs ->
    benchmark that the package root had is gone, and none other goes through a job."""
    assert _cycle_through(name, _graph()) is None


def test_the_static_check_finds_a_circle():
    assert _cycle_through("a", {"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle_through("a", {"a": {"b"}, "b": {"c"}, "c": set()}) is None


def _import_in_fresh_interpreter(names: list[str]) -> subprocess.CompletedProcess:
    code = (
        "import importlib, sys\n"
        "for name in sys.argv[1:]:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except ModuleNotFoundError as error:\n"
        "        if (error.name or '').split('.')[0] == 'fdbench':\n"
        "            raise\n"
    )
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}
    return subprocess.run(
        [sys.executable, "-c", code, *names], capture_output=True, text=True, timeout=600, env=env
    )


@pytest.mark.parametrize("seed", [0])
def test_every_module_imports_in_random_order_in_a_fresh_interpreter(seed):
    """Each jobs module first, then all of fdbench in a shuffled order (optional third-party
    packages that are not installed are skipped, never a missing fdbench module)."""
    rng = random.Random(seed)
    jobs = rng.sample(JOBS, len(JOBS))
    rest = [m for m in _modules() if m not in JOBS]
    order = [jobs[0], *rng.sample(jobs[1:] + rest, len(rest) + len(jobs) - 1)]
    done = _import_in_fresh_interpreter(order)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("name", JOBS)
def test_each_jobs_module_imports_first(name):
    done = _import_in_fresh_interpreter([name])
    assert done.returncode == 0, done.stderr
