"""Brute-force metric definitions written straight from METRICS.md (explicit loops), for tests."""

from __future__ import annotations

import itertools
import math


def _weights(n, w):
    return [1.0] * n if w is None else [float(x) for x in w]


def curve_points(r, c, w=None):
    """(coverage, selective risk, generalized risk) for every distinct threshold, ascending
    threshold (coverage 1 first), then the end point at coverage 0."""
    n = len(r)
    w = _weights(n, w)
    total = sum(w)
    points = []
    for tau in sorted(set(c[i] for i in range(n) if w[i] > 0)):
        accepted = [i for i in range(n) if c[i] >= tau]
        acc_weight = sum(w[i] for i in accepted)
        loss = sum(w[i] * r[i] for i in accepted)
        points.append((acc_weight / total, loss / acc_weight, loss / total))
    points.append((0.0, points[-1][1], 0.0))
    return points


def trapezoid(xs, ys):
    area = 0.0
    for k in range(len(xs) - 1):
        area += abs(xs[k] - xs[k + 1]) * (ys[k] + ys[k + 1]) / 2
    return area


def aurc(r, c, w=None):
    pts = curve_points(r, c, w)
    return trapezoid([p[0] for p in pts], [p[1] for p in pts])


def augrc(r, c, w=None):
    pts = curve_points(r, c, w)
    return trapezoid([p[0] for p in pts], [p[2] for p in pts])


def aurc_range(r, c, low, high, w=None):
    pts = sorted((p[0], p[1]) for p in curve_points(r, c, w))
    area = 0.0
    for (x0, y0), (x1, y1) in itertools.pairwise(pts):
        a, b = max(x0, low), min(x1, high)
        if b <= a or x1 == x0:
            continue
        ya = y0 + (y1 - y0) * (a - x0) / (x1 - x0)
        yb = y0 + (y1 - y0) * (b - x0) / (x1 - x0)
        area += (b - a) * (ya + yb) / 2
    return area / (high - low)


def optimal(r):
    """AURC and AUGRC of the strict ascending-residual order (unit weights), from the curve."""
    n = len(r)
    ordered = sorted(r)
    cov, sel, gen = [], [], []
    for k in range(n, 0, -1):
        loss = sum(ordered[:k])
        cov.append(k / n)
        sel.append(loss / k)
        gen.append(loss / n)
    cov.append(0.0)
    sel.append(sel[-1])
    gen.append(0.0)
    return trapezoid(cov, sel), trapezoid(cov, gen)


def risk_at_coverage(r, c, x, w=None):
    chosen = None
    for cov, sel, _ in curve_points(r, c, w)[:-1]:
        if cov >= x:
            chosen = sel
    return chosen


def coverage_at_risk(r, c, risk, w=None):
    best = 0.0
    for cov, sel, _ in curve_points(r, c, w):
        if sel <= risk:
            best = max(best, cov)
    return best


def auroc(r, c, w=None):
    n = len(r)
    w = _weights(n, w)
    num = 0.0
    for i in range(n):
        for j in range(n):
            if r[i] == 0 and r[j] == 1:
                if c[i] > c[j]:
                    num += w[i] * w[j]
                elif c[i] == c[j]:
                    num += 0.5 * w[i] * w[j]
    pos = sum(w[i] for i in range(n) if r[i] == 0)
    neg = sum(w[i] for i in range(n) if r[i] == 1)
    return num / (pos * neg)


def ece_mce(r, c, n_bins=15, w=None):
    n = len(r)
    w = _weights(n, w)
    edges = [j / n_bins for j in range(n_bins + 1)]
    edges[-1] = 1.0
    total = sum(w)
    ece, mce = 0.0, -math.inf
    for j in range(n_bins):
        members = [i for i in range(n) if edges[j] < c[i] <= edges[j + 1] or (j == 0 and c[i] == 0)]
        weight = sum(w[i] for i in members)
        if weight == 0:
            continue
        acc = sum(w[i] * (1 - r[i]) for i in members) / weight
        conf = sum(w[i] * c[i] for i in members) / weight
        ece += weight / total * abs(acc - conf)
        mce = max(mce, abs(acc - conf))
    return ece, mce


def min_risk_at_coverage(r, c, x, w=None):
    """FD-Shifts' working point: the lowest selective risk among points with coverage >= x."""
    return min(sel for cov, sel, _ in curve_points(r, c, w)[:-1] if cov >= x)


def balanced_curve_points(r, c, labels, w=None):
    """(coverage, balanced selective risk) per distinct threshold, then the end point: the mean
    over the classes present of (failures of the class accepted) / (accepted of the class), 0
    for a class with nothing accepted."""
    n = len(r)
    w = _weights(n, w)
    kept = [i for i in range(n) if w[i] > 0]
    classes = sorted(set(labels[i] for i in kept))
    total = sum(w[i] for i in kept)
    points = []
    for tau in sorted(set(c[i] for i in kept)):
        accepted = [i for i in kept if c[i] >= tau]
        per_class = []
        for k in classes:
            members = [i for i in accepted if labels[i] == k]
            weight = sum(w[i] for i in members)
            per_class.append(sum(w[i] * r[i] for i in members) / weight if members else 0.0)
        points.append((sum(w[i] for i in accepted) / total, sum(per_class) / len(classes)))
    points.append((0.0, points[-1][1]))
    return points


def aurc_ba(r, c, labels, w=None):
    pts = balanced_curve_points(r, c, labels, w)
    return trapezoid([p[0] for p in pts], [p[1] for p in pts])
