"""Confidence heads stored with the outputs (DeVries, DeepGamblers, ConfidNet, ODIN, DUQ)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_float_array

__all__ = ["confidnet", "devries", "dg_res", "duq", "odin"]


def devries(confidence: ArrayLike) -> np.ndarray:
    """DeVries confidence: the sigmoid output of the learned confidence branch, unchanged.

    DeVries & Taylor, "Learning confidence for out-of-distribution detection in neural
    networks", arXiv:1802.04865, 2018 (stored head ``"devries"``).
    """
    return as_float_array(confidence, "confidence", 1).copy()


def dg_res(reservation: ArrayLike) -> np.ndarray:
    """DG-Res: ``1 - reservation``, the DeepGamblers abstention output turned into a confidence.

    Liu et al., "Deep Gamblers: learning to abstain with portfolio theory", NeurIPS 2019
    (stored head ``"dg_reservation"`` holds the reservation probability).
    """
    return 1.0 - as_float_array(reservation, "reservation", 1)


def confidnet(tcp: ArrayLike) -> np.ndarray:
    """ConfidNet: the predicted true-class probability (TCP), unchanged.

    Corbière et al., "Addressing failure prediction by learning model confidence", NeurIPS 2019
    (stored head ``"confidnet"``).
    """
    return as_float_array(tcp, "tcp", 1).copy()


def duq(kernel: ArrayLike) -> np.ndarray:
    """DUQ: the largest RBF kernel value ``max_c K_c``, unchanged.

    van Amersfoort et al., "Uncertainty estimation using a single deep deterministic neural
    network", ICML 2020 (stored head ``"duq"``).
    """
    return as_float_array(kernel, "kernel", 1).copy()


def odin(score: ArrayLike) -> np.ndarray:
    """ODIN: the maximum softmax response at temperature T of the perturbed input, unchanged.

    Liang, Li & Srikant, "Enhancing the reliability of out-of-distribution image detection in
    neural networks", ICLR 2018 (stored head ``"odin"``, computed at inference by
    :mod:`fdbench.training.methods.odin.scores`).
    """
    return as_float_array(score, "score", 1).copy()
