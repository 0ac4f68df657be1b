"""The Python examples of README.md and docs/integrations.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def python_blocks(path: Path) -> list[str]:
    """The ```python fenced blocks of a Markdown file, in order."""
    return BLOCK.findall(path.read_text(encoding="utf-8"))


def _run_blocks(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace: dict = {"__name__": f"docs_{path.stem}"}
    blocks = python_blocks(path)
    assert blocks, f"{path} has no python example"
    for index, block in enumerate(blocks):
        code = compile(block, f"{path.name}[python block {index}]", "exec")
        exec(code, namespace)
    return namespace


def test_block_extraction():
    text = "a\n```python\nx = 1\n```\n```bash\nls\n```\n```python\ny = 2\n```\n"
    path_blocks = BLOCK.findall(text)
    assert path_blocks == ["x = 1\n", "y = 2\n"]


def test_readme_examples(tmp_path, monkeypatch):
    pytest.importorskip("sklearn")
    namespace = _run_blocks(ROOT / "README.md", tmp_path, monkeypatch)
    assert namespace["search"].best_params_["C"] in (0.01, 1.0)


@pytest.mark.torch
@pytest.mark.timeout(600)
def test_integrations_doc_examples(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("lightning")
    pytest.importorskip("torchmetrics")
    pytest.importorskip("sklearn")
    namespace = _run_blocks(ROOT / "docs" / "integrations.md", tmp_path, monkeypatch)
    assert (tmp_path / "runs" / "my_model" / "fd_store").is_dir()
    assert (tmp_path / "risk_coverage.png").stat().st_size > 0
    assert namespace["callback"].best_epoch in (0, 1)
