"""Reward options of the training envs: what a seat is paid for.

``reward`` is one of:

* ``"score"`` (default): the seat's own score change; an episode's rewards add up to its final score
  less its score at the start.
* ``"margin"``: its own score change minus the mean score change of the other seats over the same
  interval; an episode's rewards add up to its final score minus the others' mean final score.
  Solo: the same as ``"score"``.
* ``"win"``: 0 until the game ends, then a rank reward (:func:`rank_rewards`): +1 first, -1 last,
  linear in between; seats tied on their total share the mean of the places they tie for (the
  games' own tie-breakers are not applied). Solo: the sign of the game's solo evaluation where it
  has one (Cartographers: final score minus the scoring cards' threshold, so +1 above it, -1 below,
  0 on it); games without one (Cascadia, Dorfromantik) pay 0.

Score and margin are differences of a per-seat *value* (:func:`seat_value`), so whatever way the
env splits an episode into steps the rewards telescope to the value at the end.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envs.core.errors import ConfigError

REWARD_MODES = ("score", "margin", "win")


def check_reward_mode(mode: Any) -> str:
    """Validate a ``reward`` option."""
    if not isinstance(mode, str) or mode not in REWARD_MODES:
        raise ConfigError(f"reward must be one of {REWARD_MODES}, got {mode!r}")
    return mode


def seat_value(mode: str, totals: np.ndarray, seat: int) -> float:
    """The value whose change is ``seat``'s reward: its total (score), its total minus the others'
    mean (margin), or 0 (win: paid only at the end, see :func:`terminal_rewards`)."""
    if mode == "win":
        return 0.0
    own = float(totals[seat])
    if mode == "margin" and totals.shape[0] > 1:
        return own - float((totals.sum() - totals[seat]) / (totals.shape[0] - 1))
    return own


def rank_rewards(totals: np.ndarray) -> np.ndarray:
    """Per seat: +1 for first place, -1 for last, linear between; tied seats share the mean of the
    places they occupy (so the rewards of a table sum to 0). Needs two or more seats."""
    totals = np.asarray(totals, dtype=np.float64)
    n = totals.shape[0]
    if n < 2:
        raise ValueError("rank rewards need at least two seats")
    better = (totals[None, :] > totals[:, None]).sum(axis=1)
    tied = (totals[None, :] == totals[:, None]).sum(axis=1)
    # mean of places better .. better + tied - 1, each worth 1 - 2 * place / (n - 1)
    return 1.0 - (2.0 * better + tied - 1.0) / (n - 1)


def terminal_rewards(game: Any, state: Any) -> np.ndarray:
    """The ``win`` rewards of a finished game, per seat (see the module docstring for solo)."""
    totals = np.asarray(game.returns(state), dtype=np.float64)
    if totals.shape[0] > 1:
        return rank_rewards(totals)
    evaluation = getattr(game, "evaluation", None)
    if evaluation is None:
        return np.zeros(1, dtype=np.float64)
    return np.array([float(np.sign(evaluation(state)))], dtype=np.float64)
