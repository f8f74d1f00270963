"""Fit the weights of a linear candidate model to labelled decisions.

Rows come from ``label_games`` of a game's candidate module: each decision (``group``) has a few
candidates, each with features of the position after it and a ``target`` (its mean final score over
paired playouts). Only differences between the candidates of one decision matter to a policy that
plays the best one, so features and targets are centred per decision before the fit; this also
removes the noise that the paired futures share.

Per phase ``k`` the model is ``scale_k * theta0[k] + delta_k``: ``theta0`` (the greedy weights, or the
previous iteration's) with a free scale, plus a ridge-penalised correction on standardised features.
The ridge strength is chosen by held-out decisions: for each candidate strength, the mean target
of the candidate the fitted weights would play minus that of the one ``theta0`` would play. When no
strength gains on the held-out decisions, ``theta0`` is kept (the report's ridge is then ``inf``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: ridge strengths tried (per row, on standardised features)
RIDGES = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)


@dataclass(frozen=True)
class FitReport:
    """What a fit found: the chosen ridge, the held-out gain per decision of the fitted weights over
    ``theta0`` (mean target of the chosen candidate, with its standard error), rows and decisions."""

    ridge: float
    held_out_gain: float
    held_out_se: float
    rows: int
    decisions: int


def centre_by_group(group: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values`` minus the mean of their group (rows of one group are contiguous)."""
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    counts = np.diff(np.r_[starts, group.size])
    means = np.add.reduceat(values, starts, axis=0) / (counts if values.ndim == 1 else counts[:, None])
    return values - np.repeat(means, counts, axis=0)


def _solve(xc: np.ndarray, yc: np.ndarray, base: np.ndarray, ridge: float) -> np.ndarray:
    """Weights (float64[d]) of ``yc ~ a * (xc @ base) + xc @ delta`` with ``ridge`` on standardised delta."""
    n, d = xc.shape
    scale = xc.std(axis=0)
    scale[scale < 1e-9] = 1.0
    design = np.empty((n, d + 1))
    design[:, 0] = xc @ base
    design[:, 1:] = xc / scale
    gram = design.T @ design / max(n, 1)
    penalty = np.full(d + 1, ridge)
    penalty[0] = 0.0
    coef = np.linalg.solve(gram + np.diag(penalty) + 1e-12 * np.eye(d + 1), design.T @ yc / max(n, 1))
    return coef[0] * base + coef[1:] / scale


def pick_gain(group: np.ndarray, x: np.ndarray, y: np.ndarray, theta: np.ndarray,
              theta0: np.ndarray) -> np.ndarray:
    """Per decision: target of the candidate ``theta`` plays minus that of the one ``theta0`` plays."""
    return value_pick_gain(group, y, x @ theta, x @ theta0)


