"""``fdbench evaluate`` on tables of losses: formats, adapters, refusals in one line."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from fdbench import metrics as M
from fdbench.integrations.lm_polygraph import write_lm_polygraph_export
from tests._cli import run_cli


def _one_line_error(done, *names: str) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert all(name in lines[0] for name in names), lines[0]
    return lines[0]


def test_ambiguous_layout_is_refused_in_one_line_naming_the_columns(tmp_path):
    path = tmp_path / "both.csv"
    pd.DataFrame({"correct": [1, 0], "label": [1, 2], "conf": [0.9, 0.2]}).to_csv(path)
    _one_line_error(run_cli("evaluate", str(path)), "'correct'", "'label'", "ambiguous")
    path = tmp_path / "two_losses.jsonl"
    frame = pd.DataFrame({"loss": [0.1, 0.5], "error": [1, 0], "conf": [0.9, 0.2]})
    frame.to_json(path, orient="records", lines=True)
    _one_line_error(run_cli("evaluate", str(path)), "'loss'", "'error'", "ambiguous")
    _one_line_error(run_cli("evaluate", str(path), "--residual", "loss", "--openmax"), "--openmax")


def test_lm_polygraph_export_evaluates(tmp_path):
    rng = np.random.default_rng(0)
    rouge = rng.random(80)
    manager = SimpleNamespace(
        estimations={
            ("sequence", "MaximumSequenceProbability"): (-rouge + rng.normal(0, 0.3, 80)).tolist(),
            ("sequence", "LexicalSimilarity"): rng.random(80).tolist(),
            ("token", "MaximumTokenProbability"): rng.random(400).tolist(),
        },
        gen_metrics={
            ("sequence", "Rouge_rougeL"): rouge.tolist(),
            ("sequence", "Accuracy"): (rouge > 0.5).astype(float).tolist(),
        },
        stats={"input_texts": [f"question {i}" for i in range(80)]},
    )
    path = write_lm_polygraph_export(manager, tmp_path / "polygraph.jsonl")
    first = json.loads(path.read_text().splitlines()[0])
    assert first["input"] == "question 0" and "ue:MaximumSequenceProbability" in first
    out = tmp_path / "run" / "results.csv"
    done = run_cli(
        "evaluate", str(path), "--quality", "metric:Rouge_rougeL", "--bootstrap", "20",
        "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = pd.read_csv(out)
    assert set(results["csf"]) == {"MaximumSequenceProbability", "LexicalSimilarity"}
    augrc = results[
        (results["csf"] == "MaximumSequenceProbability") & (results["metric"] == "augrc")
    ]
    uncertainty = manager.estimations[("sequence", "MaximumSequenceProbability")]
    assert float(augrc["value"].iloc[0]) == M.augrc(1 - rouge, -np.asarray(uncertainty))
    assert (tmp_path / "run" / "paired_deltas.csv").exists()
    # the 0/1 generation metric as correctness
    done = run_cli("evaluate", str(path), "--correct", "metric:Accuracy")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("suffix", ["parquet", "jsonl"])
def test_datasets_style_table_with_a_judge_score(tmp_path, suffix):
    """A Hugging Face datasets-style export: text columns, an id, a judge's score in [0, 1]
    (declared with --quality) and a boolean correctness."""
    rng = np.random.default_rng(1)
    score = rng.random(60)
    frame = pd.DataFrame(
        {
            "id": [f"ex-{i}" for i in range(60)],
            "question": [f"q{i}" for i in range(60)],
            "answer": [f"a{i}" for i in range(60)],
            "score": score,
            "is_correct": score > 0.5,
            "logprob": score + rng.normal(0, 0.2, 60),
        }
    )
    path = tmp_path / f"data.{suffix}"
    if suffix == "parquet":
        frame.to_parquet(path)
    else:
        frame.to_json(path, orient="records", lines=True)
    out = tmp_path / "results.csv"
    done = run_cli(
        "evaluate", str(path), "--quality", "score", "--confidence", "logprob", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    results = pd.read_csv(out).set_index("metric")
    if suffix == "jsonl":  # pandas writes JSON with 10 significant digits
        frame = pd.read_json(path, lines=True, precise_float=True)
    assert results.loc["augrc", "value"] == M.augrc(1 - frame["score"], frame["logprob"])
    done = run_cli("evaluate", str(path), "--correct", "is_correct", "-c", "logprob")
    assert done.returncode == 0, done.stderr
