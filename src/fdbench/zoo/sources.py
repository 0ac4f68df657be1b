"""Writing the members of a zoo config's ``sources`` into its zoo folder."""

from __future__ import annotations

from .config import ZooConfig
from .urls import is_url

__all__ = ["write_sources"]


def write_sources(config: ZooConfig) -> list[str]:
    """Write every member ``config.sources`` names into ``config.zoo`` (the models of each
    benchmark run folder, :func:`fdbench.zoo.checkpoints.import_benchmark_run`; the timm
    models, :func:`fdbench.zoo.timm_members.timm_members`) and return their names; members
    already in the folder are not recomputed."""
    sources = config.sources
    if (sources.benchmark_runs or sources.timm is not None) and is_url(config.zoo):
        raise ValueError(
            f"zoo: {config.zoo!r} is a URL; members of sources are written into a local zoo folder"
        )
    names: list[str] = []
    for run in sources.benchmark_runs:
        from .checkpoints import import_benchmark_run

        names += import_benchmark_run(run, config.zoo)
    if sources.timm is not None:
        from .timm_members import timm_members

        t = sources.timm
        names += timm_members(
            list(t.models),
            t.dataset,
            config.zoo,
            ood=t.ood,
            weights=t.weights,
            max_per_class=t.max_per_class,
            batch_size=t.batch_size,
            imagenet21k=t.imagenet21k,
            imagenet_o=t.imagenet_o,
            wordnet=t.wordnet,
            ood_samples=t.ood_samples,
            seed=config.seed,
        )
    return names
