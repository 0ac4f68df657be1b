"""What a training method trains with: the job's context, network building, the Lightning module."""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lightning as L
import numpy as np
import torch

from fdbench.config.schema import BenchmarkConfig, ScheduleConfig
from fdbench.core.resources import gpu_indices
from fdbench.data.types import Experiment

from ..models import build_model
from ..models.network import Network
from .determinism import deterministic
from .device import lightning_settings, resolve_device
from .loader import image_tensor, make_loader
from .schedules import make_scheduler, plateau_callbacks

__all__ = [
    "MethodModule",
    "OptimSettings",
    "TrainContext",
    "build_spec",
    "network_from_spec",
    "quiet_lightning",
    "sgd_with_schedule",
    "trainer",
]


@dataclass(frozen=True)
class OptimSettings:
    """SGD settings of an end-to-end method: learning rate, momentum, Nesterov, weight decay
    and the learning-rate schedule (``"constant"``, ``"cosine"`` or a ScheduleConfig)."""

    lr: float
    momentum: float
    nesterov: bool
    weight_decay: float
    schedule: str | ScheduleConfig

    def __post_init__(self) -> None:
        if not isinstance(self.schedule, ScheduleConfig) and self.schedule not in (
            "cosine",
            "constant",
        ):
            raise ValueError(
                f"schedule must be 'cosine', 'constant' or a ScheduleConfig, got {self.schedule!r}"
            )


class MethodModule(L.LightningModule):
    """A LightningModule whose steps are the hooks of ``method`` (a
    :class:`~fdbench.training.methods.TrainingMethod`, or any object with ``training_step``,
    ``configure_optimizers``, ``on_train_epoch_start`` and ``on_train_epoch_end`` taking the
    module first); ``method.setup(module)`` runs at construction if ``method`` has it.

    ``network`` is the trained network, ``settings`` the optimiser settings (or ``None`` for
    methods that configure their own optimiser), ``context`` the job's :class:`TrainContext`
    (``None`` outside a training job).
    """

    def __init__(
        self,
        network: Network,
        method: Any,
        settings: OptimSettings | None = None,
        context: TrainContext | None = None,
    ):
        super().__init__()
        self.network = network
        self.method = method
        self.settings = settings
        self.context = context
        setup = getattr(method, "setup", None)
        if setup is not None:
            setup(self)

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        return self.method.training_step(self, batch, batch_idx)

    def on_train_epoch_start(self) -> None:
        self.method.on_train_epoch_start(self)

    def on_train_epoch_end(self) -> None:
        self.method.on_train_epoch_end(self)

    def on_train_batch_end(self, outputs: Any, batch: Any, batch_idx: int) -> None:
        hook = getattr(self.method, "on_train_batch_end", None)
        if hook is not None:
            hook(self, batch, batch_idx)

    def validation_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        return self.method.validation_step(self, batch, batch_idx)

    def configure_optimizers(self) -> Any:
        return self.method.configure_optimizers(self)


def sgd_with_schedule(module: L.LightningModule, parameters: Any, settings: OptimSettings) -> Any:
    """SGD over ``parameters`` with ``settings`` and its learning-rate schedule over the
    trainer's steps and epochs (:func:`fdbench.training.schedules.make_scheduler`)."""
    opt = torch.optim.SGD(
        parameters,
        lr=settings.lr,
        momentum=settings.momentum,
        nesterov=settings.nesterov and settings.momentum > 0,
        weight_decay=settings.weight_decay,
    )
    if settings.schedule == "constant":
        return opt
    steps = max(1, int(module.trainer.estimated_stepping_batches))
    scheduler = make_scheduler(
        opt, settings.schedule, steps=steps, epochs=module.trainer.max_epochs
    )
    if scheduler is None:
        return opt
    return {"optimizer": opt, "lr_scheduler": scheduler}


