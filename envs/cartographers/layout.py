"""Cartographers' observation and action layout (see :mod:`envs.core.layout`).

The map is an 11 x 11 square grid. Observation (``K.observation_into``): 17 board planes, plane
major (``plane * 121 + cell``): own map terrain one-hot (8), printed ruins (1), the map being drawn
on in an ambush (8); then 95 vector features (card, season, time, coins, phase, edict cards).
Actions are all spatial: ``base + channel * 121 + cell`` for 80 placement channels (terrain
option x shape option x orientation), 5 fallback terrains, 8 ambush orientations and the
ambush 1x1, so ``spatial_index`` is simply ``arange(11374)`` in (94, 11, 11).
"""

from __future__ import annotations

import numpy as np

from envs.cartographers import kernels as K
from envs.core.layout import ActionLayout, GameLayout, ObservationLayout

SIDE = 11
BOARD_PLANES = 17
TERRAINS = ("empty", "forest", "village", "farm", "water", "monster", "mountain", "wasteland")


def cartographers_layout() -> GameLayout:
    """The layout of every Cartographers observation and action (the same for 1-6 players)."""
    n_board = BOARD_PLANES * K.N_CELLS
    plane_names = tuple(f"own_{t}" for t in TERRAINS) + ("ruins",) + tuple(f"ambush_{t}" for t in TERRAINS)
    observation = ObservationLayout(
        size=K.OBS_SIZE,
        plane_index=np.arange(n_board, dtype=np.int64).reshape(BOARD_PLANES, SIDE, SIDE),
        vector_index=np.arange(n_board, K.OBS_SIZE, dtype=np.int64),
        hex_grid=False,
        plane_names=plane_names,
    )
    channels = K.NUM_ACTIONS // K.N_CELLS
    names = tuple(f"place_t{t}_k{k}_o{o}" for t in range(K.N_TERRAIN_OPTIONS)
                  for k in range(K.N_SHAPE_OPTIONS) for o in range(K.N_ORIENT))
    names += tuple(f"fallback_{t}" for t in ("forest", "village", "farm", "water", "monster"))
    names += tuple(f"ambush_o{o}" for o in range(K.N_ORIENT)) + ("ambush_1x1",)
    action = ActionLayout(
        num_actions=K.NUM_ACTIONS,
        spatial_index=np.arange(K.NUM_ACTIONS, dtype=np.int64).reshape(channels, SIDE, SIDE),
        nonspatial=np.zeros(0, dtype=np.int64),
        channel_names=names,
    )
    return GameLayout(observation, action)
