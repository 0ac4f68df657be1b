"""The results and curve tables as pyarrow Tables equal the DataFrames built from the same rows,
and the pyarrow path of ``evaluate_run`` does without pandas (#37: ``fdbench evaluate``'s time)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdbench.core.io import write_tables
from fdbench.evaluation.confidences import evaluate_confidences
from fdbench.evaluation.result_tables import (
    arrow_column,
    concat_tables,
    curves_arrow,
    curves_frame,
    result_columns,
    results_arrow,
    results_frame,
)
from fdbench.evaluation.runs import evaluate_run
from fdbench.outputs import RunOutputs, SplitOutputs
from fdbench.report.console import print_results

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
_number = st.floats(allow_nan=True, allow_infinity=True, width=64)


@st.composite
def _rows(draw):
    n = draw(st.integers(1, 12))
    extra = draw(st.lists(st.sampled_from(["std", "ci_lower", "ci_upper"]), unique=True))
    rows = []
    for _ in range(n):
        row = {
            "dataset": draw(_text),
            "method": draw(_text),
            "seed": draw(st.integers(-(2**40), 2**40)),
            "csf": draw(_text),
            "study": draw(_text),
            "metric": draw(_text),
            "value": draw(_number),
            "n_samples": draw(st.integers(0, 10**9)),
        }
        for key in extra:  # bootstrap intervals: on some rows only
            if draw(st.booleans()):
                row[key] = draw(_number)
        rows.append(row)
    return rows


@settings(max_examples=200, deadline=None)
@given(_rows())
def test_results_arrow_reads_back_as_results_frame(rows):
    frame = results_frame(rows)
    table = results_arrow(rows)
    assert table.column_names == list(frame.columns) == result_columns(rows)
    pd.testing.assert_frame_equal(table.to_pandas(), frame, check_exact=True)
    assert table.schema.equals(pa.Table.from_pandas(frame, preserve_index=False).schema)


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.lists(st.one_of(st.none(), _text), min_size=1, max_size=8),
        st.lists(st.integers(-(2**62), 2**62), max_size=8),
        st.lists(st.one_of(st.none(), _number, st.integers(-(2**40), 2**40)), max_size=8),
    )
)
def test_arrow_column_is_the_column_pandas_makes(values):
    rows = [{"v": v} if v is not None else {} for v in values]
    rows = [{"v": values[0]}, *rows[1:]] if values and values[0] is None else rows
    if not values or all(v is None for v in values):
        return
    expected = pa.Table.from_pandas(pd.DataFrame(rows), preserve_index=False).column("v")
    column = arrow_column([row.get("v") for row in rows])
    got = pa.table({"v": column}).to_pandas()["v"]
    pd.testing.assert_series_equal(got, pd.DataFrame(rows)["v"], check_exact=True)
    if not pa.types.is_null(expected.type):
        assert column.type == expected.type


def test_arrow_column_leaves_other_values_to_pyarrow():
    assert arrow_column([True, False]).to_pylist() == [True, False]
    assert arrow_column([b"x"]).type == pa.binary()


def _points(rng, n):
    return tuple(rng.random(n) for _ in range(3))


def _curves(rng, studies=("iid", "shifted"), csfs=("MSR", "PE")):
    return [
        (study, [(csf, _points(rng, int(rng.integers(1, 40)))) for csf in csfs])
        for study in studies
    ]


@pytest.mark.parametrize(
    "info", [{"dataset": "d", "method": "m", "seed": 3}, {"dataset": "", "method": "é", "seed": 0}]
)
def test_curves_arrow_reads_back_as_curves_frame(info):
    rng = np.random.default_rng(0)
    curves = _curves(rng)
    frame = curves_frame(curves, info)
    table = curves_arrow(curves, info)
    assert table.column_names == list(frame.columns)
    pd.testing.assert_frame_equal(table.to_pandas(), frame, check_exact=True)
    assert table.schema.equals(pa.Table.from_pandas(frame, preserve_index=False).schema)


def test_curves_arrow_needs_no_same_lengths():
    rng = np.random.default_rng(1)
    curves = [(s, [(c, _points(rng, n))]) for s, c, n in [("a", "x", 1), ("b", "y", 7)]]
    table = curves_arrow(curves, {"dataset": "d", "method": "m", "seed": 0})
    assert table.column("study").to_pylist() == ["a"] + ["b"] * 7
    assert table.column("csf").to_pylist() == ["x"] + ["y"] * 7


def _run(rng, n=400, k=4):
    labels = rng.integers(0, k, n)
    logits = rng.standard_normal((n, k)) + 2.0 * np.eye(k)[labels]
    shifted = rng.standard_normal((n, k))
    return RunOutputs(
        splits={
            "iid": SplitOutputs(logits=logits, labels=labels, kind="iid"),
            "shifted": SplitOutputs(logits=shifted, labels=labels, kind="corruption"),
        },
        meta={"dataset": "toy", "method": "ce", "seed": 2},
    )


@pytest.mark.parametrize("bootstrap", [0, 20])
def test_evaluate_run_arrow_equals_pandas(bootstrap):
    run = _run(np.random.default_rng(3))
    kwargs = {"n_bootstrap": bootstrap, "return_curves": True}
    results, curves = evaluate_run(run, **kwargs)
    results_a, curves_a = evaluate_run(run, output="arrow", **kwargs)
    assert isinstance(results_a, pa.Table) and isinstance(curves_a, pa.Table)
    pd.testing.assert_frame_equal(results_a.to_pandas(), results, check_exact=True)
    pd.testing.assert_frame_equal(curves_a.to_pandas(), curves, check_exact=True)
    alone = evaluate_run(run, n_bootstrap=bootstrap, output="arrow")
    pd.testing.assert_frame_equal(alone.to_pandas(), results, check_exact=True)


def test_unknown_output_is_refused():
    run = _run(np.random.default_rng(4))
    with pytest.raises(ValueError, match="output must be one of"):
        evaluate_run(run, output="polars")
    with pytest.raises(ValueError, match="output must be one of"):
        evaluate_confidences(
            {"iid": np.zeros(3, int)},
            {"iid": np.zeros(3, int)},
            {"iid": {"c": np.ones(3)}},
            output="",
        )


def test_concat_tables_fills_a_missing_column():
    a = [
        {
            "dataset": "",
            "method": "",
            "seed": 0,
            "csf": "c",
            "study": "s",
            "metric": "m",
            "value": 1.0,
            "n_samples": 3,
        }
    ]
    b = [{**a[0], "std": 0.5}]
    frame = concat_tables([results_frame(a), results_frame(b)])
    table = concat_tables([results_arrow(a), results_arrow(b)])
    pd.testing.assert_frame_equal(table.to_pandas(), frame, check_exact=True)


def test_written_tables_read_back_equal(tmp_path):
    rng = np.random.default_rng(5)
    results, curves = evaluate_run(_run(rng), n_bootstrap=10, return_curves=True, output="arrow")
    frames = {"results": results.to_pandas(), "curves": curves.to_pandas()}
    write_tables(
        {tmp_path / "a" / "results.parquet": results, tmp_path / "a" / "curves.parquet": curves}
    )
    write_tables(
        {
            tmp_path / "b" / "results.parquet": frames["results"],
            tmp_path / "b" / "curves.parquet": frames["curves"],
        }
    )
    for name in ("results", "curves"):
        a = pd.read_parquet(tmp_path / "a" / f"{name}.parquet")
        b = pd.read_parquet(tmp_path / "b" / f"{name}.parquet")
        pd.testing.assert_frame_equal(a, b, check_exact=True)
        assert pq.read_metadata(tmp_path / "a" / f"{name}.parquet").num_rows == len(b)
    write_tables({tmp_path / "a" / "results.csv": results})
    write_tables({tmp_path / "b" / "results.csv": frames["results"]})
    assert (tmp_path / "a" / "results.csv").read_bytes() == (
        tmp_path / "b" / "results.csv"
    ).read_bytes()


def test_print_results_same_for_frame_and_arrow(capsys):
    rng = np.random.default_rng(6)
    results = evaluate_run(_run(rng), n_bootstrap=10, output="arrow")
    print_results(results)
    from_arrow = capsys.readouterr().out
    print_results(results.to_pandas())
    assert capsys.readouterr().out == from_arrow
    assert "shifted" in from_arrow and "iid" in from_arrow and "[" in from_arrow


def test_print_results_means_duplicate_rows_and_leaves_out_empty_ones(capsys):
    base = {"dataset": "", "method": "", "seed": 0, "study": "s", "n_samples": 10}
    rows = [
        {**base, "csf": "a", "metric": "aurc", "value": 0.1},
        {**base, "csf": "a", "metric": "aurc", "value": 0.3},
        {**base, "csf": "a", "metric": "accuracy", "value": 0.75},
        {**base, "csf": "b", "metric": "aurc", "value": float("nan")},
        {**base, "csf": "b", "metric": "accuracy", "value": float("nan")},
        {**base, "csf": "c", "metric": "aurc", "value": 0.05},
        {**base, "csf": "c", "metric": "ece", "value": float("nan")},
    ]
    print_results(results_frame(rows))
    out = capsys.readouterr().out
    assert "200.00" in out and "50.00" in out  # (0.1 + 0.3) / 2 and 0.05, x 1000
    assert "accuracy = 0.7500" in " ".join(out.split())
    assert "│ b " not in out  # no number at all: left out, as pivot_table leaves it
    assert "ECE" not in out  # no CSF has one


def test_evaluate_run_arrow_imports_no_pandas(tmp_path):
    """``evaluate_run(..., output="arrow")`` and the tables' Parquet files need no pandas."""
    code = (
        "import sys, numpy as np\n"
        "from fdbench.core.io import write_tables\n"
        "from fdbench.evaluation.runs import evaluate_run\n"
        "from fdbench.outputs import RunOutputs, SplitOutputs\n"
        "rng = np.random.default_rng(0)\n"
        "y = rng.integers(0, 3, 200)\n"
        "run = RunOutputs(splits={'iid': SplitOutputs(logits=rng.standard_normal((200, 3)), "
        "labels=y, kind='iid')}, meta={'dataset': 'd', 'method': 'm', 'seed': 1})\n"
        "r, c = evaluate_run(run, return_curves=True, output='arrow')\n"
        f"write_tables({{__import__('pathlib').Path({str(tmp_path / 'r.parquet')!r}): r}})\n"
        "print('pandas' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "False"
    assert len(pd.read_parquet(tmp_path / "r.parquet")) > 0
