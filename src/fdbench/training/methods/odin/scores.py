"""ODIN (Liang, Li & Srikant, ICLR 2018): temperature scaling plus input perturbation.

The score of an image x is ``max_j softmax(f(x̃) / T)_j`` with
``x̃ = x − ε · sign(−∇_x log max_j softmax(f(x) / T)_j)`` (the paper's Eq. 2), computed at
inference because it needs the model's input gradient. T and ε are chosen on validation data
by OoD-detection AUROC of the in-distribution validation split against the *external* set,
never a test set (Kim et al., "A Unified Benchmark for the Unknown Detection Capability of
Deep Neural Networks", Section 4; their ``methods/odin.py`` and ``test.py`` of
daintlab/unknown-detection-benchmarks).

Input space. fdbench's networks take images on the 0..255 scale and standardise them inside
(:class:`~fdbench.models.network.Normalize`); the perturbation is applied to the pixel
values in [0, 1] (``x / 255``), with the gradient taken there. Kim et al. (``get_posterior``
in their ``utils.py``, after Liang et al.'s code) perturb the standardised input by
``ε · sign(g) / std_c`` per channel, which is the same step: a step of ε on the [0, 1] scale
is a step of ε / std_c after standardisation, and the gradient's sign is the same in both
spaces (std_c > 0). As there, the perturbed image is not clipped to the valid range, and a
zero gradient counts as positive (``torch.ge(grad, 0)``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from fdbench.models.network import Network
from fdbench.training.methods.odin.grids import ODIN_EPSILONS, ODIN_TEMPERATURES

__all__ = [
    "ODIN_EPSILONS",
    "ODIN_TEMPERATURES",
    "odin_batch_grid",
    "odin_batch_scores",
    "odin_perturb",
    "odin_score_grid",
    "odin_scores",
    "select_odin_params",
]


def _check(temperature: float, epsilon: float) -> None:
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    if not epsilon >= 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")


def _gradient_sign(model: Network, u: torch.Tensor, temperature: float) -> torch.Tensor:
    """``+1`` where ``∂L/∂u >= 0``, else ``−1``, for ``L = −Σ_i log max_j softmax(f(255 u_i) /
    T)_j`` (summed, so the gradient of each image is its own)."""
    n = model.num_classes
    u = u.detach().requires_grad_(True)
    with torch.enable_grad():
        logits = model(u * 255.0)[:, :n] / temperature
        loss = F.cross_entropy(logits, logits.argmax(dim=1).detach(), reduction="sum")
        (grad,) = torch.autograd.grad(loss, u)
    return torch.where(grad >= 0, 1.0, -1.0)


def odin_perturb(
    model: Network, x: torch.Tensor, *, temperature: float, epsilon: float
) -> torch.Tensor:
    """The perturbed images ``x̃`` (float, 0..255 scale) of a batch ``x`` (N × C × H × W on the
    0..255 scale): on ``u = x / 255``, ``ũ = u − ε · s`` with ``s = +1`` where
    ``∂L/∂u >= 0`` and −1 elsewhere, ``L = −Σ_i log max_j softmax(f(x_i) / T)_j`` (summed,
    so the gradient of each image is its own), and ``x̃ = 255 · ũ``.
    """
    _check(temperature, epsilon)
    u = x.float() / 255.0
    return ((u - epsilon * _gradient_sign(model, u, temperature)) * 255.0).detach()


def odin_batch_grid(
    model: Network, x: torch.Tensor, *, temperature: float, epsilons: Sequence[float]
) -> torch.Tensor:
    """ODIN scores (float64, ``len(epsilons)`` × N) of a batch ``x`` (N × C × H × W on the
    0..255 scale) at temperature T for each ε: ``max_j softmax(f(x̃) / T)_j`` with ``x̃`` of
    :func:`odin_perturb` (``x`` itself when ε = 0). The gradient is taken once for all ε.
    ``model`` is put in eval mode; its parameters get no gradient. Works inside
    ``torch.inference_mode()`` (the gradient is taken outside it, on a copy of ``x``)."""
    if not epsilons:
        raise ValueError("epsilons must list at least one value")
    for epsilon in epsilons:
        _check(temperature, epsilon)
    model = model.eval()
    n = model.num_classes
    requires = [p.requires_grad for p in model.parameters()]
    for p in model.parameters():
        p.requires_grad_(False)
    rows = []
    try:
        with torch.inference_mode(False):
            xb = x.clone()
            u = xb.float() / 255.0
            sign = _gradient_sign(model, u, temperature) if max(epsilons) > 0 else None
            for epsilon in epsilons:
                inputs = xb if epsilon == 0 else ((u - epsilon * sign) * 255.0).detach()
                with torch.no_grad():
                    logits = model(inputs)[:, :n].double() / temperature
                rows.append(torch.softmax(logits, dim=1).max(dim=1).values)
    finally:
        for p, flag in zip(model.parameters(), requires, strict=True):
            p.requires_grad_(flag)
    return torch.stack(rows)


def odin_batch_scores(
    model: Network, x: torch.Tensor, *, temperature: float, epsilon: float
) -> torch.Tensor:
    """ODIN scores (float64, N) of a batch ``x``: :func:`odin_batch_grid` at one ε."""
    return odin_batch_grid(model, x, temperature=temperature, epsilons=(epsilon,))[0]


def odin_score_grid(
    model: Network,
    images: np.ndarray,
    *,
    temperature: float,
    epsilons: Sequence[float],
    batch_size: int = 500,
) -> np.ndarray:
    """ODIN scores (float64, ``len(epsilons)`` × N) of uint8 images N × H × W × C, in batches
    of ``batch_size`` (:func:`odin_batch_grid`)."""
    from fdbench.training.loader import image_tensor

    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    x = image_tensor(images)
    parts = [
        odin_batch_grid(model, x[i : i + batch_size], temperature=temperature, epsilons=epsilons)
        for i in range(0, len(x), batch_size)
    ]
    if not parts:
        return np.zeros((len(epsilons), 0), dtype=np.float64)
    return torch.cat(parts, dim=1).numpy().astype(np.float64, copy=False)


def odin_scores(
    model: Network,
    images: np.ndarray,
    *,
    temperature: float,
    epsilon: float,
    batch_size: int = 500,
) -> np.ndarray:
    """ODIN scores (float64, one per image) of uint8 images N × H × W × C, in batches of
    ``batch_size`` (:func:`odin_batch_scores`)."""
    grid = odin_score_grid(
        model, images, temperature=temperature, epsilons=(epsilon,), batch_size=batch_size
    )
    return grid[0]


def select_odin_params(
    model: Network,
    val_images: np.ndarray,
    external_images: np.ndarray,
    *,
    temperatures: Sequence[float] = ODIN_TEMPERATURES,
    epsilons: Sequence[float] = ODIN_EPSILONS,
    batch_size: int = 500,
) -> tuple[float, float, list[dict[str, float]]]:
    """The (T, ε) of the grid with the largest OoD-detection AUROC of ODIN scores separating
    ``val_images`` (in-distribution, positive) from ``external_images``.

    As Kim et al.'s ``opt_params`` (``methods/odin.py``): AUROC is the criterion, the grid is
    walked with T outer and ε inner, and the first best point is kept. The input gradient is
    taken once per temperature and image (:func:`odin_score_grid`), the scores are those of
    :func:`odin_scores`. Returns ``(T, ε,
    table)`` with one ``{"temperature", "epsilon", "auroc"}`` row per grid point.
    """
    from fdbench.metrics import auroc_out

    if len(val_images) == 0 or len(external_images) == 0:
        raise ValueError("val_images and external_images must both be non-empty")
    if not temperatures or not epsilons:
        raise ValueError("temperatures and epsilons must list at least one value each")
    is_ood = np.r_[np.zeros(len(val_images)), np.ones(len(external_images))]
    table = []
    best: tuple[float, float, float] | None = None
    for t in temperatures:
        kw = {"temperature": t, "epsilons": epsilons, "batch_size": batch_size}
        inside = odin_score_grid(model, val_images, **kw)
        scores = np.concatenate([inside, odin_score_grid(model, external_images, **kw)], axis=1)
        for e, row in zip(epsilons, scores, strict=True):
            auroc = auroc_out(is_ood, row)
            table.append({"temperature": float(t), "epsilon": float(e), "auroc": auroc})
            if best is None or auroc > best[0]:
                best = (auroc, float(t), float(e))
    assert best is not None
    return best[1], best[2], table
