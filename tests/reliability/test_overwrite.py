"""Point 2 of issue #25: ``--out`` never destroys what the user had.

An output path that is an input of the same command (by name, symlink, hard link, or inside an
input folder) is refused whatever the flags; a file fdbench did not write (or one edited since)
is refused unless ``--force``. Refusals happen before any work: exit status 2, one line, the
user's files byte-identical.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from fdbench.core.io import ForeignFileError, checksum_path, write_text
from fdbench.outputs import read_outputs, write_outputs

from .conftest import assert_user_error, digest, run_cli, small_run


def _table(path):
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, 80)
    frame = pd.DataFrame(
        {
            "label": labels,
            "prediction": np.where(rng.random(80) < 0.7, labels, (labels + 1) % 3),
            "msr": rng.random(80),
        }
    )
    frame.to_csv(path, index=False)
    return path


def _npz(path):
    run = small_run()
    iid = run.splits["iid"]
    np.savez(path, logits=iid.logits, labels=iid.labels)
    return path


@pytest.mark.parametrize("how", ["same", "relative", "symlink", "hardlink"])
def test_out_equal_to_input_is_refused(tmp_path, how):
    data = _table(tmp_path / "mydata.csv")
    before = digest(data)
    out = {
        "same": data,
        "relative": tmp_path / "sub" / ".." / "mydata.csv",
        "symlink": tmp_path / "link.csv",
        "hardlink": tmp_path / "hard.csv",
    }[how]
    if how == "relative":
        (tmp_path / "sub").mkdir()
    elif how == "symlink":
        out.symlink_to(data)
    elif how == "hardlink":
        os.link(data, out)
    for force in ([], ["--force"]):
        done = run_cli("evaluate", str(data), "--out", str(out), *force)
        assert_user_error(done, str(out), "is the input")
        assert digest(data) == before
    assert not checksum_path(data).exists()


def test_out_inside_an_input_store_is_refused(tmp_path):
    store = tmp_path / "outputs.zarr"
    write_outputs(store, small_run())
    before = {p: digest(p) for p in store.rglob("*") if p.is_file()}
    done = run_cli("evaluate", str(store), "--out", str(store / "zarr.json.csv"))
    assert_user_error(done, "is the input")
    assert {p: digest(p) for p in store.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("name", ["results.csv", "results.parquet"])
def test_foreign_file_at_out_needs_force(tmp_path, name):
    data = _npz(tmp_path / "outputs.npz")
    out = tmp_path / name
    out.write_bytes(b"the user's own table\n")
    before = digest(out)
    done = run_cli("evaluate", str(data), "--out", str(out))
    assert_user_error(done, str(out), "not written by fdbench", "--force")
    assert digest(out) == before
    done = run_cli("evaluate", str(data), "--out", str(out), "--force")
    assert done.returncode == 0, done.stderr
    written = digest(out)
    assert written != before
    # fdbench's own file is replaced on the next run without --force, with the same content
    done = run_cli("evaluate", str(data), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert digest(out) == written


def test_fdbench_output_edited_by_the_user_is_not_replaced(tmp_path):
    data = _npz(tmp_path / "outputs.npz")
    out = tmp_path / "results.csv"
    assert run_cli("evaluate", str(data), "--out", str(out)).returncode == 0
    out.write_text(out.read_text() + "my note\n")
    before = digest(out)
    assert_user_error(run_cli("evaluate", str(data), "--out", str(out)), str(out))
    assert digest(out) == before


def test_symlink_at_out_is_not_followed(tmp_path):
    data = _npz(tmp_path / "outputs.npz")
    elsewhere = tmp_path / "notes.txt"
    elsewhere.write_text("precious")
    link = tmp_path / "results.csv"
    link.symlink_to(elsewhere)
    assert_user_error(run_cli("evaluate", str(data), "--out", str(link)), str(link))
    assert elsewhere.read_text() == "precious" and link.is_symlink()


def test_foreign_report_html_needs_force(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    pd.DataFrame(
        {
            "dataset": "d",
            "method": "m",
            "seed": 0,
            "csf": "MSR",
            "study": "iid",
            "metric": "aurc",
            "value": [0.1],
        }
    ).to_csv(run / "results.csv", index=False)
    page = run / "report.html"
    page.write_text("<html>my own page</html>")
    before = digest(page)
    done = run_cli("report", str(run))
    assert_user_error(done, str(page), "--force")
    assert digest(page) == before
    done = run_cli("report", str(run), "--force")
    assert done.returncode == 0, done.stderr
    assert digest(page) != before
    assert run_cli("report", str(run)).returncode == 0  # fdbench's page now


def test_screenshot_onto_a_report_input_is_refused(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    write_text(run / "results.csv", "dataset,method\n")
    before = digest(run / "results.csv")
    shot = tmp_path / "shot.png"
    shot.symlink_to(run / "results.csv")
    done = run_cli("report", str(run), "--screenshot", str(shot), "--force")
    assert_user_error(done, "is the input")
    assert digest(run / "results.csv") == before


def test_benchmark_refuses_a_foreign_folder_and_its_config(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "thesis.tex").write_text("chapter 1")
    done = run_cli("benchmark", "--quick", "--out", str(folder), "--no-report")
    assert_user_error(done, str(folder), "not a run folder of fdbench")
    assert sorted(p.name for p in folder.iterdir()) == ["thesis.tex"]
    config = tmp_path / "tiny.yaml"
    config.write_text("name: tiny\n")
    before = digest(config)
    for out, message in ((config, "is the input"), (tmp_path, "lies inside the run folder")):
        done = run_cli("benchmark", str(config), "--out", str(out), "--force")
        assert_user_error(done, str(config), message)
        assert digest(config) == before


def test_write_outputs_never_replaces_a_users_folder(tmp_path):
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "cat.jpg").write_bytes(b"\xff\xd8 a cat")
    with pytest.raises(ForeignFileError, match="photos"):
        write_outputs(folder, small_run())
    assert (folder / "cat.jpg").read_bytes() == b"\xff\xd8 a cat"
    store = tmp_path / "outputs.zarr"
    write_outputs(store, small_run(0))
    write_outputs(store, small_run(1))  # its own store is replaced
    assert read_outputs(store).meta["seed"] == 1


def test_screenshot_onto_the_report_page_is_refused(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    write_text(run / "report.html", "<html></html>")
    before = digest(run / "report.html")
    shot = tmp_path / "page.png"
    os.link(run / "report.html", shot)
    done = run_cli("report", str(run), "--screenshot", str(shot))
    assert_user_error(done, "--screenshot", "is the input")
    assert digest(run / "report.html") == before


def test_corruption_grid_never_replaces_a_foreign_file(tmp_path):
    grid = tmp_path / "grid.png"
    grid.write_bytes(b"my picture")
    cache = tmp_path / "cache"
    cache.mkdir()
    done = run_cli("data", "show-corruptions", "--out", str(grid), "--data-dir", str(cache))
    assert_user_error(done, str(grid), "--force")
    assert grid.read_bytes() == b"my picture"
    (cache / "fashion_mnist").mkdir()
    out = str(cache / "fashion_mnist" / "grid.png")
    done = run_cli("data", "show-corruptions", "--out", out, "--data-dir", str(cache))
    assert_user_error(done, "is the input")
