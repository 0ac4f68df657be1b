"""The model-zoo study: selective prediction, calibration and C-OOD detection across many
classifiers (Galil et al., ICLR 2023), with the p-norm CSFs of Cattelan & Silva (UAI 2024): members,
their sources, evaluation and analyses. Its job is :mod:`fdbench.jobs.zoo`."""

from .config import ZooConfig, load_zoo_config, parse_zoo_config
from .evaluate import MemberFits, evaluate_member, sac
from .members import Member, discover_members, iter_blocks, read_metadata

__all__ = [
    "Member",
    "MemberFits",
    "ZooConfig",
    "discover_members",
    "evaluate_member",
    "iter_blocks",
    "load_zoo_config",
    "parse_zoo_config",
    "read_metadata",
    "sac",
]
