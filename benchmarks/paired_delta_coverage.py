"""Coverage of the paired Δ percentile interval on simulated data with a known Δ.

Each simulation draws a test set of n samples: failures with probability p, and two correlated
CSFs (a = z1 − d_a·r, b = ρ·z1 + √(1 − ρ²)·z2 − d_b·r, z1, z2 standard normal, r the failure
label). With continuous confidences AUROC_f = Φ(d/√2) in the population, and AUGRC =
(1 − AUROC_f)·acc·(1 − acc) + (1 − acc)²/2 (Traub et al., NeurIPS 2024, Eq. 5), so the true
ΔAUGRC = (Φ(d_b/√2) − Φ(d_a/√2))·p·(1 − p) and ΔAUROC_f = Φ(d_a/√2) − Φ(d_b/√2). The paired
bootstrap (:func:`fdbench.analysis.paired.paired_bootstrap`) and the percentile interval
(:func:`fdbench.analysis.leaderboard.paired_delta`) are those of the leaderboard; the script
prints how often the 95 % interval holds the true Δ.

    PYTHONPATH=src python benchmarks/paired_delta_coverage.py [--simulations 1000]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from fdbench.analysis.leaderboard import paired_delta
from fdbench.analysis.paired import PairedSamples, paired_bootstrap

P_FAIL, D_A, D_B, RHO = 0.2, 1.2, 0.9, 0.6


def _phi(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def true_deltas() -> dict[str, float]:
    """Population Δ = metric(a) − metric(b) of AUGRC and AUROC_f."""
    auroc_a, auroc_b = _phi(D_A / math.sqrt(2)), _phi(D_B / math.sqrt(2))
    return {
        "augrc": (auroc_b - auroc_a) * P_FAIL * (1 - P_FAIL),
        "auroc_f": auroc_a - auroc_b,
    }


def coverage(
    n_simulations: int, n: int = 1000, n_resamples: int = 500, seed: int = 0
) -> dict[str, float]:
    """Share of simulations whose 95 % paired-Δ interval holds the true Δ, per metric."""
    truth = true_deltas()
    hits = dict.fromkeys(truth, 0)
    for i in range(n_simulations):
        rng = np.random.default_rng([seed, i])
        r = (rng.uniform(size=n) < P_FAIL).astype(np.float64)
        z1, z2 = rng.normal(size=n), rng.normal(size=n)
        confidences = {"MSR": z1 - D_A * r, "PE": RHO * z1 + math.sqrt(1 - RHO**2) * z2 - D_B * r}
        table = paired_bootstrap(
            [PairedSamples("sim", "ce", 0, "iid", r, confidences)],
            metrics=list(truth),
            n_resamples=n_resamples,
            seed=i,
        )
        for metric, delta in truth.items():
            rows = table[table["metric"] == metric]
            a = rows.loc[rows["scoring_method"] == "MSR", "value"].to_numpy()
            b = rows.loc[rows["scoring_method"] == "PE", "value"].to_numpy()
            _, lo, hi = paired_delta(a, b)
            hits[metric] += lo <= delta <= hi
    return {metric: count / n_simulations for metric, count in hits.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=500)
    args = parser.parse_args()
    result = coverage(args.simulations, args.samples, args.resamples)
    print(f"true deltas: {true_deltas()}")
    for metric, share in result.items():
        se = math.sqrt(share * (1 - share) / args.simulations)
        print(f"{metric}: coverage {share:.3f} ± {se:.3f} over {args.simulations} simulations")


if __name__ == "__main__":
    main()
