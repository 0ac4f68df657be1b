"""A small but complete run folder built with the real analysis and metric functions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fdbench import metrics as M
from fdbench.analysis import (
    StudySamples,
    bootstrap_analysis,
    csf_calibration,
    operating_point_table,
    risk_excess,
)
from fdbench.evaluation.curves import curve_table
from fdbench.report import Gallery, select_gallery

STUDIES = ("iid", "corruption/noise/3", "new_class/svhn")
# two methods of one dataset (the second with a CSF of its own), as a benchmark run has them
METHODS = {"ce": ("MSR", "MLS", "PE", "DOCTOR"), "dg": ("MSR", "MLS", "PE", "DG-Res")}
SEEDS = (0, 1)
PROBABILITIES = ("MSR", "DG-Res")


def _study_data(method: int, study: int, seed: int, n: int = 300):
    rng = np.random.default_rng([method, study, seed])
    residuals = (rng.uniform(size=n) < 0.1 + 0.1 * study + 0.05 * method).astype(np.float64)
    csfs = list(METHODS.values())[method]
    confidences = {
        csf: rng.normal(size=n) - (0.6 + 0.4 * k) * residuals for k, csf in enumerate(csfs)
    }
    for csf in PROBABILITIES:  # probabilities already (not Platt-scaled in the calibration)
        if csf in confidences:
            confidences[csf] = 1 / (1 + np.exp(-confidences[csf]))
    return residuals, confidences


def build_inputs() -> dict[str, object]:
    rows, tasks, curves, galleries, reliability, sgr = [], [], [], [], [], []
    points = []
    for m, method in enumerate(METHODS):
        for seed in SEEDS:
            info = {"dataset": "cifar10", "method": method, "seed": seed}
            by_study = {}
            for s, study in enumerate(STUDIES):
                residuals, confidences = _study_data(m, s, seed)
                by_study[study] = residuals, confidences
                tasks.append(StudySamples("cifar10", method, seed, study, residuals, confidences))
                for csf, conf in confidences.items():
                    values = {
                        "aurc": M.aurc(residuals, conf),
                        "augrc": M.augrc(residuals, conf),
                        "auroc_f": M.auroc_f(residuals, conf),
                        "accuracy": 1 - residuals.mean(),
                        "ece": M.ece(residuals, 1 / (1 + np.exp(-conf))),
                    }
                    for metric, value in values.items():
                        rows.append(("cifar10", method, seed, csf, study, metric, value))
                curves.append(curve_table(residuals, confidences, study=study).assign(**info))
                if seed == 0 and m == 0:
                    images = np.random.default_rng(s).integers(
                        0, 256, (300, 8, 8, 3), dtype=np.uint8
                    )
                    for csf in ("MSR", "DOCTOR"):
                        galleries.append(
                            select_gallery(
                                images, residuals, confidences[csf], study=study, csf=csf, k=3
                            )
                        )
            val_r, val_c = _study_data(m, 0, 10 + seed, n=2000)
            _, bins = csf_calibration(
                val_r,
                val_c,
                {s: by_study[s][0] for s in STUDIES},
                {s: by_study[s][1] for s in STUDIES},
                n_bins=10,
            )
            reliability.append(bins.assign(**info))
            for csf, conf in val_c.items():
                table = risk_excess(
                    (val_r, conf),
                    {s: (by_study[s][0], by_study[s][1][csf]) for s in STUDIES},
                    [0.05, 0.1, 0.2],
                    0.1,
                )
                sgr.append(table.assign(csf=csf, **info))
                points.append(
                    operating_point_table(
                        (val_r, conf),
                        {s: (by_study[s][0], by_study[s][1][csf]) for s in STUDIES},
                        0.2,
                        0.1,
                    ).assign(csf=csf, **info)
                )
    results = pd.DataFrame(
        rows, columns=["dataset", "method", "seed", "csf", "study", "metric", "value"]
    )
    bootstrap = bootstrap_analysis(tasks, metrics=("aurc", "augrc"), n_resamples=30, seed=0)
    rounding = pd.DataFrame(
        {
            "precision": ["float16", "float32", "float64"],
            "aurc": [1.2e-3, 3e-7, 0.0],
            "auroc_f": [-2.1e-3, 1e-7, 0.0],
        }
    )
    return {
        "results": results,
        "bootstrap": bootstrap,
        "curves": pd.concat(curves, ignore_index=True),
        "reliability": pd.concat(reliability, ignore_index=True),
        "gallery": Gallery.concat(galleries),
        "rounding": rounding,
        "sgr": pd.concat(sgr, ignore_index=True),
        "operating_points": pd.concat(points, ignore_index=True),
    }


def write_run_folder(folder, inputs) -> None:
    """Store ``inputs`` in ``folder`` as a benchmark run folder holds them (docs/report.md)."""
    for name in ("results", "bootstrap", "curves", "reliability"):
        inputs[name].to_parquet(folder / f"{name}.parquet")
    inputs["rounding"].to_csv(folder / "rounding.csv", index=False)
    inputs["sgr"].to_csv(folder / "sgr.csv", index=False)
    inputs["operating_points"].to_csv(folder / "operating_points.csv", index=False)
    inputs["gallery"].save(folder / "gallery.npz")


@pytest.fixture(scope="session")
def report_inputs() -> dict[str, object]:
    return build_inputs()


@pytest.fixture(scope="session")
def full_report(tmp_path_factory, report_inputs):
    """A report written once from a complete run folder: (run folder, html path, manifest)."""
    import json

    from fdbench.report import write_report

    folder = tmp_path_factory.mktemp("run")
    write_run_folder(folder, report_inputs)
    path = write_report(folder)
    manifest = json.loads((folder / "report_manifest.json").read_text())
    return folder, path, manifest
