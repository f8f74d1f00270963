"""A check shared by the tests of the searches' ``rollout_width`` option."""

from __future__ import annotations

import numpy as np

from agents.base import make_agent


def check_rollout_width(game, states, spec: str, width: int, seed: int) -> None:
    """The search ``spec`` (``rollout=learned``) with ``rollout_width=width`` plays the same moves and
    playout means twice on ``states``, legal moves, and other playout means than ``spec`` without it."""
    runs = []
    for one in (f"{spec},rollout_width={width}", f"{spec},rollout_width={width}", spec):
        agents = [make_agent(one, game) for _ in states]
        runs.append([(a.act(st, game.legal_mask(st), np.random.default_rng(seed)), a.last_stats["best_mean"])
                     for a, st in zip(agents, states, strict=True)])
    assert runs[0] == runs[1]
    assert all(game.legal_mask(st)[a] for st, (a, _) in zip(states, runs[0], strict=True))
    assert [m for _, m in runs[0]] != [m for _, m in runs[2]]  # the narrower model plays other playouts
