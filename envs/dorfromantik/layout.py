"""Dorfromantik's observation and action layout (see :mod:`envs.core.layout`).

Both the observation planes and the action codec live in the action window of
``side = 2 * window_radius + 1`` cells a side, which follows the board: window position
``(wr, wq) = (r - cr + W, q - cq + W)`` around the window centre (cq, cr). The grid is that window
with ``h = wr, w = wq``; the game's directions E, NE, NW, W, SW, SE (``hexgrid.HEX_DIRECTIONS``, axial
(1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1)) become grid offsets (0, +1), (-1, +1), (-1, 0),
(0, -1), (+1, -1), (+1, 0): the six unmasked neighbours of ``HEX_KERNEL_MASK``. No grid cell is
padding (the window is a rhombus).

Observation (``DorfromantikGame.observation``): ``PLANES`` planes, plane major
(``plane * side * side + wr * side + wq``), then ``VECTOR_SIZE`` features. Actions:
``(wr * side + wq) * 6 + rot``, channel ``rot`` (clockwise rotation 0..5) at (wr, wq); none is
non-spatial.
"""

from __future__ import annotations

import numpy as np

from envs.core.layout import ActionLayout, GameLayout, ObservationLayout
from envs.dorfromantik.data import DIRECTION_NAMES, TERRAIN_NAMES

#: observation planes per window cell
PLANES = 34
#: length of the non-spatial part of the observation
VECTOR_SIZE = 74


def _plane_names() -> tuple[str, ...]:
    edges = tuple(f"edge_{d}_{t}" for d in DIRECTION_NAMES for t in TERRAIN_NAMES[1:])
    return ("occupied",) + edges + ("legal", "open_task_missing", "flag")


def dorfromantik_layout(window_radius: int) -> GameLayout:
    """The layout of the observation and actions of a game with ``window_radius``."""
    side = 2 * window_radius + 1
    board = PLANES * side * side
    observation = ObservationLayout(
        size=board + VECTOR_SIZE,
        plane_index=np.arange(board, dtype=np.int64).reshape(PLANES, side, side),
        vector_index=np.arange(board, board + VECTOR_SIZE, dtype=np.int64),
        hex_grid=True,
        plane_names=_plane_names(),
    )
    num_actions = side * side * 6
    action = ActionLayout(
        num_actions=num_actions,
        spatial_index=np.arange(num_actions, dtype=np.int64).reshape(side, side, 6).transpose(2, 0, 1).copy(),
        nonspatial=np.zeros(0, dtype=np.int64),
        channel_names=tuple(f"rotation_{k}" for k in range(6)),
    )
    return GameLayout(observation, action)
