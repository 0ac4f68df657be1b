"""Speed and memory of fdbench.metrics: evaluate_all vs one sort and one argsort, bootstrap cost.

Run: PYTHONPATH=src python benchmarks/metrics_speed.py [--quick]
All ratios are measured in the same run (best of several repeats, interleaved), on one core:
the thread pools of the numerical libraries are limited to one thread before NumPy loads.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from collections.abc import Iterator  # noqa: E402

import numpy as np  # noqa: E402

from fdbench import metrics as M  # noqa: E402
from fdbench.metrics import suite  # noqa: E402


def _data(n: int, seed: int = 0, decimals: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """10 % failures, whose confidences lean lower; with ``decimals``, the confidences rounded
    to that many (ties: the counting paths)."""
    rng = np.random.default_rng(seed)
    residuals = (rng.random(n) < 0.1).astype(np.float64)
    confidence = rng.random(n) - 0.3 * residuals * rng.random(n)
    if decimals is not None:
        confidence = np.round(confidence, decimals)
    return residuals, confidence


def _best_interleaved(fns: dict, repeats: int) -> dict[str, float]:
    best = dict.fromkeys(fns, np.inf)
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


@contextlib.contextmanager
def _argsort_engine() -> Iterator[None]:
    """Every call of ``evaluate_all`` takes the argsort engine (the code before issue #37)."""
    saved = suite.MAX_SAMPLES, suite.BLOCKWISE_MAX_SAMPLES
    suite.MAX_SAMPLES = suite.BLOCKWISE_MAX_SAMPLES = 0
    try:
        yield
    finally:
        suite.MAX_SAMPLES, suite.BLOCKWISE_MAX_SAMPLES = saved


def _engine_call(r: np.ndarray, c: np.ndarray, w: np.ndarray | None) -> None:
    with _argsort_engine():
        M.evaluate_all(r, c, sample_weight=w)


def _traced_peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def evaluate_all_ratio(n: int, repeats: int, decimals: int | None = None) -> dict[str, float]:
    """``evaluate_all`` against one ``np.sort`` and one ``np.argsort`` of the same array, binary
    (value-sort path), weighted binary, soft and weighted soft (block walk), each beside the
    argsort engine they replace, interleaved rounds."""
    r, c = _data(n, decimals=decimals)
    w = np.random.default_rng(2).random(n) * 2.0
    soft = np.random.default_rng(3).random(n)
    fns = {
        "sort": lambda: np.sort(c),
        "argsort": lambda: np.argsort(c),
        "binary": lambda: M.evaluate_all(r, c),
        "binary, argsort engine": lambda: _engine_call(r, c, None),
        "weighted": lambda: M.evaluate_all(r, c, sample_weight=w),
        "weighted, argsort engine": lambda: _engine_call(r, c, w),
        "soft": lambda: M.evaluate_all(soft, c),
        "soft, argsort engine": lambda: _engine_call(soft, c, None),
        "soft, weighted": lambda: M.evaluate_all(soft, c, sample_weight=w),
        "soft, weighted, engine": lambda: _engine_call(soft, c, w),
    }
    times = _best_interleaved(fns, repeats)
    peaks = {name: _traced_peak(fn) for name, fn in fns.items() if name not in ("sort", "argsort")}
    print(
        f"N={n:>10,}: np.sort {times['sort'] * 1e3:8.1f} ms, np.argsort "
        f"{times['argsort'] * 1e3:8.1f} ms"
    )
    for name in peaks:
        print(
            f"  evaluate_all {name:<25} {times[name] * 1e3:8.1f} ms = "
            f"{times[name] / times['argsort']:5.2f}x argsort = "
            f"{times[name] / times['sort']:5.2f}x sort; peak memory "
            f"{peaks[name] / c.nbytes:4.2f}x the confidences (tracemalloc)"
        )
    return times


def growth(small: dict[str, float], large: dict[str, float], decades: float) -> None:
    """Log-log slope of each timing between two sizes."""
    slopes = ", ".join(
        f"{name} {np.log10(large[name] / small[name]) / decades:.2f}" for name in small
    )
    print(f"growth (log-log slope) from 10^6 to 10^7: {slopes}")


def bootstrap_cost(n: int, n_resamples: int, repeats: int) -> None:
    r, c = _data(n)
    metrics = ["aurc", "augrc", "auroc_f"]
    times = _best_interleaved(
        {"bootstrap": lambda: M.bootstrap(r, c, metrics=metrics, n_resamples=n_resamples)},
        repeats,
    )
    print(
        f"bootstrap {n_resamples} resamples, N={n:,}, aurc+augrc+auroc_f: "
        f"{times['bootstrap']:.3f} s (target <= 3 s)"
    )


def shared_counts_cost(n: int, n_resamples: int, n_csfs: int, repeats: int) -> None:
    r, c = _data(n)
    rng = np.random.default_rng(1)
    csfs = {f"csf{k}": c + 0.05 * rng.standard_normal(n) for k in range(n_csfs)}
    metrics = ["aurc", "augrc", "auroc_f"]
    times = _best_interleaved(
        {
            "one": lambda: M.bootstrap(r, c, metrics=metrics, n_resamples=n_resamples),
            "all": lambda: M.bootstrap(r, csfs, metrics=metrics, n_resamples=n_resamples),
            "counts": lambda: M.bootstrap_counts(n, n_resamples, 0),
        },
        repeats,
    )
    per_csf = (times["all"] - times["one"]) / (n_csfs - 1)
    print(
        f"bootstrap {n_resamples} x N={n:,}: counts {times['counts'] * 1e3:.1f} ms, "
        f"{n_csfs} CSFs over shared counts {times['all'] * 1e3:.0f} ms, "
        f"{per_csf * 1e3:.1f} ms per additional CSF (target ~30 ms); "
        f"100 such calls (20 studies x 5 seeds): {100 * times['all']:.1f} s (target <= 60 s)"
    )


_MEMORY_CHILD = """
import json, resource, sys, tracemalloc
import numpy as np
from fdbench import metrics as M
n = int(sys.argv[1])
rng = np.random.default_rng(0)
r = (rng.random(n) < 0.1).astype(np.float64)
c = rng.random(n) - 0.3 * r * rng.random(n)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
M.evaluate_all(r, c)
_, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"traced_peak": peak, "maxrss_before_kb": before, "maxrss_after_kb": after}))
"""


def peak_memory(n: int) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _MEMORY_CHILD, str(n)],
        check=True,
        capture_output=True,
        text=True,
    )
    info = json.loads(out.stdout.strip().splitlines()[-1])
    inputs = 2 * n * 8
    print(
        f"evaluate_all N={n:,}: peak allocated during the call {info['traced_peak'] / 1e9:.2f} GB "
        f"(tracemalloc, inputs of {inputs / 1e9:.2f} GB not included); process max RSS "
        f"{info['maxrss_after_kb'] / 1e6:.2f} GB, of which {info['maxrss_before_kb'] / 1e6:.2f} GB "
        "before the call (target <= 1.5 GB)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repeats, no N=10^7")
    parser.add_argument(
        "--suite-only", action="store_true", help="only evaluate_all against sort and argsort"
    )
    parser.add_argument(
        "--decimals",
        type=int,
        default=None,
        help="round the confidences to this many decimals (heavy ties)",
    )
    args = parser.parse_args()
    repeats = 3 if args.quick else 7
    times = {n: evaluate_all_ratio(n, repeats, args.decimals) for n in (10**5, 10**6)}
    if not args.quick:
        times[10**7] = evaluate_all_ratio(10**7, 3, args.decimals)
        growth(times[10**6], times[10**7], 1.0)
    if args.suite_only:
        return
    bootstrap_cost(10**5, 500, 2 if args.quick else 3)
    shared_counts_cost(10**4, 500, 13, 2 if args.quick else 3)
    if not args.quick:
        peak_memory(10**7)


if __name__ == "__main__":
    main()
