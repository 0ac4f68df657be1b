"""A small but complete run folder built with the real analysis and metric functions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fdbench import metrics as M
from fdbench.analysis import StudySamples, bootstrap_analysis, calibration_analysis, risk_excess
from fdbench.report import Gallery, curve_table, select_gallery

STUDIES = ("iid", "corruption/noise/3", "new_class/svhn")
CSFS = ("MSR", "MLS", "PE", "DOCTOR")


def _study_data(study: int, seed: int, n: int = 300):
    rng = np.random.default_rng([study, seed])
    residuals = (rng.uniform(size=n) < 0.1 + 0.1 * study).astype(np.float64)
    confidences = {
        csf: rng.normal(size=n) - (0.6 + 0.4 * k) * residuals for k, csf in enumerate(CSFS)
    }
    return residuals, confidences


def build_inputs() -> dict[str, object]:
    rows, tasks, curves, galleries = [], [], [], []
    scaled, residual_by_study, sgr_studies = {}, {}, {}
    for s, study in enumerate(STUDIES):
        for seed in range(2):
            residuals, confidences = _study_data(s, seed)
            tasks.append(StudySamples("cifar10", "ce", seed, study, residuals, confidences))
            for csf, conf in confidences.items():
                values = {
                    "aurc": M.aurc(residuals, conf),
                    "augrc": M.augrc(residuals, conf),
                    "auroc_f": M.auroc_f(residuals, conf),
                    "accuracy": 1 - residuals.mean(),
                    "ece": M.ece(residuals, 1 / (1 + np.exp(-conf))),
                }
                for metric, value in values.items():
                    rows.append(("cifar10", "ce", seed, csf, study, metric, value))
            if seed == 0:
                curves.append(curve_table(residuals, confidences, study=study))
                residual_by_study[study] = residuals
                scaled[study] = {c: 1 / (1 + np.exp(-2 * v)) for c, v in confidences.items()}
                sgr_studies[study] = (residuals, confidences["DOCTOR"])
                images = np.random.default_rng(s).integers(0, 256, (300, 8, 8, 3), dtype=np.uint8)
                for csf in ("MSR", "DOCTOR"):
                    galleries.append(
                        select_gallery(
                            images, residuals, confidences[csf], study=study, csf=csf, k=3
                        )
                    )
    results = pd.DataFrame(
        rows, columns=["dataset", "method", "seed", "csf", "study", "metric", "value"]
    )
    bootstrap = bootstrap_analysis(tasks, metrics=("aurc", "augrc"), n_resamples=30, seed=0)
    _, reliability = calibration_analysis(residual_by_study, scaled, n_bins=10)
    val_r, val_c = _study_data(0, 5, n=2000)
    sgr = risk_excess((val_r, val_c["DOCTOR"]), sgr_studies, [0.05, 0.1, 0.2], 0.1)
    rounding = pd.DataFrame(
        {
            "precision": ["float16", "float32", "float64"],
            "aurc_change": [1.2e-3, 3e-7, 0.0],
            "auroc_f_change": [-2.1e-3, 1e-7, 0.0],
        }
    )
    return {
        "results": results,
        "bootstrap": bootstrap,
        "curves": pd.concat(curves, ignore_index=True),
        "reliability": reliability,
        "gallery": Gallery.concat(galleries),
        "rounding": rounding,
        "sgr": sgr,
    }


@pytest.fixture(scope="session")
def report_inputs() -> dict[str, object]:
    return build_inputs()


@pytest.fixture(scope="session")
def full_report(tmp_path_factory, report_inputs):
    """A report written once from a complete run folder: (run folder, html path, manifest)."""
    import json

    from fdbench.report import write_report

    folder = tmp_path_factory.mktemp("run")
    for name in ("results", "bootstrap", "curves", "reliability"):
        report_inputs[name].to_parquet(folder / f"{name}.parquet")
    report_inputs["rounding"].to_csv(folder / "rounding.csv", index=False)
    report_inputs["sgr"].to_csv(folder / "sgr.csv", index=False)
    report_inputs["gallery"].save(folder / "gallery.npz")
    path = write_report(folder)
    manifest = json.loads((folder / "report_manifest.json").read_text())
    return folder, path, manifest
