"""Confidence scoring functions computed from stored outputs, and their scaling."""

from .ensemble import ens_ee, ens_mi, ens_msr, ens_pe
from .evidential import edl_msr, edl_uncertainty
from .features import (
    fit_knn,
    fit_mahalanobis,
    fit_trust_score,
    fit_vim,
    knn_score,
    mahalanobis_score,
    trust_score,
    vim_score,
)
from .heads import confidnet, devries, dg_res
from .mcdropout import mcd_ee, mcd_mi, mcd_mls, mcd_msr, mcd_pe
from .openmax import (
    OpenMaxFit,
    OpenMaxParams,
    fit_openmax,
    openmax_probabilities,
    openmax_score,
)
from .pnorm import fit_maxlogit_pnorm, fit_pnorm_softmax, maxlogit_pnorm, pnorm_softmax
from .registry import OPT_IN, REGISTRY, available_csfs, clear_fit_cache, compute_csfs
from .scaling import PlattScaling, fit_platt, safe_sigmoid
from .softmax import doctor, energy, log_softmax, mls, msr, pe
from .specs import (
    ENTRY_POINT_GROUP,
    CSFContext,
    CSFSpec,
    add_csf,
    csf_spec,
    csf_specs,
    find_csf,
    register_csf,
)
from .temperature import fit_temperature, temp_mls

__all__ = [
    "ENTRY_POINT_GROUP",
    "OPT_IN",
    "REGISTRY",
    "CSFContext",
    "CSFSpec",
    "OpenMaxFit",
    "OpenMaxParams",
    "PlattScaling",
    "add_csf",
    "available_csfs",
    "clear_fit_cache",
    "compute_csfs",
    "confidnet",
    "csf_spec",
    "csf_specs",
    "devries",
    "dg_res",
    "doctor",
    "edl_msr",
    "edl_uncertainty",
    "energy",
    "ens_ee",
    "ens_mi",
    "ens_msr",
    "ens_pe",
    "find_csf",
    "fit_knn",
    "fit_mahalanobis",
    "fit_maxlogit_pnorm",
    "fit_openmax",
    "fit_platt",
    "fit_pnorm_softmax",
    "fit_temperature",
    "fit_trust_score",
    "fit_vim",
    "knn_score",
    "log_softmax",
    "mahalanobis_score",
    "maxlogit_pnorm",
    "mcd_ee",
    "mcd_mi",
    "mcd_mls",
    "mcd_msr",
    "mcd_pe",
    "mls",
    "msr",
    "openmax_probabilities",
    "openmax_score",
    "pe",
    "pnorm_softmax",
    "register_csf",
    "safe_sigmoid",
    "temp_mls",
    "trust_score",
    "vim_score",
]


def _import_modules() -> None:
    """Import every module of this package, so that a module that registers a CSF with
    :func:`register_csf` (the recipe of CONTRIBUTING.md: one new file) is in the list without any
    other file naming it."""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


_import_modules()
