"""Tables of per-sample losses: the same metrics as labels/predictions where both exist, a
brute-force AUGRC/AURC for continuous residuals, declared columns, several models."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdbench.core.validation import loss_table_columns
from fdbench.evaluation.loss_comparisons import (
    loss_table_leaderboard,
    loss_table_operating_points,
    paired_tasks,
)
from fdbench.evaluation.loss_tables import (
    evaluate_loss_table,
    is_loss_table,
    loss_table,
    loss_table_curves,
    read_loss_table,
)
from fdbench.evaluation.operating_points import parse_operating_point, table_operating_points
from fdbench.evaluation.tables import evaluate_table, read_confidence_table


def _classifier_table(seed: int = 0, n: int = 240) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    label = rng.integers(0, 4, n)
    wrong = rng.random(n) < 0.3
    prediction = np.where(wrong, (label + 1) % 4, label)
    study = np.where(np.arange(n) < n // 2, "iid", "shifted")
    return pd.DataFrame(
        {
            "study": study,
            "label": label,
            "prediction": prediction,
            "msr": (~wrong) + rng.normal(0, 0.8, n),
            "tied": np.round((~wrong) + rng.normal(0, 0.8, n)),
        }
    )


def test_every_metric_from_correct_equals_labels_predictions(tmp_path):
    frame = _classifier_table()
    frame.to_csv(tmp_path / "labels.csv", index=False)
    by_labels, curves_labels = evaluate_table(
        read_confidence_table(tmp_path / "labels.csv"), n_bootstrap=25, seed=3, return_curves=True
    )
    correct = (frame["label"] == frame["prediction"]).astype(int)
    losses = frame.drop(columns=["label", "prediction"]).assign(correct=correct)
    table = loss_table(losses)
    by_losses = evaluate_loss_table(table, n_bootstrap=25, seed=3)
    keys = ["csf", "study", "metric"]
    merged = by_losses.merge(by_labels, on=keys, suffixes=("", "_labels"), validate="1:1")
    assert len(merged) == len(by_losses) > 0
    # every metric a table of losses gives is in the labels' results, with the same value
    assert set(by_losses["metric"]) <= set(by_labels["metric"])
    for column in ("value", "std", "ci_lower", "ci_upper", "n_samples"):
        np.testing.assert_array_equal(merged[column], merged[f"{column}_labels"], err_msg=column)
    # the metrics that need labels are the only ones missing
    assert set(by_labels["metric"]) - set(by_losses["metric"]) == {"aurc_ba", "augrc_ba"}
    curves = loss_table_curves(table)
    columns = ["study", "csf", "coverage", "selective_risk", "generalized_risk"]
    pd.testing.assert_frame_equal(curves[columns], curves_labels[columns])
    # the same residuals as a `residual` column or a declared quality give the same numbers
    rest = frame.drop(columns=["label", "prediction"])
    for other in (
        loss_table(rest.assign(residual=1 - correct)),
        loss_table(rest.assign(judge=correct), quality="judge"),
    ):
        again = evaluate_loss_table(other, n_bootstrap=25, seed=3)
        pd.testing.assert_frame_equal(again, by_losses)


def test_operating_points_from_correct_equal_labels_predictions(tmp_path):
    frame = _classifier_table(seed=1, n=400)
    frame.to_csv(tmp_path / "labels.csv", index=False)
    correct = (frame["label"] == frame["prediction"]).astype(int)
    table = loss_table(frame.drop(columns=["label", "prediction"]).assign(correct=correct))
    for text in ("alpha=0.3,delta=0.1", "alpha=0.3,delta=0.1,calibration=iid"):
        request = parse_operating_point(text, seed=2)
        ours = loss_table_operating_points(table, request)
        theirs = table_operating_points(read_confidence_table(tmp_path / "labels.csv"), request)
        pd.testing.assert_frame_equal(ours, theirs[ours.columns], check_dtype=False)


def _brute_force(residuals, confidence, weight):
    """AURC and AUGRC from METRICS.md, literally: one point per distinct threshold, an end
    point at coverage 0, trapezoids."""
    r, c, w = (np.asarray(a, dtype=np.float64) for a in (residuals, confidence, weight))
    coverage, selective, generalised = [], [], []
    for tau in sorted(set(c.tolist())):
        accepted = c >= tau
        coverage.append(w[accepted].sum() / w.sum())
        generalised.append((w * r)[accepted].sum() / w.sum())
        selective.append((w * r)[accepted].sum() / w[accepted].sum())
    coverage.append(0.0)
    generalised.append(0.0)
    selective.append(selective[-1])
    aurc = augrc = 0.0
    for i in range(len(coverage) - 1):
        width = coverage[i] - coverage[i + 1]
        aurc += width * (selective[i] + selective[i + 1]) / 2
        augrc += width * (generalised[i] + generalised[i + 1]) / 2
    return aurc, augrc


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0, 5, allow_nan=False),
            st.integers(-3, 3),
            st.sampled_from([0.5, 1.0, 2.0]),
        ),
        min_size=1,
        max_size=30,
    ),
    st.booleans(),
)
def test_continuous_residuals_agree_with_brute_force(rows, weighted):
    residual, confidence, weight = (np.array(v, dtype=np.float64) for v in zip(*rows, strict=True))
    if not weighted:
        weight = np.ones_like(residual)
    frame = pd.DataFrame({"residual": residual, "conf": confidence})
    if weighted:
        frame["weight"] = weight
    results = evaluate_loss_table(loss_table(frame)).set_index("metric")["value"]
    aurc, augrc = _brute_force(residual, confidence, weight)
    assert results["augrc"] == pytest.approx(augrc, rel=1e-9, abs=1e-12)
    assert results["aurc"] == pytest.approx(aurc, rel=1e-9, abs=1e-12)


def test_formats_read_the_same(tmp_path):
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(
        {
            "id": [f"q{i}" for i in range(50)],
            "question": [f"what is {i}?" for i in range(50)],
            "residual": rng.random(50),
            "sequence_likelihood": rng.random(50),
            "verbalised": rng.integers(0, 10, 50),
        }
    )
    frame.to_csv(tmp_path / "t.csv", index=False)
    frame.to_parquet(tmp_path / "t.parquet")
    frame.to_json(tmp_path / "t.jsonl", orient="records", lines=True)
    tables = [read_loss_table(tmp_path / f"t.{s}") for s in ("csv", "parquet", "jsonl")]
    for other in tables[1:]:
        pd.testing.assert_frame_equal(other, tables[0])
    assert [c for c in tables[0].columns[6:]] == ["sequence_likelihood", "verbalised"]
    assert all(is_loss_table(tmp_path / f"t.{s}") for s in ("csv", "parquet", "jsonl"))


@pytest.mark.parametrize(
    ("columns", "flags", "named"),
    [
        (["correct", "label", "conf"], {}, ["'correct'", "'label'"]),
        (["correct", "residual", "conf"], {}, ["'correct'", "'residual'"]),
        (["loss", "error", "conf"], {}, ["'loss'", "'error'"]),
        (["residual", "loss", "conf"], {}, ["'residual'", "'loss'"]),
        (["loss", "error", "conf"], {"residual": "loss"}, ["'loss'", "'error'"]),
    ],
)
def test_ambiguous_layouts_are_refused_naming_the_columns(columns, flags, named):
    with pytest.raises(ValueError, match="ambiguous") as err:
        loss_table_columns(columns, "t.csv", **flags)
    message = str(err.value)
    assert "\n" not in message
    assert all(name in message for name in named)


def test_declared_columns_resolve_the_layout():
    roles = loss_table_columns(["loss", "error", "conf"], "t", residual="loss", confidence=["conf"])
    assert (roles.loss, roles.kind, roles.confidences) == ("loss", "residual", ("conf",))
    roles = loss_table_columns(["correct", "a", "b", "study"], "t")
    assert (roles.loss, roles.confidences) == ("correct", None)
    with pytest.raises(ValueError, match="looks like one"):
        loss_table_columns(["loss", "conf"], "t")
    with pytest.raises(ValueError, match="one loss column"):
        loss_table_columns(["a", "b"], "t", residual="a", correct="b")
    with pytest.raises(ValueError, match="not found"):
        loss_table_columns(["correct", "a"], "t", confidence=["b"])


@pytest.mark.parametrize(
    ("column", "values", "match"),
    [
        ("correct", [0, 2], "0 or 1"),
        ("residual", [0.1, -1.0], ">= 0"),
        ("conf", [0.1, np.nan], "non-finite"),
        ("weight", [1.0, -1.0], "weight"),
    ],
)
def test_bad_values_are_refused_naming_the_column(column, values, match):
    frame = pd.DataFrame({"correct": [0, 1], "residual": [0.5, 0.5], "conf": [0.1, 0.2]})
    frame = frame.drop(columns=["residual" if column != "residual" else "correct"])
    frame[column] = values
    with pytest.raises(ValueError, match=match):
        loss_table(frame)


def _two_models(n: int = 150) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    frames = []
    for model, noise in (("small", 1.5), ("large", 0.5)):
        quality = rng.random(n)
        frames.append(
            pd.DataFrame(
                {
                    "model": model,
                    "sample_id": rng.permutation(n),
                    "residual": 1 - quality,
                    "oracle": quality,
                    "noisy": quality + rng.normal(0, noise, n),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def test_long_format_evaluates_each_model_as_its_own_table():
    frame = _two_models()
    both = evaluate_loss_table(loss_table(frame), n_bootstrap=10)
    for model, part in frame.groupby("model", sort=False):
        alone = evaluate_loss_table(loss_table(part.drop(columns="model")), n_bootstrap=10)
        mine = both[both["method"] == model].reset_index(drop=True)
        pd.testing.assert_frame_equal(mine.drop(columns="method"), alone.drop(columns="method"))


def test_models_are_paired_by_sample_id():
    frame = _two_models()
    tasks = paired_tasks(loss_table(frame))
    assert [t.method for t in tasks] == ["small", "large"]
    for task in tasks:
        ids = frame[frame["model"] == task.method]["sample_id"].to_numpy()
        # position p holds the same sample id in both models
        order = pd.unique(frame["sample_id"].astype(str))
        np.testing.assert_array_equal(order[task.positions], ids.astype(str))
    unpaired = frame.drop(columns="sample_id").iloc[:-1]
    with pytest.raises(ValueError, match="sample_id"):
        paired_tasks(loss_table(unpaired))


def test_leaderboard_across_estimators_and_models():
    table = loss_table(_two_models())
    results = evaluate_loss_table(table)
    board = loss_table_leaderboard(table, results, n_bootstrap=60, seed=1)
    names = {"small-oracle", "small-noisy", "large-oracle", "large-noisy"}
    assert set(board["ranks"]["scoring_method"]) == names
    # continuous residuals: AUGRC and AURC, no AUROC_f
    assert set(board["deltas"]["metric"]) == {"augrc", "aurc"}
    deltas = board["deltas"].set_index(["study", "metric", "scoring_method", "reference"])
    # the oracle beats the noisy estimator of the same model, on every resample's interval
    for model in ("small", "large"):
        row = deltas.loc[("all studies", "augrc", f"{model}-oracle", f"{model}-noisy")]
        assert row["upper"] < 0 and row["delta"] < 0
    # Δ is the difference of the two estimates of the results table
    augrc = results[results["metric"] == "augrc"].set_index(["method", "csf"])["value"]
    row = deltas.loc[("iid", "augrc", "large-noisy", "small-noisy")]
    assert row["delta"] == pytest.approx(augrc["large", "noisy"] - augrc["small", "noisy"])
    significant = board["significance"]
    pair = significant[
        (significant["metric"] == "augrc")
        & (significant["scoring_method_a"] == "large-oracle")
        & (significant["scoring_method_b"] == "large-noisy")
    ]
    assert pair["significant"].all()


def test_identical_models_have_zero_paired_delta():
    frame = _two_models()
    small = frame[frame["model"] == "small"]
    twins = pd.concat([small, small.assign(model="twin")], ignore_index=True)
    table = loss_table(twins)
    board = loss_table_leaderboard(table, evaluate_loss_table(table), n_bootstrap=30)
    deltas = board["deltas"]
    same = deltas[deltas["scoring_method"].str[-5:] == deltas["reference"].str[-5:]]
    same = same[same["scoring_method"] != same["reference"]]
    assert len(same) and (same[["mean_delta", "lower", "upper"]].to_numpy() == 0).all()


def test_weights_are_refused_where_resamples_cannot_carry_them():
    frame = pd.DataFrame({"correct": [0, 1, 1], "a": [0.1, 0.5, 0.9], "weight": [1, 2, 1]})
    table = loss_table(frame)
    with pytest.raises(ValueError, match="weight"):
        loss_table_leaderboard(table, evaluate_loss_table(table), n_bootstrap=10)
    with pytest.raises(ValueError, match="weight"):
        loss_table_operating_points(table, parse_operating_point("alpha=0.3,delta=0.1"))


def test_text_columns_named_like_labels_are_no_ambiguity():
    """A generated answer in ``prediction`` and a reference in ``target`` are text: neither a
    class nor a confidence."""
    frame = pd.DataFrame(
        {
            "prediction": ["Paris", "Lyon", "Rome"],
            "target": ["Paris", "Paris", "Rome"],
            "correct": [1, 0, 1],
            "likelihood": [0.9, 0.4, 0.7],
        }
    )
    table = loss_table(frame)
    assert list(table.columns[6:]) == ["likelihood"]
    with pytest.raises(ValueError, match="ambiguous"):
        loss_table(frame.assign(prediction=[0, 1, 2]))


def test_group_names_the_study_and_empty_cells_are_refused():
    frame = pd.DataFrame({"group": ["a", "b", "a"], "residual": [0.2, 0.0, 1.5], "c": [1, 2, 3]})
    table = loss_table(frame)
    assert list(table["study"]) == ["a", "b", "a"] and set(table["model"]) == {""}
    results = evaluate_loss_table(table)
    assert list(dict.fromkeys(results["study"])) == ["a", "b"]
    with pytest.raises(ValueError, match="'group', row 1 is empty"):
        loss_table(frame.assign(group=["a", None, "a"]))
