"""Every command block of the README runs as written, in a fresh shell, after the set-up."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)

LONG = {
    "fdbench benchmark": "the set-up and the main job (17 min; the benchmark tests run --quick)",
    "-m pytest": "the test suite itself, which holds this test",
    "fdbench zoo": "trains the 24 members of the embedded zoo (1 to 11 min; tests/zoo covers it)",
    "metrics_speed.py": "a speed measurement of several minutes, not a check",
    "examples/bring_your_own/run.py": "trains a network end to end (about 2 min); "
    "tests/examples/test_bring_your_own.py runs it",
}
"""Blocks left out, by a command they hold, and why: everything else runs."""


def readme_blocks(text: str) -> list[tuple[str, str]]:
    """The fenced blocks of ``text`` in a shell language or Python: (language, code)."""
    return [(lang, code) for lang, code in FENCE.findall(text) if lang in {"bash", "sh", "python"}]


def _left_out(code: str) -> str | None:
    return next((why for command, why in LONG.items() if command in code), None)


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))


def test_the_readme_has_the_blocks_this_test_knows():
    languages = [lang for lang, _ in BLOCKS]
    assert languages.count("python") >= 1 and languages.count("bash") >= 4
    left_out = [code for _, code in BLOCKS if _left_out(code)]
    assert len(left_out) == len(LONG), "a block named in LONG is no longer in the README"
    # a bare `fdbench` or `python` needs the environment activated first in a fresh shell
    for language, code in BLOCKS:
        if language == "python":
            continue
        commands = [line.split("#")[0].strip() for line in code.splitlines()]
        activated = False
        for command in filter(None, commands):
            activated |= command == ". .venv/bin/activate"
            if command.split()[0] in {"fdbench", "python"}:
                assert activated, f"{command!r} runs before the environment is activated"


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """A copy of the repository whose ``.venv`` is the environment running the tests (the one
    ``scripts/setup.sh`` made): the commands write into it, not into the work tree."""
    folder = tmp_path_factory.mktemp("checkout") / "fdbench"
    ignore = shutil.ignore_patterns(
        ".venv", ".git", "runs", "__pycache__", "*.egg-info", ".pytest_cache", ".ruff_cache"
    )
    shutil.copytree(ROOT, folder, ignore=ignore)
    (folder / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    return folder


def _fresh_environment(home: Path) -> dict[str, str]:
    """What a new login shell has: no virtual environment, no PYTHONPATH, a plain PATH."""
    return {
        "HOME": str(home),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "FDBENCH_DATA": os.environ.get("FDBENCH_DATA", str(Path.home() / ".cache" / "fdbench")),
        "MPLBACKEND": "Agg",
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    ("language", "code"),
    [pytest.param(lang, code, id=f"block{i}") for i, (lang, code) in enumerate(BLOCKS)],
)
def test_readme_block_runs_in_a_fresh_shell(checkout, tmp_path, language, code):
    why = _left_out(code)
    if why is not None:
        pytest.skip(f"long block left out: {why}")
    if language == "python":
        command = [str(checkout / ".venv" / "bin" / "python"), "-"]
    else:
        command = ["bash", "-e", "-o", "pipefail", "-s"]
    done = subprocess.run(
        command,
        input=code,
        cwd=checkout,
        env=_fresh_environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    output = f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
    assert done.returncode == 0, f"{code}\n{output}"


def test_a_failing_block_is_reported(checkout, tmp_path):
    """The harness sees a command missing from the fresh shell's PATH (what the README's
    "evaluate" block did before it activated the environment)."""
    done = subprocess.run(
        ["bash", "-e", "-s"],
        input="fdbench --help\n",
        cwd=checkout,
        env=_fresh_environment(tmp_path),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 127
