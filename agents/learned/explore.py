"""The exploration of the afterstate learner's self-play (``return_games`` of the candidate modules)."""

from __future__ import annotations

import numpy as np

from envs.core.errors import ConfigError


def check_exploration(explore: float, width: int) -> None:
    """ConfigError unless ``explore`` is a probability and ``width`` at least 1."""
    if not 0.0 <= explore <= 1.0 or width < 1:
        raise ConfigError(f"return_games needs 0 <= explore <= 1 and width >= 1, got {explore}, {width}")


def explore_pick(values: np.ndarray, best: int, rng: np.random.Generator, explore: float, width: int) -> int:
    """``best``, or with probability ``explore`` a candidate drawn uniformly from the top ``width``
    by ``values`` (stable order: the same draws give the same pick on any machine)."""
    if explore > 0.0 and rng.random() < explore:
        top = np.argsort(-values, kind="stable")[:width]
        return int(top[rng.integers(top.size)])
    return best
