"""What the agents package offers the envs (see :mod:`envs.core.policies`): the agent builder for
opponent specs, the compiled greedy rollouts and the candidate views of the learned agents
(``action_space="candidates"``), registered on import of ``agents`` and through the
``meeplelab.plugins`` entry point. Game modules are imported on first use, so ``import agents``
stays light."""

from __future__ import annotations

import importlib
from functools import partial
from typing import Any

import numpy as np

from agents.base import make_agent
from envs.core import policies
from envs.core.candidates import CandidateView
from envs.core.game import Game, State

#: games whose greedy agent has a compiled playout: module with ``greedy_rollout(game, state, seed)``
GREEDY_ROLLOUTS = {"cartographers": "agents.greedy.cartographers", "cascadia": "agents.greedy.cascadia",
                   "dorfromantik": "agents.greedy.dorfromantik"}


#: games with a candidate view: the learned candidate module (contract: :mod:`agents.learned`)
CANDIDATE_MODULES = {"cartographers": "agents.learned.cartographers", "cascadia": "agents.learned.cascadia",
                     "dorfromantik": "agents.learned.dorfromantik"}
#: K, the candidates an env keeps per decision (the best by greedy value)
MAX_CANDIDATES = {"cartographers": 256, "cascadia": 256, "dorfromantik": 256}


def _cartographers_progress(game: Game, state: State) -> float:
    """Seasons done plus the current season's time over its threshold, over four."""
    if game.is_over(state):
        return 1.0
    season = state.season
    threshold = float(game.tb[3][season, 0])
    return (season + min(state.season_time / threshold, 1.0)) / 4.0


def _dorfromantik_progress(game: Game, state: State) -> float:
    """The fraction of the landscape stack drawn."""
    kernels = importlib.import_module("envs.dorfromantik.kernels")
    return min(float(state.meta[kernels.M_LAND_POS]) / kernels.NUM_LAND, 1.0)


def _cascadia_progress(game: Game, state: State) -> float:
    """The fraction of the tile stack drawn."""
    kernels = importlib.import_module("envs.cascadia.kernels")
    ctl = state.ctl
    return min(float(ctl[kernels.C_STACK_POS]) / max(float(ctl[kernels.C_STACK_LEN]), 1.0), 1.0)


PROGRESS = {"cartographers": _cartographers_progress, "cascadia": _cascadia_progress,
            "dorfromantik": _dorfromantik_progress}


def candidate_view(game_name: str) -> CandidateView:
    """The candidate view of ``game_name`` built from its learned module and default greedy preset
    (the ranking, and the agent of decisions without candidates such as Cartographers ambushes)."""
    module = importlib.import_module(CANDIDATE_MODULES[game_name])
    preset = module.DEFAULT_PRESET
    return CandidateView(candidates=module.candidates, feature_names=tuple(n for n, _ in module.FEATURES),
                         phase=module.phase, greedy_theta=np.asarray(module.greedy_theta(preset), np.float64),
                         progress=PROGRESS[game_name], fallback_spec=f"greedy:preset={preset}",
                         max_candidates=MAX_CANDIDATES[game_name],
                         play=getattr(module, "play_candidate", None))


def _greedy_rollout(module_name: str, **options: Any):
    def rollout(game: Any, state: Any, seed: int) -> Any:
        return importlib.import_module(module_name).greedy_rollout(game, state, seed, **options)
    return rollout


def register() -> None:
    """Register the agent builder, the greedy rollouts and the candidate views with the envs."""
    policies.register_agent_builder(make_agent)
    policies.register_rollout("cartographers", "greedy", _greedy_rollout(GREEDY_ROLLOUTS["cartographers"]))
    policies.register_rollout("cascadia", "greedy", _greedy_rollout(GREEDY_ROLLOUTS["cascadia"], epsilon=0.0))
    policies.register_rollout("dorfromantik", "greedy", _greedy_rollout(GREEDY_ROLLOUTS["dorfromantik"]))
    for game_name in CANDIDATE_MODULES:
        policies.register_candidate_view(game_name, partial(candidate_view, game_name))
