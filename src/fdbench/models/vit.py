"""Vision Transformers (Dosovitskiy et al., ICLR 2021): a small one for small images and ViT-B/16
in timm's parameter layout (FD-Shifts' fine-tuned ViT), without depending on timm."""

from __future__ import annotations

import math
import os
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from .dropout import dropout_layers

__all__ = [
    "VIT_B16_WEIGHTS",
    "SmallViT",
    "VisionTransformer",
    "load_timm_weights",
    "resample_pos_embed",
    "vit_b16",
    "weights_path",
]


class SmallViT(nn.Module):
    """ViT feature extractor: non-overlapping ``patch_size`` patches, a class token, learned
    position embeddings, ``depth`` pre-norm transformer encoder layers; the features are the
    layer-normalised class token (N × ``dim``)."""

    def __init__(
        self,
        image_size: int = 28,
        in_channels: int = 1,
        patch_size: int = 7,
        dim: int = 64,
        depth: int = 4,
        heads: int = 4,
        mlp_ratio: int = 2,
    ) -> None:
        super().__init__()
        if image_size % patch_size:
            raise ValueError(
                f"image_size ({image_size}) must be a multiple of patch_size ({patch_size})"
            )
        if dim % heads:
            raise ValueError(f"dim ({dim}) must be a multiple of heads ({heads})")
        n_patches = (image_size // patch_size) ** 2
        self.feature_dim = dim
        self.patch = nn.Conv2d(in_channels, dim, patch_size, patch_size)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.randn(1, n_patches + 1, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(
            dim, heads, mlp_ratio * dim, dropout=0.0, batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        tokens = self.patch(x).flatten(2).transpose(1, 2)
        tokens = torch.cat([self.cls.expand(len(x), -1, -1), tokens], dim=1) + self.pos
        return self.norm(self.encoder(tokens)[:, 0])


# --------------------------------------------------------------------------- ViT-B/16 (timm layout)

#: File name the FD-Shifts ViT configs look for under ``$FDBENCH_DATA/weights/``.
VIT_B16_WEIGHTS = "vit_base_patch16_224_in21k.pth"
#: Where to get the weights (fdbench never downloads them).
VIT_B16_SOURCE = (
    "timm's ImageNet-21k ViT-B/16 ('vit_base_patch16_224.augreg_in21k', FD-Shifts' "
    "'vit_base_patch16_224_in21k'), saved with torch.save(model.state_dict(), path) or as "
    ".safetensors from https://huggingface.co/timm/vit_base_patch16_224.augreg_in21k"
)
#: Checkpoint keys that are not part of the feature extractor (timm's classifier and
#: representation layers); the classifier of :class:`~fdbench.models.network.Network` is new.
_IGNORED_PREFIXES = ("head.", "pre_logits.", "fc_norm.", "head_drop.")


class _Attention(nn.Module):
    """Multi-head self-attention with one ``qkv`` projection (timm's ``Attention``)."""

    def __init__(self, dim: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Sequential(*dropout_layers(dropout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attention = ((q @ k.transpose(-2, -1)) * self.scale).softmax(dim=-1)
        return self.proj_drop(self.proj((attention @ v).transpose(1, 2).reshape(b, n, d)))


class _Mlp(nn.Module):
    def __init__(self, dim: int, hidden: int, dropout: float) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.drop1 = nn.Sequential(*dropout_layers(dropout))
        self.fc2 = nn.Linear(hidden, dim)
        self.drop2 = nn.Sequential(*dropout_layers(dropout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop2(self.fc2(self.drop1(self.act(self.fc1(x)))))


class _Block(nn.Module):
    """Pre-norm transformer block: ``x + attn(norm1(x))``, then ``x + mlp(norm2(x))``."""

    def __init__(self, dim: int, heads: int, mlp_ratio: float, dropout: float) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = _Attention(dim, heads, dropout)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = _Mlp(dim, int(dim * mlp_ratio), dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class _PatchEmbed(nn.Module):
    def __init__(self, in_channels: int, dim: int, patch_size: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, dim, patch_size, patch_size)


class _Embed(nn.Module):
    """Resize, patch embedding, class token, position embedding and ``pos_drop`` of ``vit``
    (a view on its parameters, not a copy)."""

    def __init__(self, vit: VisionTransformer) -> None:
        super().__init__()
        object.__setattr__(self, "vit", vit)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        vit = self.vit
        size = vit.img_size
        if x.shape[-2:] != (size, size):
            x = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False,
                              antialias=True)  # fmt: skip
        tokens = vit.patch_embed.proj(x).flatten(2).transpose(1, 2)
        tokens = torch.cat([vit.cls_token.expand(len(x), -1, -1), tokens], dim=1)
        return vit.pos_drop(tokens + vit.pos_embed)


class _ClassToken(nn.Module):
    def __init__(self, norm: nn.Module) -> None:
        super().__init__()
        self.norm = norm

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)[:, 0]


class VisionTransformer(nn.Module):
    """Vision Transformer (Dosovitskiy et al., ICLR 2021) with timm's parameter names.

    The input (normalised, N × C × H × W) is resized to ``img_size`` × ``img_size`` (bilinear,
    anti-aliased; FD-Shifts scales every image to 384 × 384 in its data transform,
    ``fd_shifts/experiments/configs.py``), cut into ``patch_size`` patches
    (``patch_embed.proj``), prefixed with ``cls_token`` and added to ``pos_embed``; ``depth``
    pre-norm blocks (``blocks.<i>.{norm1, attn.qkv, attn.proj, norm2, mlp.fc1, mlp.fc2}``,
    layer-norm eps 1e-6, exact GELU) follow, and the features are the class token after the
    final ``norm`` (``feature_dim`` = ``dim``). These are the keys of timm's
    ``VisionTransformer``, so a timm state dict loads by name (:func:`load_timm_weights`); timm
    itself is not needed. ``dropout`` (FD-Shifts: 0.1, timm's ``drop_rate`` in
    ``fd_shifts/models/networks/vit.py``) follows the position embedding, the attention
    projection and both MLP layers when ``placement`` is ``"fdshifts"``; with ``"head"`` the
    body has none (the network's dropout before its final layer remains).
    :attr:`sequence` holds the embedding, the blocks and the class-token read-out in order.
    """

    def __init__(
        self,
        img_size: int = 384,
        in_channels: int = 3,
        patch_size: int = 16,
        dim: int = 768,
        depth: int = 12,
        heads: int = 12,
        mlp_ratio: float = 4.0,
        dropout: float = 0.0,
        placement: str = "fdshifts",
    ) -> None:
        super().__init__()
        if img_size % patch_size:
            raise ValueError(
                f"img_size ({img_size}) must be a multiple of patch_size ({patch_size})"
            )
        if dim % heads:
            raise ValueError(f"dim ({dim}) must be a multiple of heads ({heads})")
        p = dropout if placement == "fdshifts" else 0.0
        self.img_size = img_size
        self.patch_size = patch_size
        self.feature_dim = dim
        self.patch_embed = _PatchEmbed(in_channels, dim, patch_size)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.randn(1, (img_size // patch_size) ** 2 + 1, dim) * 0.02)
        self.pos_drop = nn.Sequential(*dropout_layers(p))
        self.blocks = nn.Sequential(*(_Block(dim, heads, mlp_ratio, p) for _ in range(depth)))
        self.norm = nn.LayerNorm(dim, eps=1e-6)

    @property
    def sequence(self) -> nn.Sequential:
        """Embedding, blocks and class-token read-out in order (their composition is
        :meth:`forward`)."""
        return nn.Sequential(_Embed(self), *self.blocks, _ClassToken(self.norm))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.blocks(_Embed(self)(x)))[:, 0]


def resample_pos_embed(pos_embed: torch.Tensor, grid: int) -> torch.Tensor:
    """Position embeddings (1 × (1 + g²) × D, class token first) resampled to a ``grid`` ×
    ``grid`` patch grid: the class token's is kept, the patch grid interpolated bicubically
    (as timm's ``resample_abs_pos_embed`` when fine-tuning at 384 × 384 from 224 × 224)."""
    n = pos_embed.shape[1] - 1
    old = math.isqrt(n)
    if old * old != n:
        raise ValueError(f"pos_embed must hold 1 + g² tokens, got {pos_embed.shape[1]}")
    if old == grid:
        return pos_embed
    cls, patches = pos_embed[:, :1], pos_embed[:, 1:]
    patches = patches.reshape(1, old, old, -1).permute(0, 3, 1, 2)
    patches = F.interpolate(patches, size=(grid, grid), mode="bicubic", align_corners=False)
    return torch.cat([cls, patches.permute(0, 2, 3, 1).reshape(1, grid * grid, -1)], dim=1)


def weights_path(weights: str | os.PathLike) -> Path:
    """``weights`` as a path: absolute or relative to the working directory when it exists
    there, else under ``$FDBENCH_DATA/weights/`` (default ``~/.cache/fdbench/weights``)."""
    from fdbench.data.sources.cache import data_dir

    path = Path(weights).expanduser()
    if path.is_absolute() or path.exists():
        return path
    return data_dir(None) / "weights" / path


def load_timm_weights(model: VisionTransformer, weights: str | os.PathLike) -> None:
    """Load a timm ViT state dict (``.pth``/``.pt``/``.bin`` saved by ``torch.save``, or
    ``.safetensors`` where the ``safetensors`` package is installed) into ``model`` by key name.

    The classifier and representation keys (``head.*``, ``pre_logits.*``, ``fc_norm.*``) are
    not used; ``pos_embed`` is resampled to the model's patch grid
    (:func:`resample_pos_embed`). A missing file is one ``FileNotFoundError`` naming it and
    where to get it (nothing is downloaded); missing, unexpected or mis-shaped keys are a
    ``ValueError`` naming them.
    """
    path = weights_path(weights)
    if not path.is_file():
        raise FileNotFoundError(
            f"ViT weights {path} not found: put {VIT_B16_SOURCE} there (or set "
            "architecture.options.weights to its path); fdbench never downloads weights"
        )
    if path.suffix == ".safetensors":
        try:
            from safetensors.torch import load_file
        except ImportError:
            raise ValueError(
                f"{path}: reading .safetensors needs the 'safetensors' package; install it or "
                "save the state dict with torch.save"
            ) from None
        state = load_file(str(path))
    else:
        state = torch.load(path, map_location="cpu", weights_only=True)
    for key in ("state_dict", "model"):
        if isinstance(state, dict) and isinstance(state.get(key), dict):
            state = state[key]
    if not isinstance(state, dict):
        raise ValueError(f"{path}: expected a state dict (parameter name → tensor)")
    state = {k: v for k, v in state.items() if not k.startswith(_IGNORED_PREFIXES)}
    if "pos_embed" in state:
        state["pos_embed"] = resample_pos_embed(state["pos_embed"],
                                                model.img_size // model.patch_size)  # fmt: skip
    own = model.state_dict()
    missing = sorted(set(own) - set(state))
    unexpected = sorted(set(state) - set(own))
    shapes = sorted(k for k in set(own) & set(state) if own[k].shape != state[k].shape)
    if missing or unexpected or shapes:
        raise ValueError(
            f"{path} does not fit the ViT (depth {len(model.blocks)}, dim {model.feature_dim}, "
            f"patch {model.patch_size}): missing {missing[:5]}, unexpected {unexpected[:5]}, "
            f"other shapes {shapes[:5]}"
        )
    model.load_state_dict(state)


def vit_b16(
    in_channels: int = 3,
    *,
    dropout: float = 0.0,
    placement: str = "fdshifts",
    img_size: int = 384,
    patch_size: int = 16,
    dim: int = 768,
    depth: int = 12,
    heads: int = 12,
    mlp_ratio: float = 4.0,
    weights: str | os.PathLike | None = None,
) -> VisionTransformer:
    """ViT-B/16 at ``img_size`` (FD-Shifts: 384), randomly initialised or, with ``weights``,
    loaded from a local timm state dict (:func:`load_timm_weights`); smaller ``dim``,
    ``depth``, ``heads`` and ``patch_size`` give a tiny model with the same code path."""
    model = VisionTransformer(img_size, in_channels, patch_size, dim, depth, heads, mlp_ratio,
                              dropout, placement)  # fmt: skip
    if weights is not None:
        load_timm_weights(model, weights)
    return model