@contextlib.contextmanager
def quiet_lightning() -> Iterator[None]:
    """Silence Lightning's informational logging and its warnings that do not apply here."""
    loggers = [logging.getLogger(n) for n in ("lightning.pytorch", "lightning.fabric")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*LeafSpec.*is deprecated")
            warnings.filterwarnings("ignore", message=".*does not have many workers.*")
            # validation_step runs only with the plateau schedule's validation loader
            warnings.filterwarnings("ignore", message=".*`validation_step` but have no.*")
            # ConfidNet stages train with the frozen parts deliberately in eval mode
            warnings.filterwarnings("ignore", message=".*module\\(s\\) in eval mode.*")
            # on a machine with Slurm, each job trains one model in its own process: not
            # a multi-process Lightning run to start with srun
            warnings.filterwarnings("ignore", message=".*`srun` command is available.*")
            yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


class EpochProgress(L.Callback):
    """Reports every finished training epoch to the job runner
    (:func:`fdbench.core.runner.report_epoch`), for the progress bar; it changes nothing else.
    A run bounded by steps rather than epochs (``max_epochs == -1``) reports nothing."""

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        from fdbench.core.runner import report_epoch

        if trainer.max_epochs is not None and trainer.max_epochs > 0:
            report_epoch(trainer.current_epoch + 1, trainer.max_epochs)


def trainer(
    epochs: int,
    callbacks: list[L.Callback] | None = None,
    *,
    device: str = "cpu",
    precision: str = "32",
    steps: int | None = None,
) -> L.Trainer:
    """A Lightning trainer for ``epochs`` epochs (or, with ``steps``, that many batches) with
    ``callbacks`` and :class:`EpochProgress`, without logging, on one ``device`` in
    ``precision`` (:func:`~fdbench.training.device.lightning_settings`: deterministic on the
    CPU). In a GPU job of a dask worker that advertises GPUs, the device is the one the job
    claimed (:func:`fdbench.core.resources.gpu_indices`), so N jobs on a worker with N GPUs
    each train on their own."""
    length = {"max_epochs": epochs} if steps is None else {"max_epochs": -1, "max_steps": steps}
    settings = lightning_settings(device, precision)
    claimed = gpu_indices() if settings["accelerator"] == "gpu" else ()
    return L.Trainer(
        **length,
        callbacks=[*(callbacks or []), EpochProgress()],
        devices=list(claimed[:1]) or 1,
        **settings,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
    )


def build_spec(
    config: BenchmarkConfig, experiment: Experiment, head: str | None, dropout: bool
) -> dict[str, Any]:
    """The build specification of a network for ``experiment`` (saved with checkpoints):
    architecture (with ``factory``, ``timm`` and ``classifier`` only where the configuration
    sets them, so built-in specifications are unchanged), classes, input shape, dropout,
    ``head`` and the train split's per-channel mean and standard deviation (floored at 1e-3)
    for the input normalisation."""
    images = experiment.train.images
    if images.ndim != 4 or images.shape[1] != images.shape[2]:
        raise ValueError(
            f"experiment {experiment.name!r}: train images must be N × H × W × C with H = W, "
            f"got shape {images.shape}"
        )
    stats = images.reshape(-1, images.shape[3]).astype(np.float64) / 255.0
    std = np.maximum(stats.std(axis=0), 1e-3)
    arch = config.architecture
    custom = {k: getattr(arch, k) for k in ("factory", "timm", "classifier")}
    return {
        "architecture": arch.label,
        **{k: v for k, v in custom.items() if v is not None},
        "num_classes": len(experiment.class_names),
        "in_channels": int(images.shape[3]),
        "image_size": int(images.shape[1]),
        "dropout": config.architecture.dropout if dropout else 0.0,
        "dropout_placement": config.architecture.dropout_placement,
        "head": head,
        "mean": [float(m) for m in stats.mean(axis=0)],
        "std": [float(s) for s in std],
        "options": dict(config.architecture.options),
    }


def network_from_spec(spec: dict[str, Any]) -> Network:
    """Build the (untrained) network of a build specification (:func:`build_spec`): a
    built-in architecture with :func:`~fdbench.models.build_model`, your own network or a
    timm model (``factory``/``timm`` in the specification) with
    :func:`~fdbench.models.custom.build_custom_model`."""
    spec = dict(spec)
    options = spec.pop("options")
    arch = spec.pop("architecture")
    custom = {k: spec.pop(k) for k in ("factory", "timm", "classifier") if k in spec}
    if custom:
        from ..models.custom import build_custom_model

        spec.pop("dropout_placement")
        return build_custom_model(**custom, **spec, **options)
    return build_model(arch, **spec, **options)


@dataclass
class TrainContext:
    """Everything one training job gives a method: the configuration, the experiment, the
    seed, the folder of the benchmark's runs (``out_dir``) and ``train_or_load`` (to obtain
    the model of a method this one depends on: ``train_or_load(method_name)``)."""

    config: BenchmarkConfig
    experiment: Experiment
    seed: int
    out_dir: Path
    train_or_load: Callable[[str], tuple[Network, dict[str, Any]]]

    def session(self) -> contextlib.AbstractContextManager[None]:
        """Seeded deterministic execution with quiet Lightning: wrap all training in it."""
        stack = contextlib.ExitStack()
        stack.enter_context(deterministic(self.seed, self.config.training.threads))
        stack.enter_context(quiet_lightning())
        return stack

    def build_spec(self, head: str | None, dropout: bool) -> dict[str, Any]:
        """:func:`build_spec` of this job's configuration and experiment."""
        return build_spec(self.config, self.experiment, head, dropout)

    def network(self, spec: dict[str, Any]) -> Network:
        """:func:`network_from_spec`."""
        return network_from_spec(spec)

    def module(self, network: Network, method: Any) -> MethodModule:
        """A :class:`MethodModule` training ``network`` with ``method``'s hooks and the
        configured SGD settings (learning rate ``method.learning_rate(self)``)."""
        tc = self.config.training
        settings = OptimSettings(
            lr=method.learning_rate(self),
            momentum=tc.momentum,
            nesterov=tc.nesterov,
            weight_decay=tc.weight_decay,
            schedule=tc.schedule,
        )
        return MethodModule(network, method, settings, context=self)

    def images(self) -> torch.Tensor:
        """The train split's images as a uint8 tensor N × C × H × W."""
        return image_tensor(self.experiment.train.images)

    def labels(self) -> torch.Tensor:
        """The train split's labels as an int64 tensor."""
        return torch.from_numpy(np.asarray(self.experiment.train.labels, dtype=np.int64))

    def loader(
        self,
        *extra: torch.Tensor,
        indices: bool = False,
        transform: Callable[[torch.Tensor], torch.Tensor] | None = None,
    ) -> Any:
        """Seeded shuffled training batches ``(images, labels, *extra)`` (with ``indices``:
        then the int64 sample indices), the images augmented as configured or, with
        ``transform``, by ``transform`` (a callable on a uint8 image batch)."""
        tc = self.config.training
        tensors = [self.images(), self.labels(), *extra]
        if indices:
            tensors.append(torch.arange(len(tensors[0]), dtype=torch.int64))
        return make_loader(
            *tensors,
            batch_size=tc.batch_size,
            shuffle=True,
            seed=self.seed,
            augment=tc.augment if transform is None else False,
            transform=transform,
            pin_memory=resolve_device(tc.device) == "cuda",
        )

    def val_loader(self) -> Any:
        """The validation split's ``(images, labels)`` batches, in order, unaugmented."""
        return make_loader(
            image_tensor(self.experiment.val.images),
            torch.from_numpy(np.asarray(self.experiment.val.labels, dtype=np.int64)),
            batch_size=self.config.training.batch_size,
            shuffle=False,
        )

    def fit(
        self, module: L.LightningModule, data: Any, epochs: int, steps: int | None = None
    ) -> None:
        """Fit ``module`` on ``data`` for ``epochs`` epochs (``steps`` batches when given) with
        :func:`trainer`.

        A module trained with the configured schedule (its ``settings``, see :meth:`module`)
        whose schedule is ``plateau`` also gets the schedule's callbacks
        (:func:`~fdbench.training.schedules.plateau_callbacks`: stop and best weights) and the
        validation batches (:meth:`val_loader`), on which its ``validation_step`` logs
        ``val_loss``; other modules (e.g. ConfidNet's stages) train without validation.

        Training runs on the configured ``training.device`` in ``training.precision``; the
        module is on the CPU again afterwards (inference runs there, in float64)."""
        settings = getattr(module, "settings", None)
        callbacks = plateau_callbacks(settings.schedule) if settings is not None else []
        val = self.val_loader() if callbacks else None
        tc = self.config.training
        trainer(epochs, callbacks, device=tc.device, precision=tc.precision, steps=steps).fit(
            module, data, val
        )
        module.cpu()
