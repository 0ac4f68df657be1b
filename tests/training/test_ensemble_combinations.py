"""Ensembles of 3 of 5 seeds in 5 combinations (Bernhardt et al.): config and planning."""

import itertools

import pytest

from fdbench.config.schema import EnsembleCombinations
from fdbench.jobs.plan import parse_config

from .conftest import make_experiment, tiny_config

SEEDS = [11, 22, 33, 44, 55]


def test_three_of_five_subsets():
    subsets = EnsembleCombinations().subsets(SEEDS)
    # combinations in lexicographic order, indices 4, 6, 2, 7, 3 of default_rng(0).permutation(10)
    assert subsets == [(11, 33, 55), (22, 33, 44), (11, 22, 55), (22, 33, 55), (11, 33, 44)]
    assert len(set(subsets)) == 5
    assert all(s in set(itertools.combinations(SEEDS, 3)) for s in subsets)
    assert EnsembleCombinations(seed=1).subsets(SEEDS) != subsets
    every = EnsembleCombinations(count=10).subsets(SEEDS)
    assert sorted(every) == list(itertools.combinations(SEEDS, 3))


def test_too_few_seeds_is_an_error():
    with pytest.raises(ValueError, match="11 subsets of 3 seeds"):
        EnsembleCombinations(count=11).subsets(SEEDS)
    methods = [{"name": "ce", "kind": "ce", "seeds": [0, 1, 2]}]
    with pytest.raises(ValueError, match="ensemble_combinations"):
        tiny_config(methods=methods, ensembles=["ce"],
                    ensemble_combinations={"size": 3, "count": 2})  # fmt: skip


def test_unset_is_left_out_of_the_dump():
    config = tiny_config()
    assert "ensemble_combinations" not in config.model_dump()
    again = parse_config({**config.model_dump(), "ensemble_combinations": {"count": 2}})
    assert again.ensemble_combinations == EnsembleCombinations(size=3, count=2, seed=0)


def test_plan_evaluates_each_combination(tmp_path):
    from fdbench.jobs.benchmark import evaluate_runs, plan_benchmark

    methods = [{"name": "ce", "kind": "ce", "seeds": SEEDS}]
    config = tiny_config(methods=methods, ensembles=["ce"], ensemble_combinations={})
    plan = plan_benchmark(config, [make_experiment()], tmp_path)
    jobs = [j for j in plan.evaluation if "ensemble" in j.key]
    assert [j.key for j in jobs] == [f"eval:tiny/ensemble(ce)/combination{i}" for i in range(5)]
    for i, (job, subset) in enumerate(zip(jobs, EnsembleCombinations().subsets(SEEDS),
                                          strict=True)):  # fmt: skip
        assert [p.parent.name for p in job.args[0]] == [f"seed{s}" for s in subset]
        assert job.args[1] == tmp_path / "evaluation" / "tiny" / "ensemble-ce" / f"combination{i}"
        assert job.fn.func is evaluate_runs and job.fn.keywords["seed"] == i
        # the members' split fingerprints travel with the job (provenance, issue #23)
        assert set(job.fn.keywords) == {"seed", "fingerprints"}
    plain = plan_benchmark(tiny_config(methods=methods, ensembles=["ce"]), [make_experiment()],
                           tmp_path)  # fmt: skip
    (job,) = [j for j in plain.evaluation if "ensemble" in j.key]
    # without combinations the ensemble job is evaluate_runs with only the fingerprints bound
    assert job.fn.func is evaluate_runs and set(job.fn.keywords) == {"fingerprints"}
    assert len(job.args[0]) == 5
