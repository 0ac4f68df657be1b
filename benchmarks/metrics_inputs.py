"""``evaluate_all`` against one ``np.sort`` and one ``np.argsort`` of the same confidences, on
kinds of confidences a benchmark of failure detection meets: continuous, float32 softmax
maxima (small tie groups), rounded (heavy ties), constant, two-valued, already sorted either
way, a wide range, float32 arrays, strided views, subnormals and huge values, negative
energies. Ratios measured in one process, interleaved rounds, best of ``--repeats``; the
thread pools of the numerical libraries limited to one thread before NumPy loads.

    PYTHONPATH=src python benchmarks/metrics_inputs.py [--n 1000000] [--repeats 7]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from fdbench import metrics as M  # noqa: E402


def confidences(n: int, seed: int = 0) -> dict[str, np.ndarray]:
    """The kinds of confidences, ``n`` of each."""
    rng = np.random.default_rng(seed)
    u = rng.random(n)
    logits = rng.normal(size=(n, 10)).astype(np.float32) * 3
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return {
        "uniform": u,
        "float32 softmax": (e.max(axis=1) / e.sum(axis=1)).astype(np.float64),
        "rounded, 3 decimals": np.round(u, 3),
        "rounded, 5 decimals": np.round(u, 5),
        "constant": np.full(n, 0.7),
        "two values": (u < 0.5).astype(np.float64),
        "ascending": np.sort(u),
        "descending": np.sort(u)[::-1].copy(),
        "N(0, 10^3)": rng.normal(size=n) * 1e3,
        "float32 array": u.astype(np.float32),
        "strided view": np.repeat(u, 2)[::2],
        "subnormal and huge": np.where(u < 0.1, 5e-324, np.where(u > 0.9, 1e300, u)),
        "negative energy": -np.abs(rng.normal(size=n)) * 50 - 10,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    n = args.n
    rng = np.random.default_rng(1)
    r = (rng.random(n) < 0.2).astype(np.float64)
    w = rng.random(n) * 2.0
    soft = rng.random(n)
    print(f"N = {n:,}, 20 % failures; ratio to np.argsort (a) and to np.sort (s) of the array")
    for kind, c in confidences(n).items():
        fns = {
            "argsort": lambda c=c: np.argsort(c),
            "sort": lambda c=c: np.sort(c),
            "binary": lambda c=c: M.evaluate_all(r, c),
            "weighted": lambda c=c: M.evaluate_all(r, c, sample_weight=w),
            "soft": lambda c=c: M.evaluate_all(soft, c),
            "soft, weighted": lambda c=c: M.evaluate_all(soft, c, sample_weight=w),
        }
        for fn in fns.values():
            fn()
        best = dict.fromkeys(fns, np.inf)
        for _ in range(args.repeats):
            for name, fn in fns.items():
                start = time.perf_counter()
                fn()
                best[name] = min(best[name], time.perf_counter() - start)
        a, s = best["argsort"], best["sort"]
        cells = [
            f"{name} {best[name] * 1e3:6.1f} ms ({best[name] / a:4.2f}a {best[name] / s:4.1f}s)"
            for name in list(fns)[2:]
        ]
        print(f"{kind:20s} argsort {a * 1e3:6.1f} sort {s * 1e3:5.1f} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
