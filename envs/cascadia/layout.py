"""Cascadia's observation and action layout (see :mod:`envs.core.layout`).

The board window holds every axial (q, r) within :data:`~envs.cascadia.data.RADIUS` of the
starter keystone; cell ``c`` (``data.CELL_COORDS[c] = (q, r)``) sits at grid position
``h = r + RADIUS, w = q + RADIUS`` of a 45 x 45 grid, the corners outside the hexagon being
padding. Cascadia's directions NE, E, SE, SW, W, NW (axial offsets (1, -1), (1, 0), (0, 1), (-1, 1),
(-1, 0), (0, -1)) become grid offsets (-1, +1), (0, +1), (+1, 0), (+1, -1), (0, -1), (-1, 0): the
six unmasked neighbours of ``HEX_KERNEL_MASK``.

Observation (``observation.observation_vector``): cell major, ``c * CELL_FEATURES + f`` for the 24
features of a cell, then ``GLOBAL_FEATURES`` market/hand/bag/turn/other-seat features.
Actions (``kernels`` codec): ``A_TILE + 6 c + k`` is channel ``k`` (tile rotation 0..5) at cell
``c``, ``A_TOKEN + c`` is channel 6 (put the token); the market actions ``0..A_TILE-1`` and
``A_RETURN`` are non-spatial. The layout is the same for 1-4 players.
"""

from __future__ import annotations

import numpy as np

from envs.cascadia import kernels as K
from envs.cascadia.data import CELL_COORDS, DIRECTION_NAMES, HABITATS, NUM_CELLS, RADIUS, WILDLIFE
from envs.cascadia.observation import CELL_FEATURES, GLOBAL_FEATURES
from envs.core.layout import ActionLayout, GameLayout, ObservationLayout

SIDE = 2 * RADIUS + 1


def cell_grid_positions() -> tuple[np.ndarray, np.ndarray]:
    """(h, w) grid position of every window cell, each int64 (NUM_CELLS,)."""
    return (CELL_COORDS[:, 1].astype(np.int64) + RADIUS, CELL_COORDS[:, 0].astype(np.int64) + RADIUS)


def _cell_plane_names() -> tuple[str, ...]:
    return (("occupied",) + tuple(f"habitat_{h}" for h in HABITATS)
            + tuple(f"edge_{d}" for d in DIRECTION_NAMES) + tuple(f"token_{w}" for w in WILDLIFE)
            + tuple(f"allows_{w}" for w in WILDLIFE) + ("keystone", "frontier"))


def _nonspatial_names() -> tuple[str, ...]:
    names = tuple(f"pair_{i}" for i in range(4))
    names += tuple(f"nature_pair_tile{i}_token{j}" for i in range(4) for j in range(4))
    names += tuple(f"nature_redraw_{s}" for s in range(1, 16)) + ("three_redraw", "return_token")
    return names


def cascadia_layout() -> GameLayout:
    """The layout of every Cascadia observation and action."""
    h, w = cell_grid_positions()
    cells = np.arange(NUM_CELLS, dtype=np.int64)
    plane_index = np.full((CELL_FEATURES, SIDE, SIDE), -1, dtype=np.int64)
    plane_index[:, h, w] = (cells[:, None] * CELL_FEATURES + np.arange(CELL_FEATURES)).T
    board = NUM_CELLS * CELL_FEATURES
    observation = ObservationLayout(
        size=board + GLOBAL_FEATURES,
        plane_index=plane_index,
        vector_index=np.arange(board, board + GLOBAL_FEATURES, dtype=np.int64),
        hex_grid=True,
        plane_names=_cell_plane_names(),
    )
    spatial = np.full((7, SIDE, SIDE), -1, dtype=np.int64)
    spatial[:6, h, w] = (K.A_TILE + 6 * cells[:, None] + np.arange(6)).T
    spatial[6, h, w] = K.A_TOKEN + cells
    action = ActionLayout(
        num_actions=K.NUM_ACTIONS,
        spatial_index=spatial,
        nonspatial=np.append(np.arange(K.A_TILE, dtype=np.int64), K.A_RETURN),
        channel_names=tuple(f"tile_rotation_{k}" for k in range(6)) + ("token",),
        nonspatial_names=_nonspatial_names(),
    )
    return GameLayout(observation, action)
