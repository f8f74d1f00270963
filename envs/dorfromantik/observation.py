"""Dorfromantik's observation: board planes in the action window, then a vector of the drawn tile,
open tasks, stacks and score (layout in :mod:`envs.dorfromantik.layout`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from envs.dorfromantik import kernels as K
from envs.dorfromantik.data import TASK_TYPES
from envs.dorfromantik.layout import PLANES, VECTOR_SIZE

if TYPE_CHECKING:
    from envs.dorfromantik.game import DorfromantikGame, DorfState


def observation_vector(game: DorfromantikGame, state: DorfState, player: int) -> np.ndarray:
    """Board planes in the action window, then the drawn tile, open tasks, stacks and score.

    Planes (each side x side, window order): 0 occupied; 1 + 5*d + (t-1): the edge toward direction
    d has terrain t (forest, field, village, rail, river); 31 a legal position for the drawn tile;
    32 an open task tile (value: tiles still missing / 6); 33 a flag tile. Vector: drawn tile edges
    one-hot (6 directions x 6 terrains, rotation 0), is-task, task type one-hot, target / 6; three
    open-task slots (type one-hot, target / 6, size / 6, open edges / 12); landscape left / 45, task
    tiles left / 25, tiles placed / 70; score categories / 50. The same for every seat.
    """
    side = game.side
    out = np.empty(PLANES * side * side + VECTOR_SIZE, np.float32)
    planes = out[:PLANES * side * side].reshape(PLANES, side, side)
    vec = out[PLANES * side * side:]
    vec[:] = 0.0
    cq, cr = game.window_centre(state)
    K.board_planes(state.placed, state.uf, state.tasks, state.meta, game._rot_edges, game._flag,
                   cq, cr, game.window_radius, planes)
    planes[31] = game.legal_mask(state).reshape(side, side, 6).any(axis=2)
    open_tasks = game.open_tasks(state)
    tile = int(state.meta[K.M_DRAWN])
    if tile >= 0:
        for d in range(6):
            vec[d * 6 + int(game._rot_edges[tile, 0, d])] = 1.0
        terr = int(game._task_type[tile])
        if terr:
            vec[36] = 1.0
            vec[36 + terr] = 1.0
            vec[42] = state.meta[K.M_MARKER] / 6.0
    for i, task in enumerate(open_tasks[:3]):
        base = 43 + 8 * i
        vec[base + TASK_TYPES.index(task["type"])] = 1.0
        vec[base + 5] = task["target"] / 6.0
        vec[base + 6] = task["size"] / 6.0
        vec[base + 7] = task["open_edges"] / 12.0
    counts = game.stack_counts(state)
    vec[67] = counts["landscape"] / 45.0
    vec[68] = counts["task"] / 25.0
    vec[69] = state.meta[K.M_PLACED] / 70.0
    b = game.breakdown(state)
    vec[70:74] = np.array([b["tasks"], b["flags"], b["longest_rail"], b["longest_river"]]) / 50.0
    return out
