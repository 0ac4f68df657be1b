"""Peak memory and wall time of ``fdbench evaluate`` on large ``.npz`` files of logits.

Two files of float64 logits with labels (``np.savez``, uncompressed, one ``iid`` split):
50,000 x 1,000 (ImageNet's validation set) and 1,000,000 x 10. For each, in interleaved
rounds, ``fdbench evaluate FILE --out results.parquet`` runs in a child process whose peak RSS
is read from the kernel (``RUSAGE_CHILDREN`` of a wrapper process that has no other child),
and so does a plain NumPy script that loads the file, computes the softmax and sorts one
confidence per CSF that ``fdbench evaluate`` reported. Printed: the peak RSS over the size of
the logits, and the wall time of ``fdbench evaluate`` over the script's (best of the rounds).

``--before SRC`` also runs ``fdbench evaluate`` from another checkout's ``src`` folder (e.g.
the main branch) in the same rounds, for a before/after comparison in one session.

Then, per source, the wall time of ``import fdbench.metrics`` and of the modules ``fdbench
evaluate`` imports to evaluate a ``.npz`` file (:data:`EVALUATE_IMPORTS`), each in a fresh
interpreter (best of ``--rounds`` interleaved rounds, the interpreter's own start-up, measured
by ``python -c pass``, subtracted).

    PYTHONPATH=src python benchmarks/evaluate_scale.py [--before /path/to/main/src] \
        [--rounds 2] [--scale 1.0]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

_WRAPPER = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
wall = time.perf_counter() - start
if done.returncode:
    sys.exit(done.stdout[-2000:] + done.stderr[-2000:])
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
print(json.dumps({"wall_s": wall, "peak_rss": peak}))
"""

_PLAIN_SCRIPT = """
import sys
import numpy as np
with np.load(sys.argv[1]) as data:
    logits, labels = data["logits"], data["labels"]
shifted = logits - logits.max(axis=1, keepdims=True)
probs = np.exp(shifted)
probs /= probs.sum(axis=1, keepdims=True)
confidence = probs.max(axis=1)
for _ in range(int(sys.argv[2])):
    np.sort(confidence)
"""


#: The modules ``fdbench evaluate FILE.npz --out FILE.parquet`` imports (the command, the
#: reading, CSF and evaluation path, the console tables and the table writer).
EVALUATE_IMPORTS = (
    "fdbench.cli.evaluate",
    "fdbench.core.io",
    "fdbench.evaluation.runs",
    "fdbench.evaluation.tables",
    "fdbench.evaluation.probabilities",
    "fdbench.evaluation.loss_tables",
    "fdbench.outputs.load",
    "fdbench.csf",
    "fdbench.metrics.conventions",
    "fdbench.protocol.binary",
    "fdbench.report.console",
)


def write_logits(path: Path, n: int, k: int, seed: int = 0) -> int:
    """A file of ``n`` x ``k`` float64 logits whose arg-max is right ~75 % of the time;
    returns the size of the logits in bytes."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, k, n)
    logits = rng.standard_normal((n, k))
    logits[np.arange(n), labels] += 2.5
    np.savez(path, logits=logits, labels=labels)
    return logits.nbytes


def _measure(command: list[str], env: dict[str, str]) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *command],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _env(src: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = src
    return env


def _n_csfs(results: Path) -> int:
    import pandas as pd

    return int(pd.read_parquet(results, columns=["csf"])["csf"].nunique())


def measure_file(path: Path, nbytes: int, sources: dict[str, str], rounds: int, work: Path) -> None:
    """Interleaved rounds of ``fdbench evaluate`` (per source) and the plain script."""
    best: dict[str, dict[str, float]] = {}
    n_csfs = 0
    for _ in range(rounds):
        for label, src in sources.items():
            out = work / f"{label}_{path.stem}.parquet"
            for old in work.glob(f"{label}_{path.stem}*"):
                old.unlink() if old.is_file() else None
            command = [sys.executable, "-m", "fdbench", "evaluate", str(path), "--out", str(out)]
            command += ["--tables", str(work / f"{label}_{path.stem}_tables"), "--force"]
            result = _measure(command, _env(src))
            n_csfs = n_csfs or _n_csfs(out)
            previous = best.get(label)
            best[label] = {
                "wall_s": min(result["wall_s"], previous["wall_s"])
                if previous
                else result["wall_s"],
                "peak_rss": result["peak_rss"],
            }
        plain = _measure(
            [sys.executable, "-c", _PLAIN_SCRIPT, str(path), str(n_csfs)], dict(os.environ)
        )
        previous = best.get("numpy script")
        best["numpy script"] = {
            "wall_s": min(plain["wall_s"], previous["wall_s"]) if previous else plain["wall_s"],
            "peak_rss": plain["peak_rss"],
        }
    script = best["numpy script"]
    print(
        f"{path.name}: logits {nbytes / 2**20:,.0f} MiB, {n_csfs} CSFs; plain NumPy script "
        f"{script['wall_s']:.2f} s, peak RSS {script['peak_rss'] / 2**20:,.0f} MiB "
        f"= {script['peak_rss'] / nbytes:.2f}x the logits"
    )
    for label in sources:
        run = best[label]
        print(
            f"  fdbench evaluate ({label}): {run['wall_s']:.2f} s = "
            f"{run['wall_s'] / script['wall_s']:.2f}x the script; peak RSS "
            f"{run['peak_rss'] / 2**20:,.0f} MiB = {run['peak_rss'] / nbytes:.2f}x the logits"
        )


def _import_seconds(code: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return time.perf_counter() - start


def measure_imports(sources: dict[str, str], rounds: int) -> None:
    """Best-of-``rounds`` import times per source, the interpreter's start-up subtracted."""
    codes = {
        "import fdbench.metrics": "import fdbench.metrics",
        "the evaluate path's imports": "import " + ", ".join(EVALUATE_IMPORTS),
    }
    best: dict[tuple[str, str], float] = {}
    for _ in range(rounds):
        for label, src in sources.items():
            env = _env(src)
            bare = _import_seconds("pass", env)
            for what, code in codes.items():
                seconds = _import_seconds(code, env) - bare
                best[label, what] = min(seconds, best.get((label, what), seconds))
    for (label, what), seconds in best.items():
        print(f"  {what} ({label}): {seconds:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", help="src folder of another checkout to compare with")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--scale", type=float, default=1.0, help="fraction of the rows of both files (smoke test)"
    )
    args = parser.parse_args()
    here = str(Path(__file__).resolve().parent.parent / "src")
    sources = {"this checkout": here}
    if args.before:
        sources = {"before": args.before, **sources}
    with tempfile.TemporaryDirectory(prefix="fdbench_evaluate_scale_") as tmp:
        work = Path(tmp)
        for n, k in ((50_000, 1_000), (1_000_000, 10)):
            rows = max(100, int(n * args.scale))
            path = work / f"logits_{rows}x{k}.npz"
            start = time.perf_counter()
            nbytes = write_logits(path, rows, k)
            print(f"wrote {path.name} in {time.perf_counter() - start:.1f} s")
            measure_file(path, nbytes, sources, args.rounds, work)
            path.unlink()
    print(f"imports (best of {max(args.rounds, 5)} rounds):")
    measure_imports(sources, max(args.rounds, 5))


if __name__ == "__main__":
    main()
