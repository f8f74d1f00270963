"""The no-peeking harness: an agent's decision must not depend on the real hidden future.

``twin_states(game, state, rng)`` gives the real state and a twin that differs only in the hidden
future (the twin is a determinization of the real one: same public information, another deck
order). ``decisions_on_twins`` runs fresh agents on both with the same rng, with the game's
``determinize`` patched so that both calls see the *same* resampled future (determinization of
the first twin): an agent that only learns the future through ``determinize`` then decides
identically, and one that reads the real future in any other way (steps the real state, reads
its deck, copies it for rollouts) does not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from envs.core.game import Game, State


def twin_states(game: Game, state: State, rng: np.random.Generator) -> tuple[State, State]:
    """``state`` and a copy whose hidden future is resampled (public information unchanged)."""
    return state.copy(), game.determinize(state, rng)


def decisions_on_twins(game: Game, make: Callable[[], Any], first: State, second: State,
                       seed: int) -> tuple[tuple[int, Any], tuple[int, Any]]:
    """(action, last_stats) of a fresh agent on each twin, with the same rng and the same
    determinizations."""
    real_determinize = game.determinize
    anchor = first.copy()

    def same_futures(state: State, rng: np.random.Generator) -> State:
        return real_determinize(anchor, rng)

    results = []
    try:
        game.determinize = same_futures  # type: ignore[method-assign]
        for twin in (first, second):
            agent = make()
            mask = game.legal_mask(twin)
            action = agent.act(twin.copy(), mask.copy(), np.random.default_rng(seed))
            results.append((int(action), _comparable(getattr(agent, "last_stats", None))))
    finally:
        del game.determinize
    return results[0], results[1]


def _comparable(stats: Any) -> Any:
    if not isinstance(stats, dict):
        return stats
    return {k: v for k, v in stats.items() if k not in ("seconds", "sims_per_s")}
