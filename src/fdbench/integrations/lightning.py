"""A Lightning callback logging the failure-detection suite at every validation epoch and saving
the outputs store of the best epoch.

Contract with the ``LightningModule``: ``validation_step`` returns the batch's logits and
targets, either as a dict ``{"logits": (B, K) tensor, "target": (B,) integer tensor, ...}``
(other keys, such as ``"loss"``, are ignored; an optional ``"features"``: (B, D) tensor of
penultimate features is stored with the outputs) or as a tuple ``(logits, target)``. Only one
validation dataloader is supported. Under several processes every process's outputs are gathered
(``torch.distributed.all_gather_object``) before the suite is computed, so every process logs the
same values. Needs the optional extra ``integrations`` (``pip install "fdbench[integrations]"``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

try:
    import torch
    from lightning.pytorch import Callback, LightningModule, Trainer
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "fdbench.integrations.lightning needs torch and lightning; install the extra: "
        'pip install "fdbench[integrations]"'
    ) from err

from fdbench.csf import REGISTRY
from fdbench.metrics import LABEL_KEYS, LOGIT_KEYS, METRIC_KEYS, evaluate_all
from fdbench.outputs import RunOutputs, SplitOutputs, write_outputs

__all__ = [
    "LOGIT_CSFS",
    "SUITE_METRICS",
    "FailureDetectionCallback",
    "last_layer_arrays",
    "logits_and_target",
    "step_features",
]

#: The CSFs the callback can compute: the built-ins that read only the logits, without a fit.
LOGIT_CSFS: tuple[str, ...] = tuple(
    n for n, spec in REGISTRY.items() if spec.reads == "logits" and spec.fit is None
)
#: The metric names the callback can log: the keys of :func:`fdbench.metrics.evaluate_all`
#: with labels and logits.
SUITE_METRICS: tuple[str, ...] = (*METRIC_KEYS, *LABEL_KEYS, *LOGIT_KEYS)


def _as_tensor(value: Any, name: str) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise TypeError(
            f"validation_step output {name!r}: expected a tensor, got {type(value).__name__}"
        )
    return value.detach()


def step_features(outputs: Any) -> np.ndarray | None:
    """The float64 penultimate features (B, D) of one ``validation_step`` output: its dict's
    ``"features"`` entry, ``None`` without one."""
    if not isinstance(outputs, Mapping) or "features" not in outputs:
        return None
    features = _as_tensor(outputs["features"], "features").to("cpu", torch.float64).numpy()
    if features.ndim != 2:
        raise ValueError(
            f"validation_step output 'features': expected a (B, D) tensor, got shape "
            f"{tuple(features.shape)}"
        )
    return features


def last_layer_arrays(module: torch.nn.Module, name: str, n_classes: int) -> dict[str, np.ndarray]:
    """``{"fc_weight": W (K × D), "fc_bias": b (K,)}`` in float64 from the ``torch.nn.Linear``
    submodule ``name`` of ``module`` (a layer without bias gives ``b = 0``)."""
    try:
        layer = module.get_submodule(name)
    except AttributeError as err:
        raise ValueError(f"last_layer: {type(module).__name__} has no submodule {name!r}") from err
    if not isinstance(layer, torch.nn.Linear):
        raise TypeError(f"last_layer: {name!r} is a {type(layer).__name__}, not a torch.nn.Linear")
    weight = layer.weight.detach().to("cpu", torch.float64).numpy().copy()
    if weight.shape[0] != n_classes:
        raise ValueError(
            f"last_layer: {name!r} has {weight.shape[0]} outputs but the logits {n_classes}"
        )
    bias = (
        np.zeros(n_classes)
        if layer.bias is None
        else layer.bias.detach().to("cpu", torch.float64).numpy().copy()
    )
    return {"fc_weight": weight, "fc_bias": bias}


def logits_and_target(outputs: Any) -> tuple[np.ndarray, np.ndarray]:
    """The (float64 logits (B, K), int64 targets (B,)) of one ``validation_step`` output: a
    dict with keys ``"logits"`` and ``"target"`` or a tuple ``(logits, target)``."""
    if isinstance(outputs, Mapping):
        missing = [k for k in ("logits", "target") if k not in outputs]
        if missing:
            raise TypeError(
                f"validation_step output: the dict lacks {missing}; FailureDetectionCallback "
                "needs {'logits': (B, K) tensor, 'target': (B,) tensor}"
            )
        logits, target = outputs["logits"], outputs["target"]
    elif isinstance(outputs, Sequence) and not isinstance(outputs, str) and len(outputs) == 2:
        logits, target = outputs
    else:
        raise TypeError(
            "validation_step output: FailureDetectionCallback needs validation_step to return "
            "{'logits': ..., 'target': ...} or (logits, target); got "
            f"{type(outputs).__name__}"
        )
    logits = _as_tensor(logits, "logits").to("cpu", torch.float64).numpy()
    target = _as_tensor(target, "target")
    if target.is_floating_point() or target.is_complex():
        raise TypeError(
            f"validation_step output 'target': expected integer class indices, "
            f"got dtype {target.dtype}"
        )
    target = target.to("cpu", torch.int64).numpy()
    if logits.ndim != 2 or target.ndim != 1 or logits.shape[0] != target.shape[0]:
        raise ValueError(
            "validation_step output: expected logits of shape (B, K) and target of shape (B,), "
            f"got {logits.shape} and {target.shape}"
        )
    return logits, target


class FailureDetectionCallback(Callback):
    """Log the failure-detection suite of the model's logits at the end of every validation
    epoch and keep the outputs store of the best epoch.

    For every CSF in ``csfs`` (registry names of CSFs computed from logits alone,
    :data:`LOGIT_CSFS`) the confidence of each validation sample is computed from the logits
    the validation steps returned (see the module docstring for the contract), a failure is an
    arg-max prediction that differs from the target, and each metric in ``metrics`` (keys of
    :func:`fdbench.metrics.evaluate_all`, :data:`SUITE_METRICS`) is logged as
    ``"{prefix}/{csf}/{metric}"`` (e.g. ``"fd/MSR/aurc"``). The values are those
    ``fdbench evaluate`` gives on the same outputs. Sanity-check epochs are not logged.

    With ``store`` (a path), after every validation whose ``monitor`` value (any logged name;
    default the first CSF's first metric) improves on the best so far (``mode`` ``"min"`` or
    ``"max"``; NaN never improves), the epoch's validation outputs are written there as an
    fdbench outputs store (:func:`fdbench.outputs.write_outputs`): one split named ``study``
    (kind ``"iid"``) with the float64 logits and the labels, and ``meta`` holding ``model``,
    ``epoch``, ``global_step``, ``monitor`` and ``monitor_value`` plus ``meta``'s entries.
    Where the validation steps return ``"features"``, the split stores them; with
    ``last_layer`` (the name of the module's final ``torch.nn.Linear``, as
    ``pl_module.get_submodule`` takes it, e.g. ``"net.3"``) ``meta`` also holds its weight and
    bias at that epoch as ``fc_weight`` (K × D) and ``fc_bias`` (K), float64: what the
    post-hoc scores of :mod:`fdbench.csf.posthoc` read. ``fdbench evaluate <store>`` reads it.
    Monitoring the same name with the same mode as a
    ``ModelCheckpoint`` keeps the store of the checkpoint it keeps. Attributes after fitting:
    ``best_score``, ``best_epoch``.
    """

    def __init__(
        self,
        csfs: Sequence[str] = ("MSR", "PE", "MLS"),
        metrics: Sequence[str] = ("aurc", "augrc", "auroc_f"),
        *,
        prefix: str = "fd",
        store: str | os.PathLike[str] | None = None,
        monitor: str | None = None,
        mode: str = "min",
        study: str = "iid",
        meta: Mapping[str, Any] | None = None,
        last_layer: str | None = None,
    ) -> None:
        super().__init__()
        self.csfs = self._names(csfs, "csfs", LOGIT_CSFS)
        self.metrics = self._names(metrics, "metrics", SUITE_METRICS)
        if not isinstance(prefix, str):
            raise TypeError(f"prefix: expected a str, got {type(prefix).__name__}")
        if mode not in ("min", "max"):
            raise ValueError(f"mode: expected 'min' or 'max', got {mode!r}")
        if not isinstance(study, str) or not study or study in ("train", "val"):
            raise ValueError(f"study: expected a test study name (not train/val), got {study!r}")
        self.prefix = prefix
        self.store = None if store is None else Path(store)
        self.monitor = monitor if monitor is not None else self.key(self.csfs[0], self.metrics[0])
        self.mode = mode
        self.study = study
        self.meta = dict(meta or {})
        if last_layer is not None and (not isinstance(last_layer, str) or not last_layer):
            raise TypeError(f"last_layer: expected a module name (str) or None, got {last_layer!r}")
        self.last_layer = last_layer
        self.best_score: float | None = None
        self.best_epoch: int | None = None
        self._batches: list[tuple[np.ndarray, np.ndarray, np.ndarray | None]] = []
        self._epoch: tuple[np.ndarray, np.ndarray, np.ndarray | None] | None = None

    @staticmethod
    def _names(names: Sequence[str], argument: str, allowed: Sequence[str]) -> tuple[str, ...]:
        if isinstance(names, str) or not isinstance(names, Sequence) or not names:
            raise TypeError(f"{argument}: expected a non-empty sequence of names, got {names!r}")
        unknown = [n for n in names if n not in allowed]
        if unknown:
            raise ValueError(f"{argument}: unknown {unknown}; expected names among {list(allowed)}")
        return tuple(names)

    def key(self, csf: str, metric: str) -> str:
        """The logged name of ``metric`` of ``csf``."""
        return f"{self.prefix}/{csf}/{metric}" if self.prefix else f"{csf}/{metric}"

    def on_validation_epoch_start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        self._batches = []

    def on_validation_batch_end(
        self,
        trainer: Trainer,
        pl_module: LightningModule,
        outputs: Any,
        batch: Any,
        batch_idx: int,
        dataloader_idx: int = 0,
    ) -> None:
        if dataloader_idx != 0:
            raise ValueError(
                "FailureDetectionCallback supports one validation dataloader; got a batch of "
                f"dataloader {dataloader_idx}"
            )
        self._batches.append((*logits_and_target(outputs), step_features(outputs)))

    def on_validation_epoch_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        if trainer.sanity_checking or not self._batches:
            self._epoch = None
            return
        logits = np.concatenate([b[0] for b in self._batches])
        labels = np.concatenate([b[1] for b in self._batches])
        with_features = [b[2] is not None for b in self._batches]
        if any(with_features) and not all(with_features):
            raise ValueError(
                "validation_step output 'features': returned for some batches but not all"
            )
        features = np.concatenate([b[2] for b in self._batches]) if all(with_features) else None
        self._batches = []
        if trainer.world_size > 1 and torch.distributed.is_initialized():
            gathered: list[Any] = [None] * trainer.world_size
            torch.distributed.all_gather_object(gathered, (logits, labels, features))
            logits = np.concatenate([g[0] for g in gathered])
            labels = np.concatenate([g[1] for g in gathered])
            features = None if features is None else np.concatenate([g[2] for g in gathered])
        if labels.min() < 0 or labels.max() >= logits.shape[1]:
            raise ValueError(
                f"validation_step output 'target': expected class indices in [0, "
                f"{logits.shape[1]}), found values from {labels.min()} to {labels.max()}"
            )
        residuals = (np.argmax(logits, axis=1) != labels).astype(np.float64)
        for csf in self.csfs:
            confidence = REGISTRY[csf].function(logits)
            suite = evaluate_all(residuals, confidence, labels=labels, logits=logits)
            for metric in self.metrics:
                value = torch.tensor(suite[metric], dtype=torch.float64)
                # every process holds the gathered value: their mean is that value
                pl_module.log(
                    self.key(csf, metric), value, on_epoch=True, sync_dist=trainer.world_size > 1
                )
        self._epoch = (logits, labels, features)

    def on_validation_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        if trainer.sanity_checking or self._epoch is None or self.store is None:
            return
        if self.monitor not in trainer.callback_metrics:
            raise ValueError(
                f"monitor: {self.monitor!r} was not logged; logged names are "
                f"{sorted(trainer.callback_metrics)}"
            )
        value = float(trainer.callback_metrics[self.monitor])
        better = self.best_score is None or (
            value < self.best_score if self.mode == "min" else value > self.best_score
        )
        if math.isnan(value) or not better:
            return
        self.best_score, self.best_epoch = value, trainer.current_epoch
        if trainer.is_global_zero:
            logits, labels, features = self._epoch
            meta = {
                **self.meta,
                "model": type(pl_module).__name__,
                "epoch": trainer.current_epoch,
                "global_step": trainer.global_step,
                "monitor": self.monitor,
                "monitor_value": value,
            }
            if self.last_layer is not None:
                meta.update(last_layer_arrays(pl_module, self.last_layer, logits.shape[1]))
            split = SplitOutputs(labels=labels, logits=logits, features=features, kind="iid")
            write_outputs(self.store, RunOutputs(splits={self.study: split}, meta=meta))

    def state_dict(self) -> dict[str, Any]:
        return {"best_score": self.best_score, "best_epoch": self.best_epoch}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.best_score = state_dict["best_score"]
        self.best_epoch = state_dict["best_epoch"]
