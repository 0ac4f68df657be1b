"""Tests of the torch.save and OpenOOD score-dump importers and of their use by evaluate."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fdbench.metrics as M
from fdbench.outputs import (
    import_npz,
    import_torch,
    is_score_dump,
    load_outputs,
    read_score_dump,
)

from .._cli import run_cli

torch = pytest.importorskip("torch", reason="torch.save files need PyTorch")


def _arrays(rng, n=60, k=4):
    labels = rng.integers(0, k, n)
    labels[-10:] = -1
    study = np.array(["iid"] * (n - 10) + ["new_class/x"] * 10)
    return rng.normal(size=(n, k)), labels, study, rng.normal(size=(n, 3))


def test_torch_dump_imports_as_the_same_npz(tmp_path):
    logits, labels, study, features = _arrays(np.random.default_rng(0))
    np.savez(tmp_path / "a.npz", logits=logits, labels=labels, study=study, features=features)
    torch.save(
        {
            "logits": torch.from_numpy(logits).float(),
            "targets": torch.from_numpy(labels),
            "study": study.tolist(),
            "features": torch.from_numpy(features),
        },
        tmp_path / "a.pt",
    )
    expected = import_npz(tmp_path / "a.npz")
    run = load_outputs(tmp_path / "a.pt")
    assert list(run.splits) == list(expected.splits) == ["iid", "new_class/x"]
    for name, split in run.splits.items():
        np.testing.assert_array_equal(split.labels, expected.splits[name].labels)
        np.testing.assert_allclose(split.logits, expected.splits[name].logits, rtol=1e-6)
        np.testing.assert_array_equal(split.features, expected.splits[name].features)
        assert split.kind == expected.splits[name].kind
    assert run.splits["iid"].logits.dtype == np.float64


class _Payload:
    """An object whose unpickling creates a file: what a malicious pickle would do."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def test_torch_dump_with_code_is_refused_and_not_run(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    torch.save({"logits": torch.zeros(3, 2), "labels": torch.zeros(3), "x": _Payload(marker)},
               path)  # fmt: skip
    with pytest.raises(ValueError, match="refused to read torch file"):
        import_torch(path)
    assert not marker.exists()
    result = run_cli("evaluate", str(path))
    assert result.returncode != 0
    assert "refused" in result.stderr and not marker.exists()


def test_torch_dump_must_be_a_mapping_with_logits(tmp_path):
    torch.save(torch.zeros(3, 2), tmp_path / "t.pt")
    with pytest.raises(ValueError, match="mapping of names to tensors"):
        import_torch(tmp_path / "t.pt")
    torch.save({"labels": torch.zeros(3)}, tmp_path / "u.pt")
    with pytest.raises(ValueError, match="lacks the required array 'logits'"):
        import_torch(tmp_path / "u.pt")


def _openood_folder(folder, rng):
    """OpenOOD's ``scores/``: one ``np.savez(name, pred=, conf=, label=)`` per data set."""
    folder.mkdir()
    label = rng.integers(0, 3, 80)
    pred = np.where(rng.random(80) < 0.7, label, (label + 1) % 3)
    np.savez(folder / "cifar10", pred=pred, conf=rng.random(80), label=label)
    for name in ("svhn", "tin"):
        np.savez(folder / name, pred=rng.integers(0, 3, 20), conf=rng.random(20),
                 label=np.full(20, -1))  # fmt: skip
    return folder


def test_openood_folder_reads_as_a_confidence_table(tmp_path):
    folder = _openood_folder(tmp_path / "scores", np.random.default_rng(1))
    assert is_score_dump(folder) and is_score_dump(folder / "svhn.npz")
    table = read_score_dump(folder)
    assert list(table.columns) == ["study", "label", "prediction", "conf"]
    assert list(table["study"].unique()) == ["iid", "svhn", "tin"]
    iid = np.load(folder / "cifar10.npz")
    part = table[table.study == "iid"]
    np.testing.assert_array_equal(part["conf"], iid["conf"])
    np.testing.assert_array_equal(part["prediction"], iid["pred"])
    assert (table[table.study == "tin"]["label"] == -1).all()


def test_evaluate_reads_openood_dumps(tmp_path):
    folder = _openood_folder(tmp_path / "scores", np.random.default_rng(2))
    out = tmp_path / "r.csv"
    result = run_cli("evaluate", str(folder), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "svhn" in result.stdout and "tin" in result.stdout
    rows = pd.read_csv(out)
    iid = np.load(folder / "cifar10.npz")
    expected = M.aurc((iid["pred"] != iid["label"]).astype(float), iid["conf"])
    got = rows[(rows.study == "iid") & (rows.csf == "conf") & (rows.metric == "aurc")]
    assert got["value"].item() == pytest.approx(expected, abs=1e-12)
    single = run_cli("evaluate", str(folder / "cifar10.npz"))
    assert single.returncode == 0, single.stderr


def test_torch_dump_evaluates_like_its_npz(tmp_path):
    logits, labels, study, _ = _arrays(np.random.default_rng(3))
    np.savez(tmp_path / "a.npz", logits=logits, labels=labels, study=study)
    torch.save({"logits": torch.from_numpy(logits), "labels": torch.from_numpy(labels),
                "study": study.tolist()}, tmp_path / "a.pt")  # fmt: skip
    a = run_cli("evaluate", str(tmp_path / "a.npz"), "--out", str(tmp_path / "a.csv"))
    b = run_cli("evaluate", str(tmp_path / "a.pt"), "--out", str(tmp_path / "b.csv"))
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "a.csv"), pd.read_csv(tmp_path / "b.csv"))


@pytest.mark.parametrize(
    ("arrays", "needle"),
    [
        ({"pred": [0, 1], "conf": [0.1, np.nan], "label": [0, 1]}, "non-finite"),
        ({"pred": [0, 1], "conf": [0.1, 0.2], "label": [0, -2]}, "label must be >= -1"),
        ({"pred": [0, 1], "conf": [0.1, 0.2, 0.3], "label": [0, 1]}, "pred must have shape"),
        ({"pred": [0.5, 1], "conf": [0.1, 0.2], "label": [0, 1]}, "integer values"),
    ],
)
def test_bad_score_dump_is_a_clear_error(tmp_path, arrays, needle):
    np.savez(tmp_path / "s.npz", **{k: np.asarray(v) for k, v in arrays.items()})
    with pytest.raises(ValueError, match=needle):
        read_score_dump(tmp_path / "s.npz")
