"""Cost of computing every CSF relative to one ``numpy.max`` pass over the MC-dropout logits.

Default problem (the issue's): N = 10^5 test samples, K = 100 classes, S = 50 MC samples
(N × S × K float64 = 4 GB, allocated once and filled in place), D = 128 features, 10^4 training
samples, 5 ensemble members. Prints seconds and the ratio to the baseline for each CSF group, the
feature-based CSFs separately, and the whole ``compute_csfs`` call.

    PYTHONPATH=src python benchmarks/csf_speed.py            # full size (~4.5 GB of memory)
    PYTHONPATH=src python benchmarks/csf_speed.py --n 20000  # smaller
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from fdbench import csf
from fdbench.csf.registry import clear_fit_cache
from fdbench.outputs import RunOutputs, SplitOutputs


def _timed(function: Callable[[], object], repeats: int = 1) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def _fill_normal(rng: np.random.Generator, shape: tuple[int, ...], rows: int) -> np.ndarray:
    out = np.empty(shape)
    for start in range(0, shape[0], rows):
        rng.standard_normal(out=out[start : start + rows])
    return out


def _summary_csfs(summary: csf.mcdropout.MCDSummary) -> list[np.ndarray]:
    """The CSFs ``compute_csfs`` derives from one MC-dropout/ensemble summary."""
    predictive = summary.predictive_entropy
    return [
        summary.mean_probs.max(axis=1),
        -predictive,
        -summary.mean_entropy,
        summary.mean_entropy - predictive,
        summary.max_mean_logit,
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="test samples")
    parser.add_argument("--k", type=int, default=100, help="classes")
    parser.add_argument("--s", type=int, default=50, help="MC-dropout samples")
    parser.add_argument("--d", type=int, default=128, help="feature dimension")
    parser.add_argument("--n-train", type=int, default=10_000, help="training samples")
    parser.add_argument("--members", type=int, default=5, help="ensemble members")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    n, k, s, d = args.n, args.k, args.s, args.d

    labels = rng.integers(0, k, n)
    mcd_logits = _fill_normal(rng, (n, s, k), rows=1000)
    mcd_logits[np.arange(n), :, labels] += 3.0
    logits = mcd_logits.mean(axis=1)
    features = rng.normal(size=(n, d)) + np.eye(k, d)[labels] * 3
    train_labels = rng.integers(0, k, args.n_train)
    train_features = rng.normal(size=(args.n_train, d)) + np.eye(k, d)[train_labels] * 3
    weight, bias = rng.normal(size=(k, d)), rng.normal(size=k)
    val_labels = rng.integers(0, k, 10_000)
    val_logits = rng.normal(size=(10_000, k)) + 3.0 * np.eye(k)[val_labels]
    heads = {"devries": rng.random(n), "dg_reservation": rng.random(n), "confidnet": rng.random(n)}

    def make_run(member_logits: np.ndarray, with_all: bool) -> RunOutputs:
        splits = {"test": SplitOutputs(labels=labels, logits=member_logits)}
        if with_all:
            splits["test"] = SplitOutputs(
                labels=labels,
                logits=member_logits,
                mcd_logits=mcd_logits,
                features=features,
                heads=heads,
            )
            splits["train"] = SplitOutputs(
                labels=train_labels,
                logits=train_features @ weight.T + bias,
                features=train_features,
                kind="train",
            )
            splits["val"] = SplitOutputs(labels=val_labels, logits=val_logits, kind="val")
        return RunOutputs(splits=splits, meta={"fc_weight": weight, "fc_bias": bias})

    run = make_run(logits, with_all=True)
    others = [
        make_run(logits + rng.normal(size=logits.shape), with_all=False)
        for _ in range(args.members - 1)
    ]
    members = [logits] + [o.splits["test"].logits for o in others]
    train_x = train_features

    baseline = _timed(lambda: np.max(mcd_logits), repeats=3)
    print(f"N={n} K={k} S={s} D={d} train={args.n_train} members={args.members}")
    print(
        f"baseline numpy.max over N×S×K float64 ({mcd_logits.nbytes / 1e9:.2f} GB): "
        f"{baseline:.3f} s"
    )

    groups: list[tuple[str, Callable[[], object]]] = [
        (
            "logit CSFs (MSR, MLS, PE, energy, DOCTOR)",
            lambda: [f(logits) for f in (csf.msr, csf.mls, csf.pe, csf.energy, csf.doctor)],
        ),
        (
            "temperature fit on val (10^4 × K, FD-Shifts' L-BFGS) + TEMP-MLS",
            lambda: (
                t := csf.fit_temperature(val_logits, val_labels, method="fd-shifts"),
                csf.temp_mls(logits, t),
            ),
        ),
        (
            "MC-dropout CSFs (MSR, PE, EE, MI, MLS; one shared pass)",
            lambda: _summary_csfs(csf.mcdropout.mcd_summary(mcd_logits)),
        ),
        (
            f"ensemble CSFs ({args.members} members: MSR, PE, EE, MI)",
            lambda: _summary_csfs(csf.mcdropout.mcd_summary(csf.ensemble.stack_members(members))),
        ),
        (
            "learned heads (DeVries, DG-Res, ConfidNet)",
            lambda: (
                csf.devries(heads["devries"]),
                csf.dg_res(heads["dg_reservation"]),
                csf.confidnet(heads["confidnet"]),
            ),
        ),
    ]
    feature_groups: list[tuple[str, Callable[[], object]]] = [
        (
            "Mahalanobis (fit + score)",
            lambda: csf.mahalanobis_score(features, csf.fit_mahalanobis(train_x, train_labels)),
        ),
        ("DKNN k=50 (fit + score)", lambda: csf.knn_score(features, csf.fit_knn(train_x))),
        (
            "TrustScore (fit + score)",
            lambda: csf.trust_score(
                features, np.argmax(logits, axis=1), csf.fit_trust_score(train_x, train_labels)
            ),
        ),
        (
            "ViM (fit + score)",
            lambda: csf.vim_score(features, logits, csf.fit_vim(train_x, weight, bias)),
        ),
    ]
    print(f"{'CSF group':70s} {'seconds':>9s} {'× baseline':>11s}")
    for title, block in [("output-based", groups), ("feature-based", feature_groups)]:
        print(f"-- {title}")
        for name, function in block:
            seconds = _timed(function)
            print(f"{name:70s} {seconds:9.3f} {seconds / baseline:11.2f}")

    def whole() -> None:
        clear_fit_cache()
        csf.compute_csfs(run, "test", ensemble=others)

    seconds = _timed(whole)
    names = csf.available_csfs(run, "test", ensemble=others)
    print(f"-- compute_csfs(run, 'test', ensemble=...) -> {len(names)} CSFs, fits included")
    print(f"{'all CSFs':70s} {seconds:9.3f} {seconds / baseline:11.2f}")


if __name__ == "__main__":
    main()
