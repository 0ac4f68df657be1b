"""Corruption studies pooled per intensity: every corruption type of one severity as one study."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

#: Name of a per-type corruption split, ``corruption/<type>/<severity>``.
PER_TYPE_CORRUPTION = re.compile(r"^corruption/(?P<type>[^/]+)/(?P<severity>\d+)$")
#: Name of a pooled corruption study, ``corruption/<severity>``.
POOLED_CORRUPTION = re.compile(r"^corruption/(?P<severity>\d+)$")


def pooled_corruption_study(severity: int | str) -> str:
    """The name of the study pooling every corruption type at ``severity``: ``corruption/<s>``."""
    text = str(severity)
    if not text.isdigit():
        raise ValueError(f"severity must be a non-negative integer; got {severity!r}")
    return f"corruption/{text}"


def corruption_pools(splits: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Map each pooled corruption study to the per-type splits it concatenates.

    FD-Shifts (Jaeger et al., ICLR 2023) evaluates corruption shift once per intensity level on
    the pool of all corruption types: ``fd_shifts/analysis/studies.py``
    (``filter_noise_study_data``) reshapes the noise-study outputs to 15 types × 5 levels × N
    and keeps ``[:, level]``, one evaluation set per level (``iterate_noise_study_data``). Here
    the splits named ``corruption/<type>/<severity>`` (:data:`PER_TYPE_CORRUPTION`) of one
    severity form the study ``corruption/<severity>``, their samples concatenated in the order
    of ``splits``. Pools come in ascending severity; a severity without a per-type split has no
    pool.
    """
    members: dict[str, list[str]] = {}
    for name in splits:
        match = PER_TYPE_CORRUPTION.match(name)
        if match:
            members.setdefault(match["severity"], []).append(name)
    return {
        pooled_corruption_study(severity): tuple(members[severity])
        for severity in sorted(members, key=int)
    }


def study_splits(
    study: str,
    splits: Iterable[str],
    *,
    pools: Mapping[str, Sequence[str]] | None = None,
) -> tuple[str, ...]:
    """The splits study ``study`` is made of: itself if it is a split, else the members
    ``pools`` gives it (e.g. :func:`fdbench.protocol.unknown_detection_pools`), else the
    per-type corruption splits it pools (:func:`corruption_pools`).

    Raises ValueError when ``study`` is neither a split nor a pooled study.
    """
    names = list(splits)
    if study in names:
        return (study,)
    if pools and study in pools:
        members = tuple(pools[study])
        absent = [m for m in members if m not in names]
        if not members or absent:
            raise ValueError(
                f"pooled study {study!r} needs splits {absent or 'to pool'}; available: "
                f"{sorted(names)}"
            )
        return members
    pools = corruption_pools(names)
    if study in pools:
        return pools[study]
    pooled = f"; pooled studies: {list(pools)}" if pools else ""
    raise ValueError(f"study {study!r} not found; available splits: {sorted(names)}{pooled}")
