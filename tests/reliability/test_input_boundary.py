"""Every input surface crosses one validation boundary (issues #33 point 2, #34 points 7, 8):
complex, text, NaN, out-of-range, duplicated and oversized inputs to ``evaluate``, ``zoo``
(members, OOD pools, configs) and ``report`` (results tables) end in exit status 2 and one
line naming the culprit, never a traceback."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fdbench.core.validation import (
    check_integers,
    check_results_table,
    check_unique,
    npz_headers,
)
from fdbench.core.yaml import load_yaml, parse_yaml
from fdbench.metrics.specs import metric_bounds
from fdbench.zoo.synthetic import make_synthetic_zoo

from ._cli import assert_one_line_error, digests, outputs_npz, run_cli

K = 4


def _lying_npy(shape: tuple[int, ...], data: np.ndarray) -> bytes:
    """An ``.npy`` file whose header states ``shape`` but that holds ``data``'s bytes."""
    out = io.BytesIO()
    header = {"descr": np.lib.format.dtype_to_descr(data.dtype), "fortran_order": False}
    np.lib.format.write_array_header_1_0(out, {**header, "shape": shape})
    out.write(np.ascontiguousarray(data).tobytes())
    return out.getvalue()


def _with_entry(path: Path, key: str, payload: bytes) -> None:
    """Replace the ``key`` array of the ``.npz`` at ``path`` by the raw ``.npy`` ``payload``."""
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files if k != key}
    np.savez(path, **arrays)
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr(f"{key}.npy", payload)


# --- fdbench evaluate -------------------------------------------------------------------------

EVALUATE_CASES = {
    "complex-logits": ({"logits": np.ones((120, K), dtype=complex)}, "logits"),
    "text-logits": ({"logits": np.full((120, K), "1.5")}, "logits"),
    "nan-logits": ({"logits": np.where(np.eye(120, K) > 0, np.nan, 0.0)}, "logits"),
    "label-out-of-range": ({"labels": np.full(120, K)}, "labels"),
    "fractional-labels": ({"labels": np.full(120, 2.5)}, "labels"),
    "text-labels": ({"labels": np.full(120, "cat")}, "labels"),
}


@pytest.mark.parametrize("case", list(EVALUATE_CASES))
def test_evaluate_refuses_hostile_arrays(tmp_path, case):
    arrays, culprit = EVALUATE_CASES[case]
    path = outputs_npz(tmp_path / "o.npz", k=K, **arrays)
    assert_one_line_error(run_cli("evaluate", str(path)), culprit)


def test_evaluate_refuses_a_csv_naming_a_column_twice(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("label,prediction,MSR,MSR\n0,0,0.9,0.8\n1,0,0.2,0.3\n")
    assert_one_line_error(run_cli("evaluate", str(table)), "'MSR'", "twice")


def test_evaluate_refuses_an_npy_header_claiming_more_than_memory(tmp_path):
    path = outputs_npz(tmp_path / "o.npz", k=7)
    _with_entry(path, "logits", _lying_npy((10**11, 7), np.zeros((3, 7))))
    assert_one_line_error(run_cli("evaluate", str(path)), "'logits'")


# --- fdbench zoo ------------------------------------------------------------------------------


def _zoo(tmp_path: Path) -> tuple[Path, Path]:
    zoo = make_synthetic_zoo(
        tmp_path / "zoo", n_members=1, n_test=120, n_classes=K, n_ood_classes=6, mcd_members=0
    )
    config = tmp_path / "zoo.yaml"
    config.write_text("name: t\nzoo: zoo\npnorm:\n  t_count: 3\nn_bootstrap: 10\n")
    return zoo, config


def _replace(member: Path, **arrays: np.ndarray) -> None:
    with np.load(member) as data:
        kept = {k: data[k] for k in data.files}
    kept.update(arrays)
    np.savez(member, **kept)


ZOO_MEMBER_CASES = {
    "complex-logits": ("test_logits", lambda z: z.astype(complex) + 1j),
    "text-logits": ("test_logits", lambda z: z.astype(str)),
    "nan-logits": (
        "test_logits",
        lambda z: np.where(np.arange(z.size).reshape(z.shape) == 7, np.nan, z),
    ),
    "label-minus-one": ("test_labels", lambda y: np.where(np.arange(y.size) == 3, -1, y)),
    "fractional-labels": ("test_labels", lambda y: y + 0.5),
    "label-beyond-k": ("test_labels", lambda y: np.where(np.arange(y.size) == 3, K, y)),
    "ood-logits-k-minus-1": ("ood_logits", lambda z: z[:, :-1]),
    "ood-nan-logits": (
        "ood_logits",
        lambda z: np.where(np.arange(z.size).reshape(z.shape) == 5, np.inf, z),
    ),
    "ood-classes-text": ("ood_classes", lambda c: c.astype(str)),
    "ood-classes-negative": ("ood_classes", lambda c: c - 1),
}


@pytest.mark.parametrize("case", list(ZOO_MEMBER_CASES))
def test_zoo_refuses_hostile_members_and_ood_pools(tmp_path, case):
    key, change = ZOO_MEMBER_CASES[case]
    zoo, config = _zoo(tmp_path)
    member = zoo / "m000.npz"
    with np.load(member) as data:
        _replace(member, **{key: change(data[key])})
    before = digests(zoo)
    done = run_cli("zoo", str(config), "--out", str(tmp_path / "run"))
    assert_one_line_error(done, "m000", key)
    assert digests(zoo) == before


def test_zoo_refuses_a_member_whose_header_claims_10_to_the_11_rows(tmp_path):
    zoo, config = _zoo(tmp_path)
    _with_entry(zoo / "m000.npz", "test_logits", _lying_npy((10**11, K), np.zeros((3, K))))
    done = run_cli("zoo", str(config), "--out", str(tmp_path / "run"))
    assert_one_line_error(done, "m000", "test_logits")


def test_zoo_refuses_a_member_listed_twice(tmp_path):
    zoo, config = _zoo(tmp_path)
    (zoo / "members.json").unlink()
    (zoo / "members.csv").write_text("name,family\nm000,convnet\nm000,vit\n")
    done = run_cli("zoo", str(config), "--out", str(tmp_path / "run"))
    assert_one_line_error(done, "m000", "twice")


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)

