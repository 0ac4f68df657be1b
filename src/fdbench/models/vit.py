"""A small Vision Transformer (Dosovitskiy et al. 2021) for small images."""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["SmallViT"]


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
