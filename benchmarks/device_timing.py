"""Seconds per training epoch and per MC-dropout pass of fdbench's ResNet-18 on 32 × 32 inputs.

Usage: PYTHONPATH=src python benchmarks/device_timing.py [--device auto|cpu|cuda] \
    [--precision 32|bf16-mixed] [--n 5000] [--batch-size 128] [--mc-samples 2] [--threads T]

What is timed is what fdbench runs: the ResNet-18 of ``fdbench.models.build_model`` (CIFAR
stem, 10 classes, dropout 0.3 at FD-Shifts' placement), trained with the ``ce`` method
(cross-entropy, SGD as in ``configs/fdshifts_cifar10.yaml``, that config's augmentation)
by the Lightning trainer of ``fdbench.training.context.trainer`` on ``--device`` in
``--precision``, and MC-dropout inference by ``fdbench.training.inference.predict_split``
(dropout active, batch norm in eval mode, batches of 500). fdbench runs inference on the CPU
(``TrainContext.fit`` moves the module back there; float64 final layer), so the MC pass is
CPU time whatever ``--device`` is. The data are N random uint8 images with random labels:
time per sample does not depend on the pixel values. One epoch is timed after
``--warmup-steps`` training batches; the time per MC pass is the time of
``predict_split`` with ``--mc-samples`` passes minus its time without, divided by the passes.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from typing import Any

import lightning as L
import numpy as np
import torch

from fdbench.models import build_model
from fdbench.training.context import MethodModule, OptimSettings, quiet_lightning, trainer
from fdbench.training.determinism import deterministic
from fdbench.training.device import DEVICES, PRECISIONS, resolve_device
from fdbench.training.inference import predict_split
from fdbench.training.loader import image_tensor, make_loader
from fdbench.training.methods.ce import CE

#: Training images of FD-Shifts' CIFAR-10 (50 000 minus a 5 000-image validation split).
CIFAR10_TRAIN = 45_000
#: The augmentation of ``configs/fdshifts_cifar10.yaml``.
AUGMENT = [
    {"name": "random_crop", "padding": 4, "fill": 0},
    {"name": "hflip", "p": 0.5},
    {"name": "cutout", "size": 16, "p": 0.5, "fill": [125, 123, 114]},
]


class EpochTimer(L.Callback):
    """Wall-clock seconds of each training epoch (CUDA work waited for at both ends)."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self._start = 0.0

    @staticmethod
    def _sync(module: L.LightningModule) -> None:
        if module.device.type == "cuda":
            torch.cuda.synchronize(module.device)

    def on_train_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._sync(pl_module)
        self._start = time.perf_counter()

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._sync(pl_module)
        self.seconds.append(time.perf_counter() - self._start)


def device_name(accelerator: str) -> str:
    """The GPU's name on ``"cuda"``; on the CPU its model (``/proc/cpuinfo``) and core count."""
    if accelerator == "cuda":
        return torch.cuda.get_device_name(0)
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model} ({os.cpu_count()} logical cores)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto", choices=DEVICES)
    parser.add_argument("--precision", default="32", choices=PRECISIONS)
    parser.add_argument("--n", type=int, default=5000, help="random 32 × 32 images")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--mc-samples", type=int, default=2, help="MC passes timed")
    parser.add_argument("--warmup-steps", type=int, default=3, help="batches before timing")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    return parser


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the timing with the command-line arguments ``argv``, print and return the results."""
    args = _parser().parse_args(argv)
    for name in ("n", "batch_size", "mc_samples", "warmup_steps", "threads"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    accelerator = resolve_device(args.device)
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(args.n, 32, 32, 3), dtype=np.uint8)
    labels = rng.integers(0, 10, size=args.n).astype(np.int64)
    with deterministic(0, args.threads), quiet_lightning():
        net = build_model("resnet18", num_classes=10, in_channels=3, image_size=32, dropout=0.3)
        settings = OptimSettings(
            lr=0.1, momentum=0.9, nesterov=False, weight_decay=5e-4, schedule="constant"
        )
        module = MethodModule(net, CE({"dropout": True}), settings)
        loader = make_loader(
            image_tensor(images),
            torch.from_numpy(labels),
            batch_size=args.batch_size,
            shuffle=True,
            augment=AUGMENT,
            pin_memory=accelerator == "cuda",
        )
        run = {"device": accelerator, "precision": args.precision}
        trainer(1, steps=args.warmup_steps, **run).fit(module, loader)
        timer = EpochTimer()
        trainer(1, [timer], **run).fit(module, loader)
        print(f"device: {accelerator} ({device_name(accelerator)}), {args.threads} CPU threads")
        print(f"torch: {torch.__version__}, precision: {args.precision}")
        print(f"data: {args.n} random 32x32x3 images (random labels), batch size {args.batch_size}")
        print(f"epoch: {timer.seconds[0]:.2f} s ({args.n / timer.seconds[0]:.1f} samples/s)")
        module.cpu()
        net.eval()
        inference = {}
        for samples in (0, args.mc_samples):
            start = time.perf_counter()
            predict_split(net, images, labels, kind="iid", mc_samples=samples, batch_size=500)
            inference[samples] = time.perf_counter() - start
    epoch_s = timer.seconds[0]
    mc_pass_s = max(inference[args.mc_samples] - inference[0], 0.0) / args.mc_samples
    results: dict[str, Any] = {
        "device": accelerator,
        "device_name": device_name(accelerator),
        "threads": args.threads,
        "torch": torch.__version__,
        "precision": args.precision,
        "n": args.n,
        "batch_size": args.batch_size,
        "epoch_s": epoch_s,
        "train_samples_per_s": args.n / epoch_s,
        "inference_device": "cpu",
        "deterministic_pass_s": inference[0],
        "mc_pass_s": mc_pass_s,
        "mc_samples_per_s": args.n / mc_pass_s if mc_pass_s > 0 else float("inf"),
        "cifar10_epoch_s_extrapolated": epoch_s * CIFAR10_TRAIN / args.n,
        "cifar10_mc_pass_s_extrapolated": mc_pass_s * CIFAR10_TRAIN / args.n,
        "load_average": os.getloadavg(),
    }
    print(
        f"MC pass (inference on cpu, float64 final layer): {mc_pass_s:.2f} s "
        f"({results['mc_samples_per_s']:.1f} samples/s); deterministic pass "
        f"{inference[0]:.2f} s"
    )
    print(
        f"extrapolation to FD-Shifts' CIFAR-10 ({CIFAR10_TRAIN} training images): "
        f"{results['cifar10_epoch_s_extrapolated']:.0f} s per epoch, "
        f"{results['cifar10_mc_pass_s_extrapolated']:.0f} s per MC pass over as many images"
    )
    print("load average (1, 5, 15 min): " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))
    return results


if __name__ == "__main__":
    main()
