"""ECE is not failure detection: the toy example of Bernhardt et al. (TMLR 2022), Section 2.2.3.

Two models predict the same labels. A prediction is correct with probability x ~ U[0, 1]
(correct ~ Ber(x)). Model 1 is calibrated, its confidence is x; model 2 is overconfident with
the same ranking, 0.9 + 0.1·x. On 10 000 simulated samples model 1 has ECE ≈ 0.02 and model 2
ECE ≈ 0.45 (the mean of 0.9·(1 - x)), yet both detect failures equally well: the failure
ROC-AUC depends only on the ranking (≈ 0.83, 5/6 in expectation; the paper reports .82).
ECE uses 40 equal-width bins, as the authors' ``paper_plotting_notebooks/ece_example.ipynb``.

    python examples/ece_vs_auroc.py [--samples 10000] [--seed 0] [--plot toy.png]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from fdbench import metrics as M

N_BINS = 40


def simulate(n_samples: int = 10_000, *, seed: int = 0) -> dict[str, np.ndarray]:
    """Draw x ~ U[0, 1] and correct ~ Ber(x); the residuals and both models' confidences."""
    if n_samples < 2:
        raise ValueError(f"n_samples must be >= 2; got {n_samples}")
    rng = np.random.default_rng(seed)
    x = rng.random(n_samples)
    correct = rng.random(n_samples) < x
    return {
        "residuals": (~correct).astype(np.float64),
        "model 1 (calibrated)": x,
        "model 2 (overconfident)": 0.9 + 0.1 * x,
    }


def scores(sample: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
    """ECE (40 bins) and failure ROC-AUC of each model's confidence."""
    residuals = sample["residuals"]
    return {
        name: {
            "ece": M.ece(residuals, conf, n_bins=N_BINS),
            "auroc_f": M.auroc_f(residuals, conf),
        }
        for name, conf in sample.items()
        if name != "residuals"
    }


def plot(sample: dict[str, np.ndarray], path: Path) -> Path:
    """Histograms of both models' confidences, correct against misclassified (Figure 2)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = scores(sample)
    wrong = sample["residuals"] == 1
    fig, axes = plt.subplots(1, 2, figsize=(10, 2.5))
    bins = np.linspace(0, 1, N_BINS + 1)
    for ax, (name, values) in zip(axes, results.items(), strict=True):
        conf = sample[name]
        ax.hist([conf[~wrong], conf[wrong]], bins=bins, label=["correct", "misclassified"])
        ece, auroc = values["ece"], values["auroc_f"]
        ax.set_title(f"{name}\nECE = {ece:.2f}, failure ROC-AUC = {auroc:.2f}")
        ax.set_xlabel("confidence")
        ax.legend(loc="upper left")
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", type=Path, default=None, help="Write Figure 2 to this file.")
    args = parser.parse_args()
    sample = simulate(args.samples, seed=args.seed)
    for name, values in scores(sample).items():
        print(f"{name:24s} ECE {values['ece']:.3f}   failure ROC-AUC {values['auroc_f']:.3f}")
    if args.plot is not None:
        print(f"wrote {plot(sample, args.plot)}")


if __name__ == "__main__":
    main()
