"""One fixed, colour-blind-safe colour per CSF / scoring method across every report figure."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable

OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#F0E442")
"""Okabe & Ito's colour-blind-safe qualitative palette (Color Universal Design, 2008), black
left out (it is the colour of the optimal reference curve)."""

TOL_MUTED = (
    "#332288",
    "#88CCEE",
    "#44AA99",
    "#117733",
    "#999933",
    "#DDCC77",
    "#CC6677",
    "#882255",
    "#AA4499",
)
"""Paul Tol's colour-blind-safe "muted" qualitative palette (personal.sron.nl/~pault)."""

PALETTE = OKABE_ITO + TOL_MUTED
"""The colours a CSF can get: Okabe-Ito first, then Paul Tol's muted scheme."""

OPTIMAL_COLOUR = "#000000"
"""The optimal (oracle) reference curve: black, solid."""

RANDOM_COLOUR = "#7F7F7F"
"""The random-confidence reference curve: grey, dashed."""

HEAT_COLORMAP = "cividis"
"""The colormap of every heat map of the report (Nuñez et al., 2018): perceptually uniform and
readable with colour-vision deficiency, without a red-green axis."""


def csf_colour(name: str) -> str:
    """The fixed colour (``#RRGGBB``) of the CSF or scoring method ``name``.

    A CSF whose spec has a ``colour`` (:class:`fdbench.csf.CSFSpec`; the built-ins' colours
    are of :data:`PALETTE`) gets that colour; any other name a colour of :data:`PALETTE`
    chosen by the SHA-256 of the name, so the same name has the same colour in every figure,
    run and process (Python's ``hash`` of a string is salted per process). The 16
    colour-blind-safe colours cannot tell every CSF apart: the common ones (MSR, MLS, PE,
    energy, DOCTOR, TEMP-MLS, the feature CSFs, MCD-MSR/PE/EE, the learned heads) are all
    distinct; the ensemble CSFs share their single-network counterpart's colour (an ensemble
    run draws no other), and a figure that draws two CSFs of one colour tells them apart by
    the line style (:func:`line_styles`).
    """
    from fdbench.csf import find_csf

    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    spec = find_csf(name)
    if spec is not None and spec.colour is not None:
        return spec.colour
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return PALETTE[int.from_bytes(digest[:4], "big") % len(PALETTE)]


def csf_colours(names: Iterable[str]) -> dict[str, str]:
    """:func:`csf_colour` of each of ``names``, in their order."""
    return {name: csf_colour(name) for name in names}


def line_styles(names: Iterable[str]) -> dict[str, str]:
    """A matplotlib line style for each of ``names``: solid, and dotted / dash-dotted for the
    second / third CSF of a figure that has the :func:`csf_colour` of an earlier one."""
    styles = ("-", ":", "-.", (0, (5, 1, 1, 1, 1, 1)))
    seen: dict[str, int] = {}
    out = {}
    for name in names:
        colour = csf_colour(name)
        out[name] = styles[min(seen.get(colour, 0), len(styles) - 1)]
        seen[colour] = seen.get(colour, 0) + 1
    return out


def sequence_colours(n: int) -> list[str]:
    """``n`` colours for things that are not CSFs (studies, target risks): :data:`PALETTE` in
    order, repeated past its length."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative int; got {n!r}")
    return [PALETTE[i % len(PALETTE)] for i in range(n)]


def heat_colour(goodness: float) -> str:
    """CSS background for a table cell of goodness in [0, 1] (1 = best of its column): the
    :data:`HEAT_COLORMAP` colour of that value, blended half-way to white so the text on it
    stays readable; dark blue (worst) to light yellow (best)."""
    g = min(max(float(goodness), 0.0), 1.0)
    rgb = _heat_colormap()(g)[:3]
    return "#" + "".join(f"{round(255 * (0.5 + 0.5 * v)):02x}" for v in rgb)


@functools.cache
def _heat_colormap():
    """:data:`HEAT_COLORMAP`, looked up once: matplotlib's registry hands out a new copy on
    every lookup, which builds its lookup table again on first use (0.2 ms, for every cell)."""
    from matplotlib import colormaps

    return colormaps[HEAT_COLORMAP]
