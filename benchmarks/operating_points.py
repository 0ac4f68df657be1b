"""Certified operating points measured on real outputs, and the rate of population-AURC estimators.

Run: PYTHONPATH=src python benchmarks/operating_points.py [--store PATH] [--splits 1000]

Part 1 draws seeded calibration/test splits of one study of a real outputs store (default: a
store built as the embedded benchmark builds them, the quick Fashion-MNIST experiment,
``ce_dropout`` for one epoch, seed 0; or ``--store`` of a run, e.g.
``RUN/fashion_mnist/ce_dropout/seed0/outputs.zarr``), certifies a threshold of the MSR
confidence on each calibration part and prints, per method, how often the controlled quantity
exceeded alpha on the test part and on the pool, and the coverage kept.
Part 2 draws samples of a synthetic model whose population AURC is known in closed form
(confidence g ~ U(0, 1), P(failure | g) = 0.02 + 0.5 (1 - g)^2, population AURC
0.02 + 0.5/9) and prints the root mean squared error of the plug-in estimators against
sqrt(ln n / n), the rate of Zhou et al. (ICML 2025).
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from importlib import resources
from pathlib import Path

import numpy as np
import yaml

from fdbench import metrics as M


def _build_store(folder: Path) -> Path:
    from fdbench.data.suites.fashion_mnist import fashion_mnist_experiments
    from fdbench.jobs.plan import parse_config
    from fdbench.training.jobs import run_training_job

    data = yaml.safe_load(
        resources.files("fdbench").joinpath("configs/fashion_mnist_quick.yaml").read_text()
    )
    data["training"]["epochs"] = 1
    data["inference"]["mc_samples"] = 0
    data["methods"] = [data["methods"][0] | {"seeds": [0]}]
    data["ensembles"] = []
    experiment = fashion_mnist_experiments(quick=True)[0]
    return run_training_job(parse_config(data), experiment, "ce_dropout", 0, folder)


def _outputs(store: Path, study: str) -> tuple[np.ndarray, np.ndarray]:
    from fdbench.outputs import read_outputs

    split = read_outputs(store).splits[study]
    probs = np.exp(M.log_softmax(split.logits))
    return (probs.argmax(axis=1) != split.labels).astype(np.float64), probs.max(axis=1)


def _simulation(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(args.store) if args.store else _build_store(Path(tmp))
        residuals, confidence = _outputs(store, args.study)
    print(
        f"store {store if args.store else '(built: fashion_mnist quick, ce_dropout, 1 epoch)'}, "
        f"study {args.study}: n = {residuals.size}, error rate {residuals.mean():.4f}, MSR; "
        f"{args.splits} splits, calibration fraction {args.fraction}"
    )
    for alpha, delta in args.levels:
        start = time.perf_counter()
        results = M.simulate_operating_points(
            residuals,
            confidence,
            alpha,
            delta,
            calibration_fraction=args.fraction,
            n_splits=args.splits,
            seed=0,
        )
        print(f"\nalpha = {alpha}, delta = {delta} ({time.perf_counter() - start:.1f} s)")
        print(
            f"{'method':<14}{'violation':>10}{'pool viol.':>11}{'coverage':>10}"
            f"{'test risk':>10}{'gen. risk':>10}{'feasible':>10}"
        )
        for method, row in results.items():
            print(
                f"{method:<14}{row['violation']:>10.3f}{row['pool_violation']:>11.3f}"
                f"{row['coverage']:>10.3f}{row['risk']:>10.4f}{row['generalized_risk']:>10.4f}"
                f"{row['feasible']:>10.3f}"
            )


P0, P1, K = 0.02, 0.5, 2


def _rate(replicates: int) -> None:
    truth = P0 + P1 / (K + 1) ** 2
    rng = np.random.default_rng(0)
    print(f"\npopulation AURC {truth:.6f}; RMSE over {replicates} replicates")
    print(f"{'n':>8}{'harmonic':>12}{'ln':>12}{'empirical':>12}{'sqrt(ln n/n)':>14}"
          f"{'harm./rate':>12}")  # fmt: skip
    for n in (100, 1000, 10000, 100000):
        errors = {"harmonic": [], "ln": [], "empirical": []}
        for _ in range(replicates):
            g = rng.uniform(size=n)
            r = (rng.uniform(size=n) < P0 + P1 * (1 - g) ** K).astype(np.float64)
            errors["harmonic"].append(M.population_aurc(r, g) - truth)
            errors["ln"].append(M.population_aurc(r, g, estimator="ln") - truth)
            errors["empirical"].append(M.aurc(r, g) - truth)
        rmse = {k: math.sqrt(np.mean(np.square(v))) for k, v in errors.items()}
        rate = math.sqrt(math.log(n) / n)
        print(
            f"{n:>8}{rmse['harmonic']:>12.6f}{rmse['ln']:>12.6f}{rmse['empirical']:>12.6f}"
            f"{rate:>14.6f}{rmse['harmonic'] / rate:>12.4f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", help="an outputs store (default: build a small one)")
    parser.add_argument("--study", default="iid")
    parser.add_argument("--splits", type=int, default=1000)
    parser.add_argument("--fraction", type=float, default=0.3)
    parser.add_argument("--replicates", type=int, default=200)
    args = parser.parse_args()
    args.levels = [(0.1, 0.1), (0.15, 0.05), (0.05, 0.1)]
    _simulation(args)
    _rate(args.replicates)


if __name__ == "__main__":
    main()
