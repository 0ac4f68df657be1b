"""AugMix: operations against Pillow, Jensen–Shannon loss by hand, convex mixing, training."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from PIL import Image, ImageOps  # noqa: E402

from fdbench.data.shifts.corruptions import CORRUPTIONS  # noqa: E402
from fdbench.training.methods.augmix import ops as am  # noqa: E402


def _batch(n=6, c=1, side=16, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(30, 200, size=(n, c, side, side))
    x[:, :, 4:12, 5:10] += 50  # a bright block, so that geometric ops move something
    return torch.from_numpy(x.clip(0, 255).astype(np.uint8))


def _pil(x: torch.Tensor, i: int) -> Image.Image:
    img = x[i].permute(1, 2, 0).numpy()
    return Image.fromarray(img[..., 0] if img.shape[2] == 1 else img)


def _tensor(img: Image.Image) -> torch.Tensor:
    a = np.asarray(img)
    return torch.from_numpy((a[None] if a.ndim == 2 else a.transpose(2, 0, 1)).copy())


@pytest.mark.parametrize("channels", [1, 3])
def test_point_operations_equal_pillow(channels):
    x = _batch(c=channels)
    x[0] = 77  # a constant image: autocontrast and equalize leave it
    level = torch.tensor([0.1, 1.0, 2.4, 2.6, 2.9, 1.7], dtype=torch.float64)
    for i in range(len(x)):
        img = _pil(x, i)
        bits = 4 - int(float(level[i]) * 4 / 10)
        threshold = 256 - int(float(level[i]) * 256 / 10)
        expected = {
            "autocontrast": ImageOps.autocontrast(img),
            "equalize": ImageOps.equalize(img),
            "posterize": ImageOps.posterize(img, bits),
            "solarize": ImageOps.solarize(img, threshold),
        }
        for name, want in expected.items():
            got = getattr(am, name)(x[i : i + 1], level[i : i + 1])[0]
            assert torch.equal(got, _tensor(want)), name


def test_geometric_operations_follow_pillow_in_the_interior():
    x = _batch(n=1, side=32)
    level = torch.tensor([2.5], dtype=torch.float64)
    img = _pil(x, 0)
    for name in ("rotate", "shear_x", "translate_y"):
        generator = torch.Generator().manual_seed(0)
        got = am.AUGMIX_OPERATIONS[name](x, level, generator)[0, 0].double()
        sign = -1.0 if torch.rand(1, generator=torch.Generator().manual_seed(0)) > 0.5 else 1.0
        if name == "rotate":
            want = img.rotate(sign * 7, resample=Image.BILINEAR)
        elif name == "shear_x":
            want = img.transform((32, 32), Image.AFFINE, (1, sign * 0.075, 0, 0, 1, 0),
                                 resample=Image.BILINEAR)  # fmt: skip
        else:
            want = img.transform((32, 32), Image.AFFINE, (1, 0, 0, 0, 1, sign * 2),
                                 resample=Image.BILINEAR)  # fmt: skip
        want = torch.from_numpy(np.asarray(want).astype(np.float64))
        inner = (slice(6, 26), slice(6, 26))
        assert (got[inner] - want[inner]).abs().max() <= 2, name
        assert not torch.equal(got, x[0, 0].double()), name


def test_operations_exclude_the_test_corruptions():
    # Hendrycks et al. 2020 (and Kim et al.'s augmentations.augmentations) leave out the
    # operations overlapping the corruption benchmark; fdbench's corruption studies use these
    assert set(am.AUGMIX_OPERATIONS).isdisjoint(CORRUPTIONS)
    assert len(am.AUGMIX_OPERATIONS) == 9
    assert {"contrast", "brightness", "color", "sharpness"}.isdisjoint(am.AUGMIX_OPERATIONS)


def test_jensen_shannon_consistency_by_hand():
    p = [[0.5, 0.5], [0.9, 0.1], [0.1, 0.9]]
    logits = [torch.tensor([row], dtype=torch.float64).log() for row in p]
    # mixture M = (1/2, 1/2): KL(p1 ‖ M) = 0, KL(p2 ‖ M) = KL(p3 ‖ M) = 0.9 ln 1.8 + 0.1 ln 0.2
    kl = 0.9 * math.log(1.8) + 0.1 * math.log(0.2)
    assert float(am.jensen_shannon_consistency(*logits)) == pytest.approx(2 * kl / 3, rel=1e-9)
    same = torch.tensor([[1.0, -2.0, 0.5]], dtype=torch.float64)
    assert float(am.jensen_shannon_consistency(same, same, same)) == pytest.approx(0, abs=1e-12)
    with pytest.raises(ValueError, match="two views"):
        am.jensen_shannon_consistency(same)


def test_mixing_is_a_convex_combination():
    x = torch.tensor([[[[10, 200]]]], dtype=torch.uint8)
    chains = [torch.tensor([[[[110, 0]]]], dtype=torch.uint8),
              torch.tensor([[[[50, 100]]]], dtype=torch.uint8)]  # fmt: skip
    got = am.mix_views(x, chains, torch.tensor([[0.25, 0.75]]), torch.tensor([0.4]))
    # (1 − 0.4)·x + 0.4·(0.25·chain1 + 0.75·chain2)
    expected = [0.6 * 10 + 0.4 * (0.25 * 110 + 0.75 * 50), 0.6 * 200 + 0.4 * (0.75 * 100)]
    np.testing.assert_allclose(got[0, 0, 0].numpy(), expected, rtol=1e-6)
    with pytest.raises(ValueError, match="sum to 1"):
        am.mix_views(x, chains, torch.tensor([[0.5, 0.6]]), torch.tensor([0.4]))


def test_augmix_views_are_mixtures_of_the_image_and_its_chains():
    x = _batch(n=8, c=3)
    view = am.augmix(x, torch.Generator().manual_seed(4))
    # the same draws, step by step: the weights' seed, then the chains
    generator = torch.Generator().manual_seed(4)
    rng = np.random.default_rng(int(torch.randint(0, 2**62, (1,), generator=generator)))
    w, m = rng.dirichlet([1.0] * 3, size=8), rng.beta(1.0, 1.0, size=8)
    chains = [am._chain(x, generator, -1, 3.0) for _ in range(3)]
    assert np.allclose(w.sum(1), 1) and (w >= 0).all() and ((m >= 0) & (m <= 1)).all()
    torch.testing.assert_close(view, am.mix_views(x, chains, torch.from_numpy(w),
                                                  torch.from_numpy(m)))  # fmt: skip
    stack = torch.stack([x, *chains]).float()
    assert (view >= stack.amin(0) - 1e-4).all() and (view <= stack.amax(0) + 1e-4).all()
    assert not torch.equal(view, x.float())
    torch.testing.assert_close(view, am.augmix(x, torch.Generator().manual_seed(4)))


def test_augmix_trains_one_epoch_on_a_tiny_config(tmp_path, experiment, make_config):
    from fdbench.outputs import read_outputs
    from fdbench.training import run_training_job
    from fdbench.training.jobs import load_checkpoint

    config = make_config(methods=[{"name": "am", "kind": "augmix", "seeds": [0]}])
    run = read_outputs(run_training_job(config, experiment, "am", 0, tmp_path))
    assert run.meta["method_kind"] == "augmix"
    params = run.meta["params"]
    assert (params["width"], params["depth"], params["severity"]) == (3, -1, 3.0)
    assert (params["alpha"], params["weight"]) == (1.0, 12.0)
    assert np.isfinite(run.splits["iid"].logits).all()
    net, _ = load_checkpoint(tmp_path / "tiny" / "am" / "seed0" / "model.pt")
    assert all(torch.isfinite(p).all() for p in net.parameters())
