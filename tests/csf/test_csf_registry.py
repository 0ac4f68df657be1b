"""Tests of the CSF registry and ``compute_csfs`` over stored outputs."""

from __future__ import annotations

import numpy as np
import pytest

from fdbench import csf
from fdbench.csf import REGISTRY, available_csfs, compute_csfs
from fdbench.outputs import RunOutputs, SplitOutputs, read_outputs, write_outputs

K, D = 3, 4


def _split(rng, n, kind, *, mcd=False, features=True, heads=False):
    labels = rng.integers(0, K, n).astype(np.int64)
    return SplitOutputs(
        labels=labels,
        logits=rng.normal(size=(n, K)) + 2 * np.eye(K)[labels],
        mcd_logits=rng.normal(size=(n, 5, K)) if mcd else None,
        features=rng.normal(size=(n, D)) + labels[:, None] if features else None,
        heads={h: rng.random(n) for h in ("devries", "dg_reservation", "confidnet")}
        | {"edl_alpha": 1.0 + 3.0 * rng.random((n, K)), "duq": rng.random(n)}
        if heads
        else {},
        kind=kind,
    )


def _run(seed=0, *, meta_fc=True):
    rng = np.random.default_rng(seed)
    meta = {"method": "ce", "seed": seed}
    if meta_fc:
        meta |= {"fc_weight": rng.normal(size=(K, D)), "fc_bias": rng.normal(size=K)}
    return RunOutputs(
        splits={
            "train": _split(rng, 60, "train"),
            "val": _split(rng, 40, "val"),
            "iid": _split(rng, 30, "iid", mcd=True, heads=True),
        },
        meta=meta,
    )


def test_every_registered_csf_is_documented():
    for name, info in REGISTRY.items():
        assert info.name == name
        assert info.function.__doc__ and len(info.function.__doc__) > 40


def test_compute_all_csfs_agree_with_functions(tmp_path):
    run = _run()
    others = [_run(1), _run(2)]
    params = csf.OpenMaxParams(tail_size=5, alpha=2)
    out = compute_csfs(run, "iid", ensemble=others, openmax=params)
    assert set(out) == set(REGISTRY) - {"DeVries-MCD", "DG-Res-MCD", "ConfidNet-MCD", "ODIN"}
    assert "OpenMax" not in compute_csfs(run, "iid")  # opt-in
    s = run.splits["iid"]
    for name, values in out.items():
        assert values.dtype == np.float64 and values.shape == (30,), name
        assert np.all(np.isfinite(values)), name
    np.testing.assert_array_equal(out["MSR"], csf.msr(s.logits))
    val = run.splits["val"]
    t = csf.fit_temperature(val.logits, val.labels, method="fd-shifts")
    np.testing.assert_array_equal(out["TEMP-MLS"], csf.temp_mls(s.logits, t))
    assert "TEMP-MSR" not in out  # the same quantity is computed once, as TEMP-MLS
    np.testing.assert_allclose(out["MCD-MI"], csf.mcd_mi(s.mcd_logits), rtol=1e-12)
    np.testing.assert_allclose(out["MCD-EE"], csf.mcd_ee(s.mcd_logits), rtol=1e-12)
    members = [run.splits["iid"].logits] + [o.splits["iid"].logits for o in others]
    np.testing.assert_allclose(out["ENS-MI"], csf.ens_mi(members), rtol=1e-12, atol=1e-15)
    train = run.splits["train"]
    maha = csf.fit_mahalanobis(train.features, train.labels)
    np.testing.assert_array_equal(out["Mahalanobis"], csf.mahalanobis_score(s.features, maha))
    np.testing.assert_array_equal(
        out["TrustScore"],
        csf.trust_score(
            s.features,
            np.argmax(s.logits, 1),
            csf.fit_trust_score(train.features, train.labels),
        ),
    )
    np.testing.assert_array_equal(out["DG-Res"], 1 - s.heads["dg_reservation"])
    np.testing.assert_array_equal(out["DeVries"], s.heads["devries"])
    np.testing.assert_array_equal(out["ConfidNet"], s.heads["confidnet"])
    alpha = s.heads["edl_alpha"]
    np.testing.assert_array_equal(out["EDL-Unc"], -K / alpha.sum(axis=1))
    np.testing.assert_array_equal(out["EDL-MSR"], alpha.max(axis=1) / alpha.sum(axis=1))
    np.testing.assert_array_equal(out["DUQ"], s.heads["duq"])
    # ensemble given with run included yields the same members
    again = compute_csfs(run, "iid", ensemble=[run, *others])
    np.testing.assert_array_equal(again["ENS-PE"], out["ENS-PE"])
    # lazily read stores give the same CSFs
    write_outputs(tmp_path / "run", run)
    lazy = compute_csfs(read_outputs(tmp_path / "run", lazy=True), "iid")
    for name, values in lazy.items():
        np.testing.assert_array_equal(values, out[name], err_msg=name)


