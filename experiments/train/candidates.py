"""PPO over the candidate env (``env.action_space: candidates``): the env creator the runners
call, the candidate network's starting ``theta`` and the network a policy file is written from."""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.learned.agent import resolve_model_path
from agents.learned.model import load_model
from envs.core.candidate_env import make_env
from envs.core.errors import ConfigError
from envs.core.policies import candidate_view


def candidate_env_config(config: dict[str, Any]) -> dict[str, Any]:
    """The runners' ``env_config``: game options, reward, candidate settings and (multiplayer) the
    agent of the other seats (``env.opponent``, default greedy)."""
    env = config["env"]
    out = {**config["game_options"], "reward": env["reward"], "action_space": "candidates",
           "max_candidates": env["max_candidates"]}
    if int(config["game_options"].get("players", 1)) > 1:
        out["opponent"] = env["opponent"] or "greedy"
    return out


def make_candidate_env(env_class: type, env_config: dict[str, Any]) -> Any:
    """The single-agent candidate env of ``env_class`` (an RLlib env creator, bound with partial)."""
    return make_env(dict(env_config), env_class=f"{env_class.__module__}:{env_class.__name__}")


def initial_theta(config: dict[str, Any]) -> np.ndarray:
    """The starting ``theta`` of ``network.init``: the view's greedy weights, or a learned model's
    ``model.json`` (checked: the same game and shape; any problem is one ConfigError)."""
    game, init = config["game"], config["network"]["init"]
    greedy = candidate_view(game).greedy_theta
    if init == "greedy":
        return np.asarray(greedy, dtype=np.float64)
    try:
        model = load_model(resolve_model_path(init))
    except ConfigError as exc:
        raise ConfigError(f"network.init: {exc}") from None
    if model["game"] != game:
        raise ConfigError(f"network.init {init!r} is a {model['game']} model, not {game}")
    theta = model["theta"]
    if theta.shape != greedy.shape:
        raise ConfigError(f"network.init {init!r}: theta is {theta.shape[0]} x {theta.shape[1]}, "
                          f"the {game} candidates need {greedy.shape[0]} x {greedy.shape[1]}")
    return theta


def candidate_network(config: dict[str, Any]) -> Any:
    """An untrained candidate network of the config's sizes (weights come from a state dict)."""
    from agents.ppo.candidate_network import CandidateNetConfig, CandidateScoringNet

    view = candidate_view(config["game"])
    net = {k: v for k, v in config["network"].items() if k != "type"}
    return CandidateScoringNet(len(view.feature_names), len(view.context_names), view.n_phases,
                               CandidateNetConfig.from_dict(net))


def max_candidates(config: dict[str, Any]) -> int:
    """K, the candidate rows per decision of the config's env."""
    return int(config["env"]["max_candidates"] or candidate_view(config["game"]).max_candidates)
