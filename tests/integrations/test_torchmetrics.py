"""fdbench's torchmetrics classes equal fdbench.metrics over uneven batches and two processes."""

from __future__ import annotations

import socket

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchmetrics")

from fdbench import metrics as M  # noqa: E402
from fdbench.integrations import torchmetrics as FT  # noqa: E402

pytestmark = pytest.mark.torch

#: (metric class, constructor arguments, the fdbench.metrics function of (residuals, confidence))
CASES = [
    (FT.AURC, {}, M.aurc),
    (FT.AURC, {"coverage_range": (0.2, 0.9)}, lambda r, c: M.aurc(r, c, coverage_range=(0.2, 0.9))),
    (FT.AUGRC, {}, M.augrc),
    (FT.EAURC, {}, M.eaurc),
    (FT.AUROCFailure, {}, M.auroc_f),
    (FT.FPRAtTPR, {"tpr": 0.8}, lambda r, c: M.fpr_at_tpr(r, c, 0.8)),
    (FT.SelectiveRiskAtCoverage, {}, lambda r, c: M.selective_risk_at_coverage(r, c, 0.95)),
    (FT.CoverageAtRisk, {"risk": 0.1}, lambda r, c: M.coverage_at_risk(r, c, 0.1)),
]
IDS = [f"{cls.__name__}{'-' + str(kw) if kw else ''}" for cls, kw, _ in CASES]


def _data(seed: int, n: int = 997) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    confidence = rng.normal(size=n)
    confidence[: n // 5] = np.round(confidence[: n // 5], 1)  # ties across batches
    residuals = (rng.random(n) < 1 / (1 + np.exp(2 * confidence))).astype(np.float64)
    return residuals, confidence


@pytest.mark.parametrize(("cls", "kwargs", "reference"), CASES, ids=IDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_uneven_batches_equal_numpy(cls, kwargs, reference, seed):
    residuals, confidence = _data(seed)
    metric = cls(**kwargs)
    cuts = np.sort(np.random.default_rng(seed + 10).choice(np.arange(1, 997), 6, replace=False))
    for r, c in zip(np.split(residuals, cuts), np.split(confidence, cuts), strict=True):
        # float32 confidence would lose ranking information: float64 goes in as it is
        metric.update(torch.from_numpy(c), torch.from_numpy(r).to(torch.int64))
    value = metric.compute()
    assert value.dtype == torch.float64
    expected = reference(residuals, confidence)
    assert abs(float(value) - expected) <= 1e-12
    metric.reset()
    metric.update(torch.from_numpy(confidence[:10]), torch.from_numpy(residuals[:10]))
    assert abs(float(metric.compute()) - reference(residuals[:10], confidence[:10])) <= 1e-12


def test_soft_residuals_and_order_of_batches():
    rng = np.random.default_rng(5)
    residuals, confidence = rng.random(300), np.round(rng.normal(size=300), 1)
    forward, backward = FT.AUGRC(), FT.AUGRC()
    for part in np.array_split(np.arange(300), 7):
        # forward: the batch's own value, the batch also accumulated
        batch_value = forward(torch.from_numpy(confidence[part]), torch.from_numpy(residuals[part]))
        assert float(batch_value) == M.augrc(residuals[part], confidence[part])
    for part in reversed(np.array_split(np.arange(300), 7)):
        backward.update(torch.from_numpy(confidence[part]), torch.from_numpy(residuals[part]))
    expected = M.augrc(residuals, confidence)
    assert abs(float(forward.compute()) - expected) <= 1e-12
    assert abs(float(backward.compute()) - expected) <= 1e-12


@pytest.mark.filterwarnings("ignore:The ``compute`` method of metric:UserWarning")
def test_bad_input_is_named():
    metric = FT.AURC()
    with pytest.raises(ValueError, match="no samples"):
        metric.compute()
    with pytest.raises(ValueError, match="confidence: expected a 1-D"):
        metric.update(torch.zeros(3, 2), torch.zeros(3))
    with pytest.raises(ValueError, match="residuals: expected 3 values"):
        metric.update(torch.zeros(3), torch.zeros(4))
    metric.update(torch.tensor([0.1, float("nan")]), torch.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="confidence"):
        metric.compute()
    with pytest.raises(ValueError, match="coverage"):
        FT.SelectiveRiskAtCoverage(coverage=1.5)
    with pytest.raises(ValueError, match="coverage_range"):
        FT.AURC(coverage_range=(0.5, 0.2))
    with pytest.raises(ValueError, match="risk"):
        FT.CoverageAtRisk(risk=-1)


def _worker(rank: int, port: int, seed: int, results) -> None:
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    try:
        residuals, confidence = _data(seed)
        shard = slice(0, 401) if rank == 0 else slice(401, None)  # uneven shards
        values = []
        for cls, kwargs, _ in CASES:
            metric = cls(**kwargs)
            r, c = residuals[shard], confidence[shard]
            for part in np.array_split(np.arange(r.size), 3 + rank):
                metric.update(torch.from_numpy(c[part]), torch.from_numpy(r[part]))
            values.append(float(metric.compute()))
        results[rank] = values
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.timeout(300)
def test_two_processes_gloo_equal_numpy_on_concatenation():
    import torch.multiprocessing as mp

    seed = 3
    with mp.Manager() as manager:
        results = manager.dict()
        mp.spawn(_worker, args=(_free_port(), seed, results), nprocs=2, join=True)
        results = dict(results)
    residuals, confidence = _data(seed)
    expected = [reference(residuals, confidence) for _, _, reference in CASES]
    for rank in (0, 1):
        assert len(results[rank]) == len(CASES)
        for got, want, name in zip(results[rank], expected, IDS, strict=True):
            assert abs(got - want) <= 1e-12, (rank, name, got, want)
    # each process alone sees another value: the states really were gathered
    shard_value = M.aurc(residuals[:401], confidence[:401])
    assert abs(results[0][0] - shard_value) > 1e-6