def test_only_allowed_csfs_are_computed():
    run = _run(meta_fc=False)
    del run.splits["val"]
    run.splits["train"].features = None
    names = available_csfs(run, "iid")
    logit_csfs = ["MSR", "MLS", "PE", "energy", "DOCTOR"]
    mcd_csfs = ["MCD-MSR", "MCD-PE", "MCD-EE", "MCD-MI", "MCD-MLS"]
    heads = ["DeVries", "DG-Res", "ConfidNet", "EDL-MSR", "EDL-Unc", "DUQ"]
    assert names == [*logit_csfs, *mcd_csfs, *heads]
    assert set(compute_csfs(run, "iid")) == set(names)
    with pytest.raises(ValueError, match="split must be one of"):
        compute_csfs(run, "nope")


def test_fits_are_cached_per_run(monkeypatch):
    calls = {"temperature": 0, "mahalanobis": 0}
    fit_t, fit_m = csf.temperature.fit_temperature, csf.features.fit_mahalanobis

    def counting_t(*args, **kwargs):
        calls["temperature"] += 1
        return fit_t(*args, **kwargs)

    def counting_m(*args):
        calls["mahalanobis"] += 1
        return fit_m(*args)

    monkeypatch.setattr("fdbench.csf.temperature.fit_temperature", counting_t)
    monkeypatch.setattr("fdbench.csf.features.fit_mahalanobis", counting_m)
    run = _run()
    for split in ("iid", "val", "iid"):
        compute_csfs(run, split)
    assert calls == {"temperature": 1, "mahalanobis": 1}
    compute_csfs(_run(), "iid")
    assert calls == {"temperature": 2, "mahalanobis": 2}


def test_dg_temp_mls_uses_the_k_class_logits_of_a_deepgamblers_network():
    # FD-Shifts (fd_shifts/models/devries_model.py, test_step) keeps outputs[:, :-1]: the
    # temperature is fitted and the softmax taken over the K class logits, without the
    # reservation output. fdbench's inference stores the same K logits.
    torch = pytest.importorskip("torch")
    from fdbench.models import build_model
    from fdbench.training import predict_split

    torch.manual_seed(0)
    net = build_model("convnet", num_classes=3, head="deepgamblers", width=2, feature_dim=6)
    rng = np.random.default_rng(0)
    splits = {}
    for name, n in (("val", 60), ("iid", 40)):
        images = rng.integers(0, 256, (n, 28, 28, 1), dtype=np.uint8)
        labels = rng.integers(0, 3, n)
        splits[name] = predict_split(net.eval(), images, labels, kind=name, mc_samples=0)
    run = RunOutputs(splits=splits, meta={})
    w = net.classifier.weight.detach().double().numpy()
    b = net.classifier.bias.detach().double().numpy()
    outputs = {name: s.features @ w.T + b for name, s in splits.items()}
    assert outputs["iid"].shape[1] == 4  # K = 3 classes + the reservation output
    val = splits["val"]
    t = csf.fit_temperature(outputs["val"][:, :3], val.labels, method="fd-shifts")
    z = outputs["iid"][:, :3] / t
    expected = np.exp(z - z.max(axis=1, keepdims=True))
    expected = expected.max(axis=1) / expected.sum(axis=1)
    got = compute_csfs(run, "iid")["TEMP-MLS"]
    np.testing.assert_allclose(got, expected, rtol=1e-9)
    with_reservation = np.exp(outputs["iid"] / t - (outputs["iid"] / t).max(axis=1, keepdims=True))
    assert not np.allclose(got, with_reservation[:, :3].max(axis=1) / with_reservation.sum(axis=1))
