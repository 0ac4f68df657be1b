"""Epoch time, inference time and i.i.d. accuracy of one ce run on a benchmark config.

Usage: PYTHONPATH=src python benchmarks/training_speed.py src/fdbench/configs/fashion_mnist.yaml \
    [--experiment fashion_mnist] [--method ce_dropout] [--epochs N] [--width W] [--threads T]
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np

from fdbench.jobs.plan import parse_config
from fdbench.outputs import read_outputs
from fdbench.training import build_experiments, run_training_job
from fdbench.training.jobs import run_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("config")
    parser.add_argument("--experiment", default="fashion_mnist")
    parser.add_argument("--method", default="ce_dropout")
    parser.add_argument("--epochs", type=int)
    parser.add_argument("--width", type=int)
    parser.add_argument("--threads", type=int)
    args = parser.parse_args()
    import yaml

    with open(args.config, encoding="utf-8") as fh:
        raw = yaml.safe_load(fh)
    if args.epochs:
        raw["training"]["epochs"] = args.epochs
    if args.width:
        raw["architecture"].setdefault("options", {})["width"] = args.width
    if args.threads:
        raw["training"]["threads"] = args.threads
    raw["data"]["experiments"] = [args.experiment]
    config = parse_config(raw)
    t = time.perf_counter()
    (experiment,) = build_experiments(config)
    print(f"build experiments: {time.perf_counter() - t:.1f} s")
    epochs = config.method(args.method).candidates()[0].epochs or config.training.epochs
    with tempfile.TemporaryDirectory() as out:
        from fdbench.training import train_or_load

        t = time.perf_counter()
        train_or_load(config, experiment, args.method, 0, out)
        train_s = time.perf_counter() - t
        t = time.perf_counter()
        run_training_job(config, experiment, args.method, 0, out)
        infer_s = time.perf_counter() - t
        run = read_outputs(run_dir(out, experiment.name, args.method, 0) / "outputs.zarr")
    n_inf = sum(s.n_samples for s in run.splits.values())
    iid = run.splits["iid"]
    acc = float(np.mean(iid.logits.argmax(axis=1) == iid.labels))
    n = len(experiment.train.labels)
    print(
        f"{experiment.name} {args.method}: {n} train images, {epochs} epochs, "
        f"train {train_s:.1f} s ({train_s / epochs:.1f} s/epoch incl. val scoring), "
        f"inference+write {infer_s:.1f} s for {n_inf} images in {len(run.splits)} splits, "
        f"iid accuracy {acc:.4f}"
    )


if __name__ == "__main__":
    main()
