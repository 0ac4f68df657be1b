"""ViT-B/16 in timm's parameter layout: key names, the block against PyTorch's attention, weight
loading by name with position-embedding resampling, dropout placement, and the pretrained
ViT-B/16 where its weight file is on disk."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from fdbench.models import build_model  # noqa: E402
from fdbench.models.dropout import has_dropout, split_at_first_dropout  # noqa: E402
from fdbench.models.vit import (  # noqa: E402
    VIT_B16_WEIGHTS,
    resample_pos_embed,
    vit_b16,
    weights_path,
)

TINY = {"img_size": 16, "patch_size": 4, "dim": 16, "depth": 2, "heads": 2}


def test_timm_key_names():
    keys = set(vit_b16(**TINY).state_dict())
    layers = ("norm1", "attn.qkv", "attn.proj", "norm2", "mlp.fc1", "mlp.fc2")
    block = {f"blocks.0.{k}.{p}" for k in layers for p in ("weight", "bias")}
    assert block <= keys
    assert {"cls_token", "pos_embed", "patch_embed.proj.weight", "patch_embed.proj.bias",
            "norm.weight", "norm.bias"} <= keys  # fmt: skip
    assert len(keys) == 6 + 2 * 12
    assert vit_b16(**TINY).pos_embed.shape == (1, 1 + 16, 16)


def test_block_matches_torch_multihead_attention():
    torch.manual_seed(0)
    model = vit_b16(**TINY).eval()
    block = model.blocks[0]
    mha = nn.MultiheadAttention(16, 2, batch_first=True)
    mha.in_proj_weight.data.copy_(block.attn.qkv.weight)
    mha.in_proj_bias.data.copy_(block.attn.qkv.bias)
    mha.out_proj.weight.data.copy_(block.attn.proj.weight)
    mha.out_proj.bias.data.copy_(block.attn.proj.bias)
    x = torch.randn(3, 17, 16)
    h = block.norm1(x)
    y = x + mha(h, h, h, need_weights=False)[0]
    mlp = block.mlp
    y = y + mlp.fc2(nn.functional.gelu(mlp.fc1(block.norm2(y))))
    torch.testing.assert_close(block(x), y, rtol=1e-5, atol=1e-5)


def test_features_are_the_normed_class_token_and_inputs_are_resized():
    torch.manual_seed(0)
    model = vit_b16(**TINY).eval()
    x = torch.randn(2, 3, 8, 8)
    tokens = model.blocks(model.sequence[0](x))
    torch.testing.assert_close(model(x), model.norm(tokens)[:, 0])
    up = nn.functional.interpolate(x, size=(16, 16), mode="bilinear", align_corners=False,
                                   antialias=True)  # fmt: skip
    torch.testing.assert_close(model(x), model(up))
    torch.testing.assert_close(model.sequence(x), model(x))


def test_load_by_name_with_resampled_positions(tmp_path):
    torch.manual_seed(1)
    source = vit_b16(**{**TINY, "img_size": 8})  # 2 x 2 patch grid
    state = source.state_dict()
    state["head.weight"] = torch.zeros(5, 16)  # timm's classifier: not used
    state["pre_logits.fc.weight"] = torch.zeros(16, 16)
    path = tmp_path / "vit.pth"
    torch.save({"state_dict": state}, path)
    target = vit_b16(**TINY, weights=path)  # 4 x 4 patch grid
    for key, value in source.state_dict().items():
        if key != "pos_embed":
            torch.testing.assert_close(target.state_dict()[key], value)
    torch.testing.assert_close(target.pos_embed, resample_pos_embed(source.pos_embed, 4))
    torch.testing.assert_close(target.pos_embed[:, 0], source.pos_embed[:, 0])
    bad = {k: v for k, v in state.items() if not k.startswith("blocks.1.")}
    torch.save(bad, path)
    with pytest.raises(ValueError, match=r"missing \['blocks\.1\.attn\.proj\.bias'"):
        vit_b16(**TINY, weights=path)


def test_missing_weights_name_the_file_and_never_download(tmp_path, monkeypatch):
    monkeypatch.setenv("FDBENCH_DATA", str(tmp_path))
    assert weights_path(VIT_B16_WEIGHTS) == tmp_path / "weights" / VIT_B16_WEIGHTS
    with pytest.raises(FileNotFoundError) as info:
        vit_b16(**TINY, weights=VIT_B16_WEIGHTS)
    message = str(info.value)
    assert str(tmp_path / "weights" / VIT_B16_WEIGHTS) in message
    assert "vit_base_patch16_224.augreg_in21k" in message and "never downloads" in message


def test_dropout_placements():
    fd = build_model("vit_b16", num_classes=3, in_channels=3, dropout=0.1, **TINY)
    assert has_dropout(fd.body)
    drops = [m for m in fd.body.modules() if isinstance(m, nn.Dropout)]
    assert len(drops) == 1 + 2 * 3 and {m.p for m in drops} == {0.1}
    prefix, rest = split_at_first_dropout(fd.body)
    x = torch.randint(0, 256, (2, 3, 16, 16), dtype=torch.uint8)
    fd.eval()
    torch.testing.assert_close(rest(prefix(fd.normalize(x))), fd.features(x))
    head = build_model("vit_b16", num_classes=3, in_channels=3, dropout=0.1,
                       dropout_placement="head", **TINY)  # fmt: skip
    assert not has_dropout(head.body) and head.has_dropout
    with pytest.raises(ValueError, match="dropout_placement for 'vit_b16'"):
        build_model("vit_b16", num_classes=3, dropout=0.1, dropout_placement="every_conv", **TINY)


def test_pretrained_vit_b16():
    path = weights_path(VIT_B16_WEIGHTS)
    if not path.is_file():
        pytest.skip(f"the ViT-B/16 weights are not on this machine ({path})")
    net = build_model("vit_b16", num_classes=2, in_channels=3, weights=VIT_B16_WEIGHTS).eval()
    x = torch.randint(0, 256, (1, 3, 32, 32), dtype=torch.uint8)
    assert net.features(x).shape == (1, 768)