ZOO_CONFIG_CASES = {
    "duplicate-key": ("name: t\nzoo: zoo\nseed: 1\nseed: 2\n", "duplicate key 'seed'"),
    "alias-bomb": ("name: t\nzoo: zoo\n" + BOMB, "alias"),
    "python-tag": ("name: t\nzoo: !!python/object/apply:os.system ['true']\n", "!!python"),
    "nan": ("name: t\nzoo: zoo\nval_fraction: .nan\n", "val_fraction"),
    "infinite": ("name: t\nzoo: zoo\npnorm:\n  t_stop: .inf\n", "pnorm.t_stop"),
    "text-number": ("name: t\nzoo: zoo\nn_bins: many\n", "n_bins"),
    "bootstrap-1e12": ("name: t\nzoo: zoo\nn_bootstrap: 1000000000000\n", "n_bootstrap"),
    "t-count-2e9": ("name: t\nzoo: zoo\npnorm:\n  t_count: 2000000000\n", "pnorm.t_count"),
}


@pytest.mark.parametrize("case", list(ZOO_CONFIG_CASES))
def test_zoo_refuses_hostile_configs(tmp_path, case):
    text, culprit = ZOO_CONFIG_CASES[case]
    _zoo(tmp_path)
    config = tmp_path / "bad.yaml"
    config.write_text(text)
    done = run_cli("zoo", str(config), "--out", str(tmp_path / "run"))
    assert_one_line_error(done, culprit)
    assert not (tmp_path / "run").exists()


def test_benchmark_config_goes_through_the_same_loader(tmp_path):
    config = tmp_path / "bench.yaml"
    config.write_text("name: b\n" + BOMB)
    assert_one_line_error(run_cli("benchmark", str(config)), "bench.yaml", "alias")
    config.write_text("name: !!python/name:os.system\n")
    assert_one_line_error(run_cli("benchmark", str(config)), "bench.yaml", "!!python")


def test_yaml_loader_checks_the_size_before_reading(tmp_path):
    big = tmp_path / "big.yaml"
    with open(big, "wb") as fh:
        fh.truncate(17 * 2**20)
    with pytest.raises(ValueError, match="larger than"):
        load_yaml(big)


# --- fdbench report ---------------------------------------------------------------------------


def _results(folder: Path, n: int = 2) -> pd.DataFrame:
    rows = [
        {
            "dataset": "d",
            "method": "m",
            "seed": s,
            "csf": c,
            "study": "iid",
            "metric": metric,
            "value": value,
            "n_samples": 100,
        }
        for s in range(n)
        for c in ("MSR", "MLS")
        for metric, value in (("aurc", 0.05 + 0.01 * s), ("auroc_f", 0.8), ("augrc", 0.03))
    ]
    folder.mkdir(parents=True, exist_ok=True)
    return pd.DataFrame(rows)


def _hostile(table: pd.DataFrame, case: str) -> pd.DataFrame:
    table = table.copy()
    if case == "duplicated-row-other-value":
        twin = table.iloc[[0]].assign(value=0.9)
        return pd.concat([table, twin], ignore_index=True)
    if case == "duplicated-row-same-value":
        return pd.concat([table, table.iloc[[0]]], ignore_index=True)
    if case == "aurc-negative":
        table.loc[table["metric"] == "aurc", "value"] = -5.0
    elif case == "auroc-7":
        table.loc[table["metric"] == "auroc_f", "value"] = 7.0
    elif case == "aurc-infinite":
        table.loc[0, "value"] = np.inf
    elif case == "text-value":
        table["value"] = table["value"].astype(object)
        table.loc[2, "value"] = "high"
    elif case == "complex-value":
        table["value"] = table["value"].astype(str).str.cat(["+1j"] * len(table))
    elif case == "fractional-seed":
        table["seed"] = table["seed"] + 0.5
    return table


