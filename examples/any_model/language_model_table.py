"""A language-model style table in the documented format, GENERATED here (no language model
runs; the numbers are synthetic, for illustration only): three models answer the same 400
questions of two studies, each answer scored by ROUGE-L against the reference, with three
confidence estimators per answer. ``fdbench evaluate --quality rouge_l`` compares the nine
(model, estimator) pairs with paired bootstrap intervals; ``fdbench report`` shows them.

    python examples/any_model/language_model_table.py OUT
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _run import fdbench

#: Generated models: (name, mean answer quality, how well its sequence likelihood tracks it).
MODELS = (
    ("generated-small", 0.45, 1.2),
    ("generated-medium", 0.6, 0.8),
    ("generated-large", 0.75, 0.5),
)


def generated_table(n_questions: int = 400, seed: int = 0) -> pd.DataFrame:
    """One row per question and model: ``sample_id``, ``study`` (``in_domain`` or
    ``out_of_domain``), ``rouge_l`` in [0, 1] and three confidences: the length-normalised
    sequence likelihood, the consistency of 10 sampled answers, a verbalised confidence in
    tenths."""
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0, 1, n_questions)
    study = np.where(np.arange(n_questions) < n_questions // 2, "in_domain", "out_of_domain")
    shift = np.where(study == "out_of_domain", 0.8, 0.0)
    frames = []
    for name, skill, noise in MODELS:
        logit = np.log(skill / (1 - skill)) - difficulty - shift + rng.normal(0, 0.5, n_questions)
        quality = 1 / (1 + np.exp(-3 * logit))
        rouge = np.clip(quality + rng.normal(0, 0.05, n_questions), 0, 1)
        frames.append(
            pd.DataFrame(
                {
                    "model": name,
                    "sample_id": [f"q{i:04d}" for i in range(n_questions)],
                    "study": study,
                    "rouge_l": rouge.round(4),
                    "sequence_likelihood": logit - shift + rng.normal(0, noise, n_questions),
                    "sampling_consistency": rng.binomial(10, quality) / 10,
                    "verbalised": np.clip(
                        np.round(10 * quality + rng.normal(0, 3, n_questions)), 0, 10
                    )
                    / 10,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def main(out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    table = out / "generated_lm_outputs.jsonl"
    generated_table().to_json(table, orient="records", lines=True)
    run = out / "run"
    fdbench(
        "evaluate", str(table), "--quality", "rouge_l", "--bootstrap", "200",
        "--name", "generated_qa", "--out", str(run / "results.csv"),
    )  # fmt: skip
    fdbench("report", str(run))
    return run


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "any_model_language_model"))
