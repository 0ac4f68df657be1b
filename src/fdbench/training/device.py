"""Where training runs: the device setting resolved against the visible accelerators."""

from __future__ import annotations

import torch

__all__ = ["DEVICES", "PRECISIONS", "lightning_settings", "resolve_device"]

#: Values of ``training.device``.
DEVICES = ("auto", "cpu", "cuda")
#: Values of ``training.precision``.
PRECISIONS = ("32", "bf16-mixed")


def resolve_device(device: str) -> str:
    """The accelerator that ``device`` names here: ``"cpu"`` or ``"cuda"``.

    ``"auto"`` is ``"cuda"`` when ``torch.cuda.is_available()`` and ``"cpu"`` otherwise;
    ``"cuda"`` where no GPU is visible is a ``ValueError`` naming the setting.
    """
    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {device!r}")
    visible = torch.cuda.is_available()
    if device == "cuda" and not visible:
        raise ValueError(
            "training.device is 'cuda' but PyTorch sees no GPU (torch.cuda.is_available() is "
            "false); set training.device to 'auto' or 'cpu'"
        )
    if device == "auto":
        return "cuda" if visible else "cpu"
    return device


def lightning_settings(device: str, precision: str = "32") -> dict[str, object]:
    """Keyword arguments of ``lightning.Trainer`` for ``device`` and ``precision``.

    On the CPU: ``accelerator="cpu"`` and deterministic algorithms, with Lightning's default
    float32 unless ``precision`` is ``"bf16-mixed"``. On a GPU: ``accelerator="gpu"`` with
    ``deterministic="warn"`` (some CUDA kernels, e.g. adaptive average pooling's backward
    pass, have no deterministic implementation; they warn instead of failing).
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    accelerator = resolve_device(device)
    settings: dict[str, object] = {
        "accelerator": "gpu" if accelerator == "cuda" else "cpu",
        "deterministic": "warn" if accelerator == "cuda" else True,
    }
    if precision != "32":
        settings["precision"] = precision
    return settings