REPORT_CASES = {
    "duplicated-row-other-value": "same result",
    "duplicated-row-same-value": "same result",
    "aurc-negative": "'aurc'",
    "auroc-7": "'auroc_f'",
    "aurc-infinite": "'aurc'",
    "text-value": "'value'",
    "complex-value": "'value'",
    "fractional-seed": "'seed'",
}


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("case", list(REPORT_CASES))
def test_report_refuses_hostile_results_tables(tmp_path, case, suffix):
    folder = tmp_path / "run"
    table = _hostile(_results(folder), case)
    path = folder / f"results{suffix}"
    if suffix == ".csv":
        table.to_csv(path, index=False)
    elif case in ("text-value", "complex-value"):
        pytest.skip("a Parquet column holds one type")
    else:
        table.to_parquet(path, index=False)
    before = digests(folder)
    done = run_cli("report", str(folder))
    assert_one_line_error(done, f"results{suffix}", REPORT_CASES[case])
    assert digests(folder) == before
    assert not (folder / "report.html").exists()


def test_report_reads_the_csv_that_evaluate_writes(tmp_path):
    outputs = outputs_npz(tmp_path / "o.npz", k=K)
    folder = tmp_path / "f"
    written = run_cli("evaluate", str(outputs), "--out", str(folder / "results.csv"))
    assert written.returncode == 0, written.stderr
    done = run_cli("report", str(folder))
    assert done.returncode == 0, done.stderr
    assert (folder / "report.html").is_file()


# --- the shared functions themselves ----------------------------------------------------------


def test_results_check_keeps_a_valid_table_as_it_is(tmp_path):
    table = _results(tmp_path)
    checked = check_results_table(table, "t", metric_bounds())
    pd.testing.assert_frame_equal(checked, table)


def test_npz_headers_read_no_array(tmp_path):
    path = outputs_npz(tmp_path / "o.npz", n=50, k=3)
    headers = npz_headers(path, "outputs")
    assert headers["logits"] == ((50, 3), np.dtype(np.float64))
    assert headers["labels"][0] == (50,)


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [("inference", "mc_samples", 10**9), ("analysis", "n_bootstrap", 10**12)],
)
def test_benchmark_config_sizes_are_refused_before_any_work(tmp_path, section, key, value):
    import yaml

    configs = Path(__file__).resolve().parents[2] / "src" / "fdbench" / "configs"
    data = yaml.safe_load((configs / "fashion_mnist_quick.yaml").read_text())
    data.setdefault(section, {})[key] = value
    config = tmp_path / "big.yaml"
    config.write_text(yaml.safe_dump(data))
    done = run_cli("benchmark", str(config), "--out", str(tmp_path / "run"))
    assert_one_line_error(done, f"{section}.{key}")
    assert not (tmp_path / "run").exists()


def test_evaluate_refuses_a_store_whose_metadata_claims_10_to_the_12_rows(tmp_path):
    import json

    from fdbench.core.io import record_directory_checksums
    from fdbench.outputs import write_outputs

    from .conftest import small_run

    store = tmp_path / "outputs.zarr"
    write_outputs(store, small_run())
    meta = store / "splits" / "0001" / "logits" / "zarr.json"
    spec = json.loads(meta.read_text())
    spec["shape"] = [10**12, spec["shape"][1]]
    meta.write_text(json.dumps(spec))
    record_directory_checksums(store)
    assert_one_line_error(run_cli("evaluate", str(store)), "outputs.zarr", "logits")


def test_yaml_loader_keeps_what_plain_yaml_means():
    assert parse_yaml("") is None
    assert parse_yaml("b: &b {a: 1}\nc:\n  <<: *b\n  d: 2\n") == {
        "b": {"a": 1},
        "c": {"a": 1, "d": 2},
    }
    with pytest.raises(ValueError, match="refers to the node that contains it"):
        parse_yaml("a: &a [*a]\n")


def test_check_integers_and_unique_name_the_culprit():
    with pytest.raises(
        ValueError, match=r"labels: expected integers in \[0, 3\), got 3 at index 2"
    ):
        check_integers(np.array([0, 1, 3]), "labels", low=0, high=3)
    table = pd.DataFrame({"csf": ["MSR", "MLS", "MSR"], "value": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match=r"2 rows \(0, 2\) hold the same result \(csf='MSR'\)"):
        check_unique(table, ["csf"], "t.csv")
