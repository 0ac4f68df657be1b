"""Write an example outputs file from a small real model: logistic regression on digits.

Seven digit classes are trained on; the three held-out classes form a new-class study, and the
in-distribution test images with Gaussian pixel noise form a covariate-shift study. The file holds
float64 logits, labels (-1 for new-class samples) and the study of each sample, the ``.npz``
layout that ``fdbench evaluate`` reads.

    python examples/make_outputs.py examples/digits_outputs.npz
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split


def make_outputs(path: Path, *, seed: int = 0) -> Path:
    """Train the model, compute logits on every study and save them to ``path``."""
    rng = np.random.default_rng(seed)
    x, y = load_digits(return_X_y=True)
    x = x / 16.0
    held_out = np.sort(rng.choice(10, size=3, replace=False))
    known = np.setdiff1d(np.arange(10), held_out)
    is_known = np.isin(y, known)
    remap = {c: i for i, c in enumerate(known)}
    y_known = np.array([remap[c] for c in y[is_known]])
    x_train, x_test, y_train, y_test = train_test_split(
        x[is_known], y_known, test_size=0.4, random_state=seed, stratify=y_known
    )
    model = LogisticRegression(C=0.05, max_iter=2000).fit(x_train, y_train)

    noisy = np.clip(x_test + rng.normal(0.0, 0.35, size=x_test.shape), 0.0, 1.0)
    x_new = x[~is_known]
    studies = {
        "iid": (x_test, y_test),
        "corruption/gaussian_noise": (noisy, y_test),
        "new_class/held_out_digits": (x_new, np.full(len(x_new), -1)),
    }
    logits = np.concatenate([model.decision_function(v[0]) for v in studies.values()])
    labels = np.concatenate([v[1] for v in studies.values()]).astype(np.int64)
    study = np.concatenate([[name] * len(v[1]) for name, v in studies.items()])
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        path,
        logits=logits.astype(np.float64),
        labels=labels,
        study=study.astype(str),
        classes=np.array([str(c) for c in known]),
    )
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, nargs="?", default=Path("examples/digits_outputs.npz"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(make_outputs(args.out, seed=args.seed))


if __name__ == "__main__":
    main()
