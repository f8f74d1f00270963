"""The value of a Cartographers map at a season's end, for playouts cut short (``horizon=``).

A playout of the flat search (agents/mcts_cartographers_flat.py) that stops when a season begins
values the seasons still to come either as if each were scored on today's map
(:func:`unscored_seasons`, ``leaf=now``) or with a linear model fitted to greedy games
(``leaf=fit``): the points that the greedy policy went on to score from that season's end,
regressed on what the map shows there.
Features (one vector per remaining season count), for the season ``m`` just scored (0-2):

* for each season still to come, at distance ``g = 1..3-m``, the two edicts it scores, each valued
  on today's map, summed per (distance, card): 48 features, so each card gets its own growth;
* coins held and the monster penalty, each times the seasons left; empty cells; a constant.

:func:`fit_leaf_model` plays the games and fits one coefficient row per ``m`` (least squares);
``python -m agents.cartographers_leaf`` refits and writes :data:`MODEL_PATH`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from numba import njit

from envs.cartographers.kernels import (
    M_PHASE,
    M_SEASON,
    PHASE_OVER,
    SCRATCH,
    monster_penalty,
    score_card_into,
)

N_CARDS = 16
N_FEATURES = 3 * N_CARDS + 4
MODEL_PATH = Path(__file__).resolve().parent.parent / "models" / "cartographers_leaf.json"


@njit(cache=True)
def unscored_seasons(st, tb, p: int) -> float:
    """Seat ``p``'s points from the seasons not yet scored, as if each were scored on today's map:
    its two edicts, the coins held and the monster penalty (0 once the game is over)."""
    meta = st[6]
    if meta[M_PHASE] == PHASE_OVER:
        return 0.0
    grid, coins, edicts, seasons = st[0][p], st[1], st[5], tb[3]
    scratch = np.empty(SCRATCH, np.int32)
    monsters = monster_penalty(grid)
    points = 0.0
    for s in range(meta[M_SEASON], 4):
        points += score_card_into(edicts[seasons[s, 1]], grid, tb[0], scratch)
        points += score_card_into(edicts[seasons[s, 2]], grid, tb[0], scratch) + coins[p] - monsters
    return points


@njit(cache=True)
def leaf_features(st, tb, p: int, out: np.ndarray) -> int:
    """Write seat ``p``'s features (float64[N_FEATURES]) at the start of a season into ``out``
    and return the index of the season just scored (0-2); -1 (``out`` untouched) when the game
    is over or no season has been scored yet."""
    meta = st[6]
    m = meta[M_SEASON] - 1
    if meta[M_PHASE] == PHASE_OVER or m < 0:
        return -1
    grid, edicts, seasons = st[0][p], st[5], tb[3]
    scratch = np.empty(SCRATCH, np.int32)
    out[:] = 0.0
    for s in range(m + 1, 4):
        g = s - m - 1
        for slot in range(1, 3):
            card = edicts[seasons[s, slot]]
            out[g * N_CARDS + card] += score_card_into(card, grid, tb[0], scratch)
    left = 3 - m
    out[3 * N_CARDS] = st[1][p] * left
    out[3 * N_CARDS + 1] = monster_penalty(grid) * left
    empty = 0
    for c in range(grid.shape[0]):
        if grid[c] == 0:
            empty += 1
    out[3 * N_CARDS + 2] = empty
    out[3 * N_CARDS + 3] = 1.0
    return m


@njit(cache=True)
def leaf_value(st, tb, p: int, coef: np.ndarray, features: np.ndarray) -> float:
    """The model's points still to come for seat ``p`` (``coef``: float64[3, N_FEATURES]); 0 when
    the game is over."""
    m = leaf_features(st, tb, p, features)
    if m < 0:
        return 0.0
    value = 0.0
    for i in range(N_FEATURES):
        value += coef[m, i] * features[i]
    return value


def _season_samples(game, seeds: range) -> tuple[list[list[np.ndarray]], list[list[float]]]:
    """Features at each season end of greedy solo games and the points scored after it."""
    from agents.greedy import cartographers_kernels as G
    from envs.cartographers import kernels as K

    tb = game.tb
    buf = np.empty((4096, 2), np.int32)
    actions = np.empty(G.MAX_CANDIDATES, np.int64)
    values = np.empty(G.MAX_CANDIDATES)
    xs: list[list[np.ndarray]] = [[], [], []]
    ys: list[list[float]] = [[], [], []]
    for seed in seeds:
        st = game.new_game(seed).arrays()
        found: list[tuple[int, np.ndarray, float]] = []
        while st[6][K.M_PHASE] != K.PHASE_OVER:
            season = st[6][K.M_SEASON]
            K.step(st, tb, G.greedy_action(st, tb, G.DEFAULT_WEIGHTS, buf, actions, values))
            if st[6][K.M_SEASON] != season:
                features = np.zeros(N_FEATURES)
                m = leaf_features(st, tb, 0, features)
                if m >= 0:
                    found.append((m, features, float(K.totals(st[8])[0])))
        final = float(K.totals(st[8])[0])
        for m, features, so_far in found:
            xs[m].append(features)
            ys[m].append(final - so_far)
    return xs, ys


def fit_leaf_model(seeds: range, check: range | None = None) -> dict:
    """Fit the leaf model on greedy solo games from ``seeds``; with ``check``, report each row's
    R² on those held-out games. Returns the JSON-ready model."""
    from envs.core.registry import make_game

    game = make_game("cartographers")
    xs, ys = _season_samples(game, seeds)
    coef = np.zeros((3, N_FEATURES))
    for m in range(3):
        coef[m], *_ = np.linalg.lstsq(np.array(xs[m]), np.array(ys[m]), rcond=None)
    model = {"about": "agents/cartographers_leaf.py: points to come after season m's end, greedy play",
             "seeds": [seeds.start, seeds.stop - 1], "coef": coef.round(6).tolist()}
    if check is not None:
        cx, cy = _season_samples(game, check)
        r2 = []
        for m in range(3):
            x, y = np.array(cx[m]), np.array(cy[m])
            r2.append(round(float(1.0 - ((y - x @ coef[m]) ** 2).mean() / y.var()), 4))
        model["check_seeds"] = [check.start, check.stop - 1]
        model["check_r2"] = r2
    return model


def load_leaf_model(path: Path = MODEL_PATH) -> np.ndarray:
    """The fitted coefficients (float64[3, N_FEATURES]) from ``path``, with a clear error when the
    file is missing or malformed."""
    from envs.core.errors import ConfigError

    try:
        coef = np.array(json.loads(Path(path).read_text())["coef"], dtype=np.float64)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"cartographers leaf model {path}: cannot read it ({exc}); refit with "
                          "`python -m agents.cartographers_leaf`") from exc
    if coef.shape != (3, N_FEATURES) or not np.all(np.isfinite(coef)):
        raise ConfigError(f"cartographers leaf model {path}: expected 3 x {N_FEATURES} finite "
                          f"coefficients, got shape {coef.shape}")
    return coef


if __name__ == "__main__":
    fitted = fit_leaf_model(range(100_000, 120_000), check=range(200_000, 202_000))
    MODEL_PATH.write_text(json.dumps(fitted) + "\n")
    print(f"wrote {MODEL_PATH}; held-out R² per season end: {fitted['check_r2']}")
