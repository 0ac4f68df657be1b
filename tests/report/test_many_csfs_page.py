"""A training method with 150 CSFs (one data set, one seed, synthetic scores through the real
analysis and metric functions): the figures of its run group (rank distributions, significance
maps, reliability diagrams, curves) draw the top 10 and the references, their captions say so,
every CSF stays in a table, and the page keeps its text legible and its weight under 5 MB
(issue #35)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from fdbench import metrics as M
from fdbench.analysis import StudySamples, bootstrap_analysis, reliability_table
from fdbench.evaluation.curves import curve_table
from fdbench.report.builder import _Builder
from fdbench.report.plots import MIN_TEXT_PX
from fdbench.report.selection import TOP
from fdbench.report.tables import _stem

pytestmark = pytest.mark.slow

N_CSFS = 150
STUDIES = ("iid", "new_class/svhn")
CSFS = ["MSR", "DG-Res", *(f"score{i:03d}" for i in range(N_CSFS - 2))]
INFO = {"dataset": "cifar10", "method": "dg", "seed": 0}


def _scores(rng: np.random.Generator, n: int, strength: np.ndarray):
    residuals = (rng.uniform(size=n) < 0.2).astype(np.float64)
    confidences = {
        csf: rng.normal(size=n) - s * residuals for csf, s in zip(CSFS, strength, strict=True)
    }
    confidences["MSR"] = 1 / (1 + np.exp(-confidences["MSR"]))
    confidences["DG-Res"] = 1 / (1 + np.exp(-confidences["DG-Res"]))
    return residuals, confidences


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    from fdbench.report import write_report

    rng = np.random.default_rng(0)
    # the references rank low: a selection must add them below the top 10
    strength = np.concatenate([[0.1, 0.2], rng.uniform(0.5, 2.5, N_CSFS - 2)])
    rows, tasks, curves, by_study = [], [], [], {}
    for study in STUDIES:
        residuals, confidences = _scores(rng, 200, strength)
        by_study[study] = residuals, confidences
        tasks.append(StudySamples("cifar10", "dg", 0, study, residuals, confidences))
        for csf, conf in confidences.items():
            for metric, value in (
                ("aurc", M.aurc(residuals, conf)),
                ("augrc", M.augrc(residuals, conf)),
            ):
                rows.append((*INFO.values(), csf, study, metric, value))
        curves.append(curve_table(residuals, confidences, study=study).assign(**INFO))
    bins = pd.concat(
        reliability_table(residuals, 1 / (1 + np.exp(-conf)), n_bins=10).assign(
            study=study, csf=csf, **INFO
        )
        for study, (residuals, confidences) in by_study.items()
        for csf, conf in confidences.items()
    )
    results = pd.DataFrame(
        rows, columns=["dataset", "method", "seed", "csf", "study", "metric", "value"]
    )
    folder = tmp_path_factory.mktemp("many_csfs")
    drawn: dict[str, tuple] = {}
    original = _Builder.figure

    def figure(self, draw, args, name, alt, colours=None):
        drawn[_stem(name)] = args
        return original(self, draw, args, name, alt, colours)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_Builder, "figure", figure)
        path = write_report(
            folder,
            results,
            bootstrap=bootstrap_analysis(tasks, metrics=("aurc", "augrc"), n_resamples=20, seed=0),
            curves=pd.concat(curves, ignore_index=True),
            reliability=bins,
            read_files=False,
            processes=1,
        )
    manifest = json.loads((folder / "report_manifest.json").read_text())
    return folder, path.read_text(encoding="utf-8"), manifest, drawn


def _best_first(folder, name: str) -> list[str]:
    return list(pd.read_csv(folder / "tables" / f"{name}.csv").iloc[:, 0])


def test_rank_figures_draw_the_top_10_and_the_references_by_the_table_order(page):
    folder, text, _, drawn = page
    for metric in ("aurc", "augrc"):
        ranked = _best_first(folder, f"rank_{metric}_cifar10-dg")
        assert sorted(ranked) == sorted(CSFS)  # every CSF in the table
        expected = ranked[:TOP] + [c for c in ranked[TOP:] if c in ("MSR", "DG-Res")]
        ranks, order, _, total = drawn[f"rank_distribution_{metric}_cifar10-dg"]
        assert order == expected and total == N_CSFS and len(expected) == TOP + 2
        assert set(ranks["csf"]) == set(expected)
        maps, order, _, _ = drawn[f"significance_{metric}_cifar10-dg"]
        assert order == expected
        assert set(maps["csf_a"]) | set(maps["csf_b"]) == set(expected)
        assert (
            f"the top {TOP} of {N_CSFS} CSFs by mean bootstrap rank ({metric.upper()}, all "
            "studies), plus the references DG-Res, MSR; every CSF is in the table above"
        ) in text


def test_reliability_and_curves_draw_a_stated_selection(page):
    folder, text, _, drawn = page
    reliability, _ = drawn["reliability_cifar10-dg"]
    shown = list(dict.fromkeys(reliability["csf"]))
    assert len(shown) == TOP + 2 and {"MSR", "DG-Res"} <= set(shown)
    by = "mean rank of the seed-mean AUGRC over 2 studies"
    assert f"the top {TOP} of {N_CSFS} CSFs by {by}, plus the references DG-Res, MSR" in text
    # the best by that ranking: mean over the studies of the rank of the AUGRC
    augrc = pd.read_csv(folder / "tables" / "augrc_cifar10-dg.csv", index_col=0)
    mean_rank = augrc.rank(axis=0).mean(axis=1).sort_values(kind="stable")
    assert set(shown) - {"MSR", "DG-Res"} <= set(mean_rank.index[:TOP])
    _, csfs, _, _ = drawn["curves_cifar10-dg"]
    assert len(csfs) <= 4 + 2 and {"MSR", "DG-Res"} <= set(csfs)
    assert f"the top 4 of {N_CSFS} CSFs by {by}, plus the references DG-Res, MSR" in text


def test_the_page_stays_legible_and_light(page):
    folder, text, manifest, _ = page
    sizes = {k: v for k, v in manifest["figure_min_text_px"].items() if v is not None}
    assert sizes and min(sizes.values()) >= MIN_TEXT_PX - 0.01
    assert len(text.encode("utf-8")) <= 5_000_000
    # every per-method figure is a selection: none grows with the 150 CSFs
    for name in ("significance_augrc_cifar10-dg", "reliability_cifar10-dg"):
        assert (folder / "figures" / f"{name}.png").stat().st_size < 150_000
