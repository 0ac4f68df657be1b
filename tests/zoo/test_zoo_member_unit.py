"""#34 principle 4 for the zoo: a member's C-OOD levels and results are one unit; resume
recomputes a pair that was not written together."""

from __future__ import annotations

import pandas as pd

import fdbench.jobs.zoo as zoo_jobs
from fdbench.core.io import write_table
from fdbench.core.runner import Job


def _member_job(tmp_path, monkeypatch, value: float) -> Job:
    frames = (pd.DataFrame({"value": [value]}), pd.DataFrame({"level": [value]}))
    monkeypatch.setattr(zoo_jobs, "evaluate_member", lambda member, config: frames)
    output = tmp_path / "members" / "m.0123.results.parquet"
    levels = output.with_name("m.0123.levels.parquet")
    job = Job("zoo:m", zoo_jobs.evaluate_member_job, (None, None, output), output,
              also=(levels,), verified=True)  # fmt: skip
    job.fn(*job.args)
    return job


def test_a_pair_written_together_is_kept(tmp_path, monkeypatch):
    job = _member_job(tmp_path, monkeypatch, 1.0)
    job.discard_damaged()
    assert job.done


def test_levels_of_another_evaluation_beside_the_results_are_recomputed(tmp_path, monkeypatch):
    job = _member_job(tmp_path, monkeypatch, 1.0)
    levels = job.also[0]
    write_table(pd.DataFrame({"level": [2.0]}), levels)  # another evaluation's levels
    job.discard_damaged()
    assert not levels.exists() and not job.output.exists()
