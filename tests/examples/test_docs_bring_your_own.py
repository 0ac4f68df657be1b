"""The examples of docs/bring_your_own.md, docs/csf.md (plug-ins) and docs/outputs.md run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fdbench.jobs.plan import parse_config

ROOT = Path(__file__).resolve().parents[2]


def _blocks(doc: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", (ROOT / "docs" / doc).read_text(), re.S)


@pytest.mark.parametrize("block", _blocks("bring_your_own.md", "yaml"))
def test_yaml_examples_are_valid_config_sections(block):
    section = yaml.safe_load(block)
    config = {"name": "doc", "architecture": {"name": "convnet"},
              "methods": [{"name": "ce", "kind": "ce", "seeds": [0]}], **section}  # fmt: skip
    parse_config(config, source="docs/bring_your_own.md")


@pytest.mark.parametrize(
    ("doc", "needle"),
    [("bring_your_own.md", "Experiment("), ("csf.md", "register_csf"),
     ("outputs.md", "read_score_dump")],
)  # fmt: skip
def test_python_examples_run(doc, needle):
    (block,) = [b for b in _blocks(doc, "python") if needle in b]
    env = {"PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True,
                            env=env, timeout=300)  # fmt: skip
    assert result.returncode == 0, result.stderr
