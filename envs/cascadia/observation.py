"""Cascadia's observation: what a seat sees, as one float32 vector (layout in :mod:`envs.cascadia.layout`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from envs.cascadia import kernels as K
from envs.cascadia.data import NUM_CELLS

if TYPE_CHECKING:
    from envs.cascadia.game import CascadiaGame, CascadiaState

#: features of one board-window cell, of one other seat, and of the non-board part
CELL_FEATURES = 24
OTHER_FEATURES = 12
GLOBAL_FEATURES = 44 + 20 + 16 + 5 + 2 + 4 + 4 + 1 + 1 + 3 * OTHER_FEATURES


def kind_features(game: CascadiaGame) -> np.ndarray:
    """Per kind: habitats shown (5), animals allowed (5), keystone (1)."""
    table = np.zeros((game.kind_info.shape[0], 11), dtype=np.float32)
    for kind in range(table.shape[0]):
        for h in set(int(v) for v in game.kind_edges[kind, 0]):
            table[kind, h] = 1.0
        mask = int(game.kind_info[kind, 0])
        for w in range(5):
            table[kind, 5 + w] = float(mask >> w & 1)
        table[kind, 10] = float(game.kind_info[kind, 1] >= 0)
    return table


def _tile_features(game: CascadiaGame, kind: int, out: np.ndarray) -> None:
    if kind >= 0:
        if getattr(game, "_kind_features", None) is None:
            game._kind_features = kind_features(game)
        out[:] = game._kind_features[kind]


def observation_vector(game: CascadiaGame, state: CascadiaState, player: int) -> np.ndarray:
    """Board planes of ``player`` (24 per window cell) followed by market, bag and the others."""
    p = player
    planes = np.zeros((NUM_CELLS, CELL_FEATURES), dtype=np.float32)
    K.observation_planes(p, state.tiles, state.edges, state.tokens, state.front, state.cells, state.flist,
                         state.pinfo, game.kind_info, planes)
    g = np.zeros(GLOBAL_FEATURES, dtype=np.float32)
    for i in range(4):
        _tile_features(game, int(state.market[0, i]), g[11 * i:11 * i + 11])
        w = int(state.market[1, i])
        if w >= 0:
            g[44 + 5 * i + w] = 1.0
    _tile_features(game, int(state.ctl[K.C_HAND_TILE]), g[64:75])
    if state.ctl[K.C_HAND_TOKEN] >= 0:
        g[75 + int(state.ctl[K.C_HAND_TOKEN])] = 1.0
    g[80:85] = state.bag / 20.0
    g[85] = state.pinfo[p, K.P_NATURE] / 10.0
    g[86] = state.ctl[K.C_SUPPLY] / 25.0
    g[87 + min(int(state.ctl[K.C_PHASE]), 3)] = 1.0
    fresh = state.ctl[K.C_THREE_USED] == 0 and state.ctl[K.C_ACTED] == 0
    g[91] = float(fresh and K.three_of_a_kind(state.market) >= 0)
    g[92] = float(state.ctl[K.C_ACTED])
    g[93] = state.pinfo[p, K.P_TURNS] / 20.0
    g[94] = (state.ctl[K.C_STACK_LEN] - state.ctl[K.C_STACK_POS]) / 83.0
    g[95] = game.players / 4.0
    g[96] = float(int(state.ctl[K.C_CUR]) == p)
    table = game.score_table(state)
    base = 97
    for k in range(1, game.players):
        o = (p + k) % game.players
        row = g[base + OTHER_FEATURES * (k - 1): base + OTHER_FEATURES * k]
        row[0] = 1.0
        row[1] = state.pinfo[o, K.P_NATURE] / 10.0
        row[2:7] = table[o, K.CAT_CORRIDOR:K.CAT_CORRIDOR + 5] / 20.0
        row[7:12] = table[o, K.CAT_WILDLIFE:K.CAT_WILDLIFE + 5] / 30.0
    return np.concatenate([planes.ravel(), g])
