"""OpenMax (Bendale & Boult, CVPR 2016): Weibull-recalibrated logits with an unknown class."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_float_array, as_label_array

__all__ = [
    "OpenMaxFit",
    "OpenMaxParams",
    "WeibullTail",
    "fit_openmax",
    "fit_weibull_high",
    "openmax_distances",
    "openmax_probabilities",
    "openmax_score",
]

Distance = Literal["eucos", "euclidean", "cosine"]
RankWeights = Literal["linear", "half"]

#: libMR's default shift of the fitted tail (``libmr.MR(translate_amount=10000)``).
LIBMR_TRANSLATE = 10_000.0


@dataclass(frozen=True)
class OpenMaxParams:
    """OpenMax's hyper-parameters.

    ``tail_size``: how many of each class's largest distances the Weibull is fitted to (η);
    ``alpha``: how many top-ranked classes are recalibrated (α); ``distance``: ``eucos``
    (``eu_weight`` · Euclidean + cosine distance), ``euclidean`` or ``cosine``; ``rank_weights``:
    ``linear``, the weight (α + 1 − i)/α of the i-th ranked class (Bendale & Boult's released
    code; Kim et al.'s ImageNet setting), or ``half``, 0.5 for each of the α classes (what Kim
    et al.'s code does on CIFAR: ``alpha_weights = [0.5]`` broadcast over the α ranks in
    ``methods/openmax/openmax.py``). ``translate``: the shift libMR's ``FitHigh`` adds before
    fitting. Defaults: Kim et al.'s function defaults (``fit_weibull(tailsize=20)``,
    ``openmax(alpha=10, distance_type='eucos')``, ``eu_weight=5e-3`` in their ``test.py``);
    their benchmark picks α ∈ {1, 5, 10, 20, 30, 40} and η ∈ {2, 5, 10, 20, 30, 40} by OoD
    AUROC against the external validation set.
    """

    tail_size: int = 20
    alpha: int = 10
    distance: Distance = "eucos"
    eu_weight: float = 5e-3
    rank_weights: RankWeights = "linear"
    translate: float = LIBMR_TRANSLATE

    def __post_init__(self) -> None:
        for name in ("tail_size", "alpha"):
            value = getattr(self, name)
            if not isinstance(value, int | np.integer) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be an int >= 1; got {value!r}")
        if self.tail_size < 2:
            raise ValueError(f"tail_size must be >= 2 to fit a Weibull; got {self.tail_size}")
        if self.distance not in ("eucos", "euclidean", "cosine"):
            raise ValueError(
                f"distance must be 'eucos', 'euclidean' or 'cosine'; got {self.distance!r}"
            )
        if self.rank_weights not in ("linear", "half"):
            raise ValueError(f"rank_weights must be 'linear' or 'half'; got {self.rank_weights!r}")
        if not np.isfinite(self.eu_weight) or self.eu_weight < 0:
            raise ValueError(f"eu_weight must be finite and >= 0; got {self.eu_weight!r}")
        if not np.isfinite(self.translate) or self.translate <= 0:
            raise ValueError(f"translate must be finite and > 0; got {self.translate!r}")


@dataclass(frozen=True)
class WeibullTail:
    """A Weibull fitted to the largest distances of one class, as libMR's ``FitHigh`` keeps it.

    A distance d is mapped to t = d + ``translate`` − ``small_score`` (``small_score``: the
    smallest distance of the fitted tail) and scored by the Weibull CDF
    ``1 − exp(−(t / scale)^shape)`` for t > 0, 0 otherwise (libMR's ``W_score``/``CDF`` of a
    ``complement_reject`` fit).
    """

    shape: float
    scale: float
    small_score: float
    translate: float

    def cdf(self, distances: ArrayLike) -> np.ndarray:
        """The W-score (Weibull CDF of the translated distance) of each distance."""
        d = np.asarray(distances, dtype=np.float64)
        t = d + self.translate - self.small_score
        out = np.zeros_like(t)
        positive = t > 0
        # a power beyond the float range is +inf, whose CDF is exactly 1 (no warning)
        with np.errstate(over="ignore"):
            out[positive] = -np.expm1(-((t[positive] / self.scale) ** self.shape))
        return out


def _weibull_mle(x: np.ndarray) -> tuple[float, float]:
    """Maximum-likelihood (shape, scale) of a two-parameter Weibull (location 0) on x > 0.

    The shape k solves Σ xᵏ ln x / Σ xᵏ − 1/k − mean(ln x) = 0 (the profile-likelihood
    equation), the scale is (mean xᵏ)^(1/k); computed on x / max(x), which leaves k unchanged
    and keeps xᵏ finite for the large shapes a translated tail gives.
    """
    from scipy.optimize import brentq

    top = float(x.max())
    log_y = np.log(x / top)
    mean_log = float(log_y.mean())

    def equation(k: float) -> float:
        w = np.exp(k * log_y)
        return float(np.dot(w, log_y) / w.sum()) - 1.0 / k - mean_log

    low, high = 1e-3, 1.0
    while equation(high) < 0:
        high *= 2.0
        if high > 1e300:
            raise ValueError("the Weibull shape does not converge: distances are (nearly) equal")
    while equation(low) > 0:
        low /= 2.0
    shape = brentq(equation, low, high, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    scale = top * float(np.mean(np.exp(shape * log_y))) ** (1.0 / shape)
    return float(shape), float(scale)


def fit_weibull_high(
    distances: ArrayLike, tail_size: int, *, translate: float = LIBMR_TRANSLATE
) -> WeibullTail:
    """Fit a Weibull to the ``tail_size`` largest ``distances`` as libMR's ``FitHigh`` does.

    libMR (``MetaRecognition::FitHigh``/``EvtGeneric``, Scheirer et al.; used through
    ``libmr.MR().fit_high`` by Bendale & Boult and Kim et al.) sorts the data, keeps the
    ``tail_size`` largest values, translates them by ``translate − small_score`` (the smallest
    kept value), and fits a two-parameter Weibull by maximum likelihood. Here the same tail and
    translation, with the maximum-likelihood fit solved exactly (:func:`_weibull_mle`; equal to
    ``scipy.stats.weibull_min.fit(t, floc=0)`` up to solver tolerance). With fewer than
    ``tail_size`` distances all are used. ``translate`` must be positive: the smallest fitted
    value is ``translate`` itself. Raises ValueError when the tail has fewer than two distinct
    values (no Weibull fits).
    """
    d = as_float_array(distances, "distances", 1)
    if not isinstance(tail_size, int | np.integer) or tail_size < 2:
        raise ValueError(f"tail_size must be an int >= 2; got {tail_size!r}")
    if not np.isfinite(translate) or translate <= 0:
        raise ValueError(f"translate must be finite and > 0; got {translate!r}")
    tail = np.sort(d)[-int(tail_size) :]
    if np.unique(tail).size < 2:
        raise ValueError(
            f"the {tail.size} largest distances hold fewer than two distinct values; "
            "no Weibull can be fitted"
        )
    small = float(tail[0])
    shape, scale = _weibull_mle(tail + translate - small)
    return WeibullTail(shape=shape, scale=scale, small_score=small, translate=float(translate))


def openmax_distances(
    logits: ArrayLike, mav: ArrayLike, *, distance: Distance = "eucos", eu_weight: float = 5e-3
) -> np.ndarray:
    """Distance of every activation vector (row of ``logits``) to one mean activation vector.

    ``euclidean``: ‖v − μ‖; ``cosine``: 1 − v·μ / (‖v‖ ‖μ‖) (scipy's cosine distance; 1 when a
    vector is zero); ``eucos``: ``eu_weight`` · euclidean + cosine (Bendale & Boult's code, with
    Kim et al.'s weight 5e-3 by default).
    """
    v = as_float_array(logits, "logits", 2)
    m = as_float_array(mav, "mav", 1)
    if m.shape[0] != v.shape[1]:
        raise ValueError(f"mav must have {v.shape[1]} entries; got {m.shape[0]}")
    euclid = np.sqrt(np.maximum(((v - m) ** 2).sum(axis=1), 0.0))
    if distance == "euclidean":
        return euclid
    norms = np.linalg.norm(v, axis=1) * np.linalg.norm(m)
    with np.errstate(invalid="ignore", divide="ignore"):
        cosine = np.where(norms > 0, 1.0 - (v @ m) / norms, 1.0)
    if distance == "cosine":
        return cosine
    if distance != "eucos":
        raise ValueError(f"distance must be 'eucos', 'euclidean' or 'cosine'; got {distance!r}")
    return eu_weight * euclid + cosine


@dataclass(frozen=True)
class OpenMaxFit:
    """Per-class mean activation vectors (K × K, logits as activation vectors) and Weibull
    tails, with the parameters they were fitted and are applied with.

    A class without a model (see :func:`fit_openmax`) has a NaN row in ``mavs`` when it has
    no correctly classified training sample, and ``None`` in ``tails``; its activation is not
    revised (its W-score counts as 0).
    """

    mavs: np.ndarray
    tails: tuple[WeibullTail | None, ...]
    params: OpenMaxParams

    @property
    def unmodelled(self) -> tuple[int, ...]:
        """The classes without a Weibull model, whose activations OpenMax leaves as they are."""
        return tuple(c for c, tail in enumerate(self.tails) if tail is None)


def _class_model(
    rows: np.ndarray, params: OpenMaxParams
) -> tuple[np.ndarray | None, WeibullTail | None, str]:
    """One class's MAV and Weibull tail from its correctly classified rows, or None and why
    there is none."""
    if rows.shape[0] == 0:
        return None, None, "has no correctly classified training sample"
    mav = rows.mean(axis=0)
    d = openmax_distances(rows, mav, distance=params.distance, eu_weight=params.eu_weight)
    tail = np.sort(d)[-params.tail_size :]
    if np.unique(tail).size < 2:
        why = (
            f"has {rows.shape[0]} correctly classified training sample(s) whose distances to "
            "its mean activation vector hold fewer than two distinct values"
        )
        return mav, None, why
    return mav, fit_weibull_high(d, params.tail_size, translate=params.translate), ""


def fit_openmax(
    train_logits: ArrayLike, train_labels: ArrayLike, params: OpenMaxParams | None = None
) -> OpenMaxFit:
    """Fit OpenMax's per-class models on training outputs (Bendale & Boult, 2016, Alg. 1).

    For every class c, the mean activation vector μ_c is the mean of the logits of the training
    samples of class c that the network classifies correctly (arg-max = c), and a Weibull
    (:func:`fit_weibull_high`) is fitted to the ``params.tail_size`` largest distances
    (:func:`openmax_distances`) of those samples to μ_c. As Kim et al.'s
    ``compute_train_score_and_mavs_and_dists`` (``methods/openmax/openmax.py``), the
    activation vectors are the logits.

    A class with no correctly classified training sample has no μ_c, and one whose distances
    hold fewer than two distinct values (a single correct sample) has no Weibull: such a class
    gets no model, its activation is not revised (w_c = 0, so v̂_c = v_c and it adds nothing
    to the unknown class), and a RuntimeWarning names it. Neither paper covers the case, and
    neither authors' code handles it: Bendale & Boult's ``preprocessing/MAV_Compute.py``
    indexes ``correct_features[0]`` (an IndexError) and Kim et al.'s
    ``compute_train_score_and_mavs_and_dists`` calls ``torch.cat`` on an empty list (a
    RuntimeError). It happens to briefly trained networks (e.g. a quick run's few epochs);
    the other classes keep the authors' recalibration. Raises ValueError when no class at
    all has a model.
    """
    params = OpenMaxParams() if params is None else params
    if not isinstance(params, OpenMaxParams):
        raise TypeError(f"params must be OpenMaxParams; got {type(params).__name__}")
    z = as_float_array(train_logits, "train_logits", 2)
    n_classes = z.shape[1]
    y = as_label_array(train_labels, "train_labels", z.shape[0], n_classes)
    correct = np.argmax(z, axis=1) == y
    mavs, tails, missing = [], [], []
    for c in range(n_classes):
        mav, tail, why = _class_model(z[correct & (y == c)], params)
        mavs.append(np.full(n_classes, np.nan) if mav is None else mav)
        tails.append(tail)
        if tail is None:
            missing.append(f"class {c} {why}")
    if len(missing) == n_classes:
        raise ValueError(f"OpenMax has no class to model: {'; '.join(missing)}")
    if missing:
        warnings.warn(
            f"OpenMax fits no Weibull model for {len(missing)} of {n_classes} classes, whose "
            f"activations it leaves unrevised: {'; '.join(missing)}",
            RuntimeWarning,
            stacklevel=2,
        )
    return OpenMaxFit(mavs=np.stack(mavs), tails=tuple(tails), params=params)


def _rank_weights(logits: np.ndarray, alpha: int, kind: RankWeights) -> np.ndarray:
    """ω: the weight of each class by its rank in each row (0 beyond the top α)."""
    n, k = logits.shape
    a = min(alpha, k)
    order = np.argsort(-logits, axis=1, kind="stable")[:, :a]
    ranks = np.arange(1, a + 1, dtype=np.float64)
    per_rank = (alpha + 1 - ranks) / alpha if kind == "linear" else np.full(a, 0.5)
    omega = np.zeros((n, k))
    np.put_along_axis(omega, order, np.broadcast_to(per_rank, order.shape), axis=1)
    return omega


def _openmax_log_probabilities(logits: ArrayLike, fit: OpenMaxFit) -> np.ndarray:
    from scipy.special import log_softmax

    z = as_float_array(logits, "logits", 2)
    if z.shape[1] != fit.mavs.shape[0]:
        raise ValueError(f"logits must have {fit.mavs.shape[0]} columns; got {z.shape[1]}")
    p = fit.params
    w = np.column_stack(
        [
            np.zeros(z.shape[0])
            if tail is None
            else tail.cdf(openmax_distances(z, mav, distance=p.distance, eu_weight=p.eu_weight))
            for mav, tail in zip(fit.mavs, fit.tails, strict=True)
        ]
    )
    scaled = z * (1.0 - _rank_weights(z, p.alpha, p.rank_weights) * w)
    unknown = (z - scaled).sum(axis=1, keepdims=True)
    return log_softmax(np.hstack([scaled, unknown]), axis=1)


def openmax_probabilities(logits: ArrayLike, fit: OpenMaxFit) -> np.ndarray:
    """OpenMax probabilities, N × (K + 1), the last column the unknown class (Alg. 2).

    With v the logits, w_c = CDF_c(distance(v, μ_c)) the W-score of class c and ω_c the rank
    weight (:class:`OpenMaxParams` ``rank_weights``; 0 outside the α top-ranked classes):
    v̂_c = v_c (1 − ω_c w_c), v̂_0 = Σ_c (v_c − v̂_c), and the probabilities are the softmax of
    (v̂_1, …, v̂_K, v̂_0) (Bendale & Boult's released code, as Kim et al.'s
    ``compute_openmax_prob``; the paper's Alg. 2 prints the weight with exp(−·), the code's
    CDF is what is used). A class without a model (:func:`fit_openmax`) has w_c = 0.
    """
    return np.exp(_openmax_log_probabilities(logits, fit))


def openmax_score(logits: ArrayLike, fit: OpenMaxFit) -> np.ndarray:
    """OpenMax confidence: 1 − P(unknown) of :func:`openmax_probabilities`.

    Kim et al. (2023) score OpenMax by the complement of the unknown-class probability
    (``metrics_md.py`` and ``metrics_ood.py``: ``scores = 1 - li_openmax``); here it is judged
    with the network's arg-max prediction like every other CSF (Kim et al. predict with the
    OpenMax arg-max over K + 1 classes, so their accuracy differs from the baseline's).
    Computed as the sum of the known classes' probabilities, in log space, and capped at 1:
    where P(unknown) underflows, the rounded sum can exceed 1 by an ulp, which is no
    probability (the calibration metrics refuse it).
    """
    from scipy.special import logsumexp

    log_p = _openmax_log_probabilities(logits, fit)
    return np.minimum(np.exp(logsumexp(log_p[:, :-1], axis=1)), 1.0)
