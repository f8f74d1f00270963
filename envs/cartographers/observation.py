"""Cartographers' observation: what one seat sees, as one float32 vector (layout in
:mod:`envs.cartographers.layout`), filled by the compiled ``kernels.observation_into``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from envs.cartographers import kernels as K

if TYPE_CHECKING:
    from envs.cartographers.game import CartographersGame, CartographersState


def observation_vector(game: CartographersGame, state: CartographersState, player: int) -> np.ndarray:
    """float32[OBS_SIZE] (2152): own map one-hot (8 x 121), printed ruins (121), the map being
    drawn on in an ambush (8 x 121, zeros otherwise), current card one-hot (17), season
    one-hot (4) + time/8 + threshold/8 + active edicts (4), coins/14, ruins pending, phase
    explore/ambush, and the scoring card of each edict A-D one-hot (4 x 16)."""
    out = np.zeros(K.OBS_SIZE, dtype=np.float32)
    K.observation_into(state.arrays(), game.tb, int(player), out)
    return out
