"""Zoo members behind fsspec URLs (``memory://``, ``file://``): the same members, checks,
numbers and cache stamps as the local folder; a missing fsspec or protocol package is one
error."""

from __future__ import annotations

import sys
import uuid
import warnings

import fsspec
import numpy as np
import pandas as pd
import pytest

from fdbench.jobs.zoo import member_jobs, run_zoo
from fdbench.zoo import discover_members, evaluate_member, parse_zoo_config
from fdbench.zoo.members import check_member, iter_blocks, read_metadata
from fdbench.zoo.synthetic import make_synthetic_zoo
from fdbench.zoo.urls import url_filesystem
from tests._cli import run_cli

SETTINGS = {"pnorm": {"t_count": 5}, "n_bootstrap": 50, "cood": {"n_estimation": 12, "n_test": 4}}


def _config(zoo: str):
    return parse_zoo_config({"name": "t", "zoo": zoo, **SETTINGS})


@pytest.fixture
def memory_zoo(tmp_path):
    """A synthetic zoo in a local folder and the same files under a fresh ``memory://`` URL."""
    make_synthetic_zoo(tmp_path / "zoo", n_members=2, n_test=200, n_ood_classes=25)
    fs = fsspec.filesystem("memory")
    root = f"/zoo-{uuid.uuid4().hex}"
    for path in sorted((tmp_path / "zoo").iterdir()):
        fs.pipe(f"{root}/{path.name}", path.read_bytes())
    yield tmp_path / "zoo", f"memory://{root}"
    fs.rm(root, recursive=True)


def test_url_zoos_give_the_rows_of_the_local_folder(memory_zoo, tmp_path):
    local, memory = memory_zoo
    expected = run_zoo(_config(str(local)), tmp_path / "local", workers=0, report=False)
    for url in (memory, f"file://{local}"):
        members = discover_members(url)
        assert [m.name for m in members] == ["m000", "m001"]
        assert all(isinstance(m.path, str) and m.path.startswith(url) for m in members)
        assert members[0].meta == discover_members(local)[0].meta
        out = tmp_path / url.split(":")[0]
        got = run_zoo(_config(url), out, workers=0, report=False)
        pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert len(read_metadata(memory)) == 2


def test_url_member_stamp_follows_its_content(memory_zoo, tmp_path):
    local, memory = memory_zoo
    first = [job.output.name for job in member_jobs(_config(memory), tmp_path)]
    assert first == [job.output.name for job in member_jobs(_config(memory), tmp_path)]
    fs, root = url_filesystem(memory)
    fs.pipe(f"{root}/m001.npz", (local / "m000.npz").read_bytes())
    second = [job.output.name for job in member_jobs(_config(memory), tmp_path)]
    assert second[0] == first[0] and second[1] != first[1]


def test_url_member_is_checked_like_a_local_one(memory_zoo):
    local, memory = memory_zoo
    fs, root = url_filesystem(memory)
    with np.load(local / "m000.npz") as data:
        arrays = {k: data[k] for k in data.files}
    arrays["test_logits"][3, 1] = np.nan
    with fs.open(f"{root}/m000.npz", "wb") as fh:
        np.savez(fh, **arrays)
    (member, _) = discover_members(memory)
    check_member(member)
    with pytest.raises(ValueError, match=r"m000.*test_logits, sample 3"):
        list(iter_blocks(member, "test"))
    fs.pipe(f"{root}/m001.npz", (local / "m001.npz").read_bytes()[:5000])
    with pytest.raises(ValueError, match="m001"):
        check_member(discover_members(memory)[1])


def test_missing_fsspec_or_protocol_package_is_one_error(monkeypatch):
    with pytest.raises(ValueError, match="Protocol not known"):
        discover_members("nosuchprotocol://bucket/zoo")
    monkeypatch.setitem(sys.modules, "fsspec", None)
    with pytest.raises(ValueError, match=r"needs fsspec \(pip install fsspec\)"):
        discover_members("memory://zoo")


def test_cli_names_the_missing_protocol_package(tmp_path):
    try:
        import s3fs  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("s3fs is installed: s3:// is readable here")
    config = tmp_path / "zoo.yaml"
    config.write_text("name: t\nzoo: s3://bucket/zoo\n")
    done = run_cli("zoo", str(config), "--out", str(tmp_path / "run"))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "'s3'" in lines[0] and "s3fs" in lines[0], done.stderr


def test_members_of_sources_are_not_written_to_a_url():
    config = parse_zoo_config(
        {"name": "t", "zoo": "memory://zoo", "sources": {"benchmark_runs": ["runs/x"]}}
    )
    from fdbench.zoo.sources import write_sources

    with pytest.raises(ValueError, match="is a URL"):
        write_sources(config)


def test_evaluate_member_from_url_equals_local(memory_zoo):
    local, memory = memory_zoo
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = evaluate_member(discover_members(memory)[1], _config(memory))
        expected = evaluate_member(discover_members(local)[1], _config(str(local)))
    pd.testing.assert_frame_equal(got[0], expected[0], check_exact=True)
    pd.testing.assert_frame_equal(got[1], expected[1], check_exact=True)