def value_pick_gain(group: np.ndarray, y: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per decision: target of the candidate with the highest value ``a`` minus that of the one with the
    highest ``b`` (rows of one decision contiguous)."""
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    ends = np.r_[starts[1:], group.size]
    return np.array([y[s + np.argmax(a[s:e])] - y[s + np.argmax(b[s:e])]
                     for s, e in zip(starts, ends, strict=True)])


def standard_error(values: np.ndarray) -> float:
    """The standard error of the mean of ``values`` (0 for fewer than two)."""
    return float(values.std(ddof=1) / np.sqrt(values.size)) if values.size > 1 else 0.0


def fit_theta(rows: dict[str, np.ndarray], theta0: np.ndarray, ridges: tuple[float, ...] = RIDGES,
              held_out: float = 0.25, seed: int = 0) -> tuple[np.ndarray, FitReport]:
    """Fit ``theta`` (float64[phases, d]) to ``rows`` starting from ``theta0`` (see the module
    docstring); the ridge is chosen on a held-out share of the decisions, then refitted on all."""
    group, phase = rows["group"], rows["phase"]
    x = rows["features"].astype(np.float64)
    y = rows["target"].astype(np.float64)
    xc, yc = centre_by_group(group, x), centre_by_group(group, y)
    ids = np.unique(group)
    rng = np.random.default_rng(seed)
    test_ids = rng.choice(ids, size=max(1, int(held_out * ids.size)), replace=False)
    is_test = np.isin(group, test_ids)
    best = (0.0, np.inf, np.zeros(0))  # keeping theta0 gains 0
    for ridge in ridges:
        theta = theta0.astype(np.float64).copy()
        for k in range(theta0.shape[0]):
            train = (phase == k) & ~is_test
            if train.sum() > x.shape[1]:
                theta[k] = _solve(xc[train], yc[train], theta0[k], ridge)
        gains = np.concatenate([
            pick_gain(group[(phase == k) & is_test], x[(phase == k) & is_test], y[(phase == k) & is_test],
                      theta[k], theta0[k])
            for k in range(theta0.shape[0]) if ((phase == k) & is_test).any()])
        if gains.mean() > best[0]:
            best = (gains.mean(), ridge, gains)
    gain, ridge, gains = best
    theta = theta0.astype(np.float64).copy()
    for k in range(theta0.shape[0]) if np.isfinite(ridge) else ():
        rows_k = phase == k
        if rows_k.sum() > x.shape[1]:
            theta[k] = _solve(xc[rows_k], yc[rows_k], theta0[k], ridge)
    report = FitReport(ridge=ridge, held_out_gain=float(gain), held_out_se=standard_error(gains),
                       rows=int(group.size), decisions=int(ids.size))
    return theta, report


def fit_returns(rows: dict[str, np.ndarray], theta0: np.ndarray, ridges: tuple[float, ...] = RIDGES,
                held_out: float = 0.25, seed: int = 0) -> tuple[np.ndarray, FitReport]:
    """The afterstate learner's fit: per phase, ``target ~ c + a * (features @ theta0[k]) +
    features @ delta`` over one row per decision (the played candidate and the points scored from
    it on; ``return_games`` of a game module), least squares with a ridge on the standardised
    ``delta``. The intercept ``c`` is dropped (it ranks no candidate). The ridge is chosen by the
    held-out decisions' squared error; the report's ``held_out_gain`` is the fall in held-out mean
    squared error against the fit on ``theta0`` alone (``a`` and ``c``), with its standard error."""
    group, phase = rows["group"], rows["phase"]
    x = rows["features"].astype(np.float64)
    y = rows["target"].astype(np.float64)
    rng = np.random.default_rng(seed)
    is_test = rng.random(group.size) < held_out
    theta0 = theta0.astype(np.float64)

    def fitted(train: np.ndarray, ridge: float) -> tuple[np.ndarray, np.ndarray]:
        """Weights (drop-in for theta) and per-phase intercepts fitted on the rows ``train``."""
        theta, intercept = theta0.copy(), np.zeros(theta0.shape[0])
        for k in range(theta0.shape[0]):
            rows_k = train & (phase == k)
            if rows_k.sum() <= x.shape[1]:
                continue
            xm, ym = x[rows_k].mean(axis=0), y[rows_k].mean()
            if np.isinf(ridge):  # theta0's direction only: a scale and an intercept
                v = (x[rows_k] - xm) @ theta0[k]
                theta[k] = theta0[k] * (v @ (y[rows_k] - ym) / max(v @ v, 1e-12))
            else:
                theta[k] = _solve(x[rows_k] - xm, y[rows_k] - ym, theta0[k], ridge)
            intercept[k] = ym - xm @ theta[k]
        return theta, intercept

    def errors(theta: np.ndarray, intercept: np.ndarray) -> np.ndarray:
        test = np.flatnonzero(is_test)
        predicted = np.einsum("ij,ij->i", x[test], theta[phase[test]]) + intercept[phase[test]]
        return (y[test] - predicted) ** 2

    base = errors(*fitted(~is_test, np.inf))
    best = (np.inf, base.mean(), np.zeros_like(base))
    for ridge in ridges:
        err = errors(*fitted(~is_test, ridge))
        if err.mean() < best[1]:
            best = (ridge, err.mean(), base - err)
    ridge, _, gains = best
    theta, _ = fitted(np.ones(group.size, bool), ridge)
    se = standard_error(gains)
    report = FitReport(ridge=ridge, held_out_gain=float(gains.mean()) if gains.size else 0.0, held_out_se=se,
                       rows=int(group.size), decisions=int(np.unique(group).size))
    return theta, report


@dataclass(frozen=True)
class TableReport:
    """What a pattern table's fit found: the epochs run and the best one, and the best's held-out gain
    per decision over the linear model alone (mean target of the chosen candidate) with its standard error."""

    epochs: int
    best_epoch: int
    held_out_gain: float
    held_out_se: float


def fit_pattern_table(rows: dict[str, np.ndarray], theta: np.ndarray, shape: tuple[int, ...],
                      epoch: Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], object],
                      deltas: Callable[[np.ndarray, np.ndarray], np.ndarray], epochs: int,
                      held_out: float = 0.25, seed: int = 0) -> tuple[np.ndarray, TableReport]:
    """The loop both games' pattern tables are fitted by: a table of ``shape`` fitted to the labelled
    rows' targets minus the linear model ``theta``'s values (rows of a decision contiguous), by
    ``epochs`` calls of ``epoch(table, residual, starts, order)`` (one shuffled pass over the training
    decisions ``order``, rows ``starts[g]:starts[g + 1]``) over all but a held-out share of the
    decisions. ``deltas(table, rows_index)`` is the table's value change of those rows. Keeps the epoch
    whose table gains most on the held-out decisions over ``theta`` alone; a table with no rows when
    none gains."""
    group = rows["group"]
    y = rows["target"].astype(np.float64)
    phases = rows["phase"].astype(np.int64)
    linear = np.einsum("ij,ij->i", rows["features"].astype(np.float64), theta[phases])
    starts = np.r_[np.flatnonzero(np.r_[True, group[1:] != group[:-1]]), group.size].astype(np.int64)
    decisions = starts.size - 1
    rng = np.random.default_rng(seed)
    shuffled = rng.permutation(decisions)
    test = np.sort(shuffled[:max(1, int(held_out * decisions))])
    train = shuffled[test.size:]
    table = np.zeros(shape)
    held = np.concatenate([np.arange(starts[g], starts[g + 1]) for g in test])  # the held-out rows
    best = (0.0, 0.0, -1, np.zeros((0, *shape[1:])))
    for e in range(epochs):
        epoch(table, y - linear, starts, rng.permutation(train).astype(np.int64))
        fitted = linear[held] + deltas(table, held)
        gains = value_pick_gain(group[held], y[held], fitted, linear[held])
        if gains.mean() > best[0]:
            best = (float(gains.mean()), standard_error(gains), e, table.copy())
    gain, se, kept_epoch, kept = best
    return kept, TableReport(epochs=epochs, best_epoch=kept_epoch, held_out_gain=gain, held_out_se=se)
